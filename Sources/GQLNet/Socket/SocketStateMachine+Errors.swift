import GQLCore

/// How ``SocketStateMachine`` reads the server's refusals and errors.
extension SocketStateMachine {
    /// Whether AppSync refused an operation's authorization.
    static func isUnauthorized(_ errors: [GQLValue]) -> Bool {
        errors.contains { $0["errorType"]?.stringValue == "UnauthorizedException" }
    }

    /// Whether a failure to open a socket is the server's final answer: a bad URL or header, or an upgrade refused
    /// with a 4xx status other than 408 (timeout) and 429 (too many requests).
    static func isPermanent(_ error: GQLError) -> Bool {
        if error.code == .invalidArgument { return true }
        guard let status = error.httpStatus, error.code == .unauthorized || error.code == .http else { return false }
        return (400..<500).contains(status) && status != 408 && status != 429
    }

    static func describe(_ payload: GQLValue) -> String {
        let errors = SocketCodec.errors(in: payload)
        let messages = errors.compactMap { error -> String? in
            let message = error["message"]?.stringValue
            let type = error["errorType"]?.stringValue
            switch (type, message) {
            case (let type?, let message?): return "\(type): \(message)"
            case (nil, let message?): return message
            case (let type?, nil): return type
            default: return nil
            }
        }
        return messages.isEmpty ? ((try? payload.jsonString()) ?? "no details") : messages.joined(separator: "; ")
    }
}

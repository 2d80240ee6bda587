import GQLCore
import HTTPTypes

/// A refusal in OneSignal's shape: today's API answers `{"errors": [{"code", "title"}]}`, v1's
/// `{"errors": ["…"]}`.
struct OneSignalError: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let title: String

    init(_ title: String, status: HTTPResponse.Status = .badRequest, code: String = "invalid_request") {
        self.status = status
        self.code = code
        self.title = title
    }

    /// The body for today's API, or v1's when `legacy`.
    func body(legacy: Bool) -> GQLValue {
        legacy
            ? ["errors": [.string(title)]]
            : ["errors": [["code": .string(code), "title": .string(title)]]]
    }

    static func forbidden(_ title: String) -> OneSignalError {
        OneSignalError(title, status: .forbidden, code: "forbidden")
    }
    static func unauthorized(_ title: String) -> OneSignalError {
        OneSignalError(title, status: .unauthorized, code: "unauthorized")
    }
    static func notFound(_ title: String, code: String = "not_found") -> OneSignalError {
        OneSignalError(title, status: .notFound, code: code)
    }
}

import GQLCore

/// Checks headers before they reach HTTP, so a bad one is refused with a message that quotes no value (values are
/// often credentials) instead of the transport's error, which quotes them.
enum HeaderCheck {
    /// - Throws: ``GQLError`` `.invalidArgument` for a name that is not an HTTP token (RFC 9110 §5.1) or a value
    ///   with a control character other than tab (§5.5).
    static func validate(_ headers: [String: String], operation: String? = nil) throws {
        for (name, value) in headers {
            guard isToken(name) else {
                throw GQLError(.invalidArgument, "a header name is not an HTTP token", operation: operation)
            }
            guard value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
                throw GQLError(
                    .invalidArgument,
                    "the value of the header '\(name)' has a control character, which HTTP does not allow",
                    operation: operation)
            }
        }
    }

    /// RFC 9110's token characters.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(HTTPToken.contains)
    }
}

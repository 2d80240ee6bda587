import GQLCore

/// Checks headers before they reach HTTP, so a bad one is refused with a message that quotes no value (values are
/// often credentials) instead of the transport's error, which quotes them.
package enum HeaderCheck {
    /// - Throws: ``GQLError`` `.invalidArgument` for a name that is not an HTTP token (RFC 9110 §5.1) or a value
    ///   with a control character other than tab (§5.5).
    package static func validate(_ headers: [String: String], operation: String? = nil) throws {
        for (name, value) in headers {
            guard isToken(name) else {
                throw GQLError(.invalidArgument, "a header name is not an HTTP token", operation: operation)
            }
            guard isFieldValue(value) else {
                throw GQLError(
                    .invalidArgument,
                    "the value of the header '\(name)' has a control character, which HTTP does not allow",
                    operation: operation)
            }
        }
    }

    /// Whether `value` can travel as a header value: no control character but tab (RFC 9110 §5.5), so no CR or LF
    /// that would end the header and start another.
    package static func isFieldValue(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }
    }

    /// RFC 9110's token characters.
    package static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(HTTPToken.contains)
    }
}

import Foundation

/// Text compared by its UTF-8 bytes: the key of a table or set that must tell apart texts `String` holds equal.
///
/// `String` compares and hashes by Unicode canonical equivalence, so `Note:é` written as U+00E9 and as `e` + U+0301
/// (COMBINING ACUTE ACCENT), or U+212B ANGSTROM SIGN and U+00C5, are one `String` key, while SQLite (`BINARY`), a
/// GraphQL document's string values and servers' ids tell them apart. GQLCache's record keys and compiled
/// operations and GQLDevServer's parsed-document cache are keyed by this type.
///
/// The comparison asks `String` first: text equal in bytes is canonically equivalent, so `String`'s `==` is a
/// necessary test. It is also a sufficient one when one side is ASCII and both have as many UTF-8 bytes: `String`
/// compares ASCII text by its bytes, and the only characters past ASCII canonically equivalent to ASCII are three
/// (U+037E, U+1FEF, U+212A), each to one ASCII character in two or three bytes, so text equivalent to ASCII text of
/// the same length is that text. Only the rest (canonically equivalent texts past ASCII) is compared byte by byte.
/// Hashing is `String`'s: equal bytes hash alike, and equivalent texts that differ in their bytes share a hash and
/// are told apart by `==`. An ASCII key costs about what a `String` key does (Docs/Performance.md, the session of
/// 2026-11-29).
package struct GQLExactText: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The text.
    package let text: String

    @inlinable
    package init(_ text: String) { self.text = text }

    @inlinable
    package init(stringLiteral text: String) { self.text = text }

    package var description: String { text }

    @inlinable
    package static func == (lhs: GQLExactText, rhs: GQLExactText) -> Bool {
        guard lhs.text == rhs.text else { return false }
        // ASCII (its UTF-8 and UTF-16 counts agree, both stored for ASCII text) and of the same length: equal bytes.
        let count = lhs.text.utf8.count
        if count == rhs.text.utf8.count, count == lhs.text.utf16.count { return true }
        return sameBytes(lhs.text, rhs.text)
    }

    @inlinable
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Whether `left` and `right` hold the same UTF-8 bytes.
    @usableFromInline
    static func sameBytes(_ left: String, _ right: String) -> Bool {
        let count = left.utf8.count
        guard count == right.utf8.count else { return false }
        let compared = left.utf8.withContiguousStorageIfAvailable { left in
            right.utf8.withContiguousStorageIfAvailable { right in
                guard let left = left.baseAddress, let right = right.baseAddress else { return true }  // both empty
                return memcmp(left, right, count) == 0
            }
        }
        // Text without contiguous UTF-8 (none on Linux, where every String is native): byte by byte.
        return (compared ?? nil) ?? left.utf8.elementsEqual(right.utf8)
    }
}

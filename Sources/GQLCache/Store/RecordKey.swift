import Foundation

/// A record's key (spelled as ``CacheKey`` says), compared and hashed by its UTF-8 bytes.
///
/// SQLite compares the table's keys by their bytes (`BINARY`), and servers tell ids apart by theirs: `Note:é`
/// written as U+00E9 and as `e` + U+0301 (COMBINING ACUTE ACCENT) are two objects and two rows. Swift's `String`
/// compares and hashes by canonical equivalence, which makes them one: as `String` keys, the memory layer, the
/// normalizer and the watchers merged the two objects, and what a read returned depended on whether it came from
/// memory or from SQLite. Every table and set of record keys in the cache holds this type instead.
///
/// The comparison asks `String` first: text equal in bytes is canonically equivalent, so `String`'s `==` is a
/// necessary test. It is also a sufficient one when one side is ASCII and both have as many UTF-8 bytes: `String`
/// compares ASCII text by its bytes, and the only characters past ASCII canonically equivalent to ASCII are three
/// (U+037E, U+1FEF, U+212A), each to one ASCII character in two or three bytes, so text equivalent to ASCII text
/// of the same length is that text. Only the rest (canonically equivalent texts past ASCII) is compared byte by
/// byte. Hashing is `String`'s: equal bytes hash alike, and equivalent keys that differ in their bytes share a hash
/// and are told apart by `==`. An ASCII key (most keys) costs about what a `String` key did: a warm read of
/// CacheBench's feed (5,718 records), counted by callgrind, spends about 100 instructions more per record lookup
/// on the comparison; hashing the bytes instead (`Hasher.combine(bytes:)`, or a short key as two words) cost as
/// much as `String`'s hash or more (Docs/Performance.md, the session of 2026-11-29).
struct RecordKey: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The key as text (the table's `key` column, the `__ref` of a reference).
    let text: String

    init(_ text: String) { self.text = text }

    init(stringLiteral text: String) { self.text = text }

    var description: String { text }

    static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
        guard lhs.text == rhs.text else { return false }
        // ASCII (its UTF-8 and UTF-16 counts agree, both stored for ASCII text) and of the same length: equal bytes.
        let count = lhs.text.utf8.count
        if count == rhs.text.utf8.count, count == lhs.text.utf16.count { return true }
        return Self.sameBytes(lhs.text, rhs.text)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(text) }

    private static func sameBytes(_ left: String, _ right: String) -> Bool {
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

/// Any other text the cache must tell apart by its bytes (compiled operations by their text, shared requests):
/// compared and hashed as a ``RecordKey`` is.
typealias ExactText = RecordKey

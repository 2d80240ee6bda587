import Foundation

/// A record's key (spelled as ``CacheKey`` says), compared and hashed by its UTF-8 bytes.
///
/// SQLite compares the table's keys by their bytes (`BINARY`), and servers tell ids apart by theirs: `Note:é`
/// written as U+00E9 and as `e` + U+0301 (COMBINING ACUTE ACCENT) are two objects and two rows. Swift's `String`
/// compares and hashes by canonical equivalence, which makes them one: as `String` keys, the memory layer, the
/// normalizer and the watchers merged the two objects, and what a read returned depended on whether it came from
/// memory or from SQLite. Every table and set of record keys in the cache holds this type instead.
///
/// For ASCII text (most keys) the bytes are what `String` compares anyway; the cost is the same.
struct RecordKey: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The key as text (the table's `key` column, the `__ref` of a reference).
    let text: String

    init(_ text: String) { self.text = text }

    init(stringLiteral text: String) { self.text = text }

    var description: String { text }

    static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
        let count = lhs.text.utf8.count
        guard count == rhs.text.utf8.count else { return false }
        let compared = lhs.text.utf8.withContiguousStorageIfAvailable { left in
            rhs.text.utf8.withContiguousStorageIfAvailable { right in
                guard let left = left.baseAddress, let right = right.baseAddress else { return true }  // both empty
                return memcmp(left, right, count) == 0
            }
        }
        // Text without contiguous UTF-8 (none on Linux, where every String is native): byte by byte.
        return (compared ?? nil) ?? lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        let hashed = text.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if hashed == nil {
            for byte in text.utf8 { hasher.combine(byte) }
        }
    }
}

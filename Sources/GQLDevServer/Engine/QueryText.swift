import Foundation

/// A request's query text as the document cache's key: two texts are one key only when their UTF-8 bytes are the
/// same.
///
/// `String` compares by Unicode canonical equivalence, so `{ getNote(id: "é") }` with `é` as U+00E9 and with `e` +
/// U+0301 were one key, and the second text was answered with the first's parsed document: its string literal,
/// and so the object it asked for, were the first's. A GraphQL document's string values keep their code points,
/// so the cache tells texts apart by their bytes. Hashing stays `String`'s (texts equal in bytes are equivalent and
/// hash alike); a lookup compares the bytes once with `memcmp`, as `String` compares ASCII text.
struct QueryText: Hashable, Sendable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: QueryText, rhs: QueryText) -> Bool {
        let count = lhs.text.utf8.count
        guard count == rhs.text.utf8.count else { return false }
        let same = lhs.text.utf8.withContiguousStorageIfAvailable { left in
            rhs.text.utf8.withContiguousStorageIfAvailable { right in
                guard let left = left.baseAddress, let right = right.baseAddress else { return true }  // both empty
                return memcmp(left, right, count) == 0
            }
        }
        // A text without contiguous UTF-8 (bridged, not on Linux): byte by byte.
        return (same ?? nil) ?? lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

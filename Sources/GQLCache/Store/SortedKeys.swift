import Foundation

/// Record keys in the order of their UTF-8 bytes, each once: SQLite's `BINARY` order for text, the order of the
/// record table's primary key, so a walk of the table in key order meets them in this order
/// (``RecordStore``'s read). Swift's `<` on strings is not that order (it compares Unicode scalars after
/// normalization), so the keys are compared as bytes, as SQLite compares them.
struct SortedKeys {
    /// Every key's UTF-8, one after another, in the order the keys were given.
    private let bytes: [UInt8]
    /// Each key in byte order: where its bytes lie in `bytes`, and its place among the keys given.
    private let spans: [Span]

    private struct Span {
        var start: Int
        var count: Int
        var index: Int
        /// The first 16 bytes (zeros past the end), big-endian: two keys whose prefixes differ are in the
        /// prefixes' order, so most comparisons while sorting read no bytes from `bytes`.
        var prefix: (UInt64, UInt64)
    }

    /// Where a row's key stands against the key looked for next.
    enum Order {
        /// The row's key is the one looked for.
        case equal
        /// The row's key sorts before it: a row between the keys looked for (or there are none left).
        case before
    }

    init(_ keys: [String]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(keys.count * 16)
        var spans: [Span] = []
        spans.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            let start = bytes.count
            // Copied from the key's UTF-8 as one block: appending `key.utf8` took 168 instructions a key
            // (callgrind, a cold read of CacheBench's feed).
            var key = key
            key.withUTF8 { bytes.append(contentsOf: $0) }
            spans.append(Span(start: start, count: bytes.count - start, index: index, prefix: (0, 0)))
        }
        bytes.withUnsafeBufferPointer { all in
            for position in spans.indices { spans[position].prefix = Self.prefix(Self.slice(all, spans[position])) }
            spans.sort { Self.compare(all, $0, $1) < 0 }
            // A key given twice is looked for once. By position: iterating `spans` while writing into it copied
            // the array first.
            var kept = 0
            for position in spans.indices where kept == 0 || Self.compare(all, spans[kept - 1], spans[position]) != 0 {
                spans[kept] = spans[position]
                kept += 1
            }
            spans.removeLast(spans.count - kept)
        }
        self.bytes = bytes
        self.spans = spans
    }

    /// How many distinct keys there are.
    var count: Int { spans.count }

    /// The place among the keys given of the key at `position` in byte order.
    func index(_ position: Int) -> Int { spans[position].index }

    /// Moves `position` past the keys that sort before `key` (a row's key: the walk is beyond them, so they are
    /// not in the table) and says whether `key` is the one at `position` now; `.before` when no key is left.
    func advance(_ position: inout Int, to key: UnsafeBufferPointer<UInt8>) -> Order {
        bytes.withUnsafeBufferPointer { all in
            while position < spans.count {
                let order = Self.compare(all, spans[position], key)
                if order == 0 { return .equal }
                if order > 0 { return .before }
                position += 1
            }
            return .before
        }
    }

    /// The order of two keys, as `memcmp` then the lengths (SQLite's `BINARY` collation).
    private static func compare(_ all: UnsafeBufferPointer<UInt8>, _ a: Span, _ b: Span) -> Int {
        // Zeros past a key's end sort it before a longer key it begins (its bytes then differ from the padding
        // only where the longer one has a byte above zero); equal prefixes leave it to the bytes.
        if a.prefix.0 != b.prefix.0 { return a.prefix.0 < b.prefix.0 ? -1 : 1 }
        if a.prefix.1 != b.prefix.1 { return a.prefix.1 < b.prefix.1 ? -1 : 1 }
        return compare(slice(all, a), slice(all, b))
    }

    /// The first 16 bytes of `key` as two big-endian numbers, zeros past its end.
    private static func prefix(_ key: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        (word(key, from: 0), word(key, from: 8))
    }

    /// Bytes `from` to `from + 8` of `key` as a big-endian number, zeros past its end.
    private static func word(_ key: UnsafeBufferPointer<UInt8>, from: Int) -> UInt64 {
        if key.count >= from + 8, let base = key.baseAddress {
            return UInt64(bigEndian: UnsafeRawPointer(base + from).loadUnaligned(as: UInt64.self))
        }
        var word: UInt64 = 0
        for offset in from..<from + 8 { word = word << 8 | (offset < key.count ? UInt64(key[offset]) : 0) }
        return word
    }

    private static func compare(_ all: UnsafeBufferPointer<UInt8>, _ a: Span, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        compare(slice(all, a), b)
    }

    private static func slice(_ all: UnsafeBufferPointer<UInt8>, _ span: Span) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[span.start..<span.start + span.count])
    }

    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}

/// A single pass over a document's raw text that bounds what the parser will face: the number of tokens and the
/// nesting of `{`, `[` and `(`.
///
/// GraphQLSwift's parser descends recursively for each nesting level, so a document of a few kilobytes of
/// `{a{a{…}}}` or `[[[…]]]` would overflow the stack while parsing. The scan refuses such text first, in time
/// linear in its length and without recursion. Strings, block strings and comments are skipped, so brackets
/// inside them do not count.
///
/// ```swift
/// try DocumentScanner.check("{ a { b } }", maxTokens: 100, maxNesting: 40)   // passes
/// ```
enum DocumentScanner {
    /// Refuses `text` with more than `maxTokens` tokens or brackets nested deeper than `maxNesting`.
    ///
    /// - Throws: ``LimitExceeded`` with code `TOKEN_LIMIT_EXCEEDED` or `DEPTH_LIMIT_EXCEEDED`.
    static func check(_ text: String, maxTokens: Int, maxNesting: Int) throws(LimitExceeded) {
        let contiguous = text.utf8.withContiguousStorageIfAvailable { bytes in
            scan(bytes, maxTokens: maxTokens, maxNesting: maxNesting)
        }
        let result =
            contiguous
            ?? Array(text.utf8).withUnsafeBufferPointer { scan($0, maxTokens: maxTokens, maxNesting: maxNesting) }
        if let result { throw result }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxTokens: Int, maxNesting: Int) -> LimitExceeded? {
        var index = 0
        var tokens = 0
        var depth = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ","),
                0xEF:  // a byte-order mark (EF BB BF) is ignored like white space
                index += 1
                continue
            case UInt8(ascii: "#"):
                while index < count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") {
                    index += 1
                }
                continue
            case UInt8(ascii: "\""):
                index = skipString(bytes, from: index)
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("):
                depth += 1
                if depth > maxNesting {
                    let line = 1 + bytes[..<index].lazy.filter { $0 == UInt8(ascii: "\n") }.count
                    return LimitExceeded(
                        .depth, "The document nests brackets more than \(maxNesting) deep (line \(line)).",
                        limit: maxNesting)
                }
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"):
                depth = max(0, depth - 1)
                index += 1
            case UInt8(ascii: "."):
                // `...` is one token.
                while index < count, bytes[index] == UInt8(ascii: ".") { index += 1 }
            default:
                if isWordByte(byte) {
                    while index < count, isWordByte(bytes[index]) { index += 1 }
                } else {
                    index += 1
                }
            }
            tokens += 1
            if tokens > maxTokens {
                return LimitExceeded(.tokens, "The document has more than \(maxTokens) tokens.", limit: maxTokens)
            }
        }
        return nil
    }

    /// Names and numbers (with `-`, `+` and `.` inside numbers) scan as one token.
    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"):
            return true
        default:
            return byte >= 0x80
        }
    }

    /// The index after the string or block string starting at `start` (the end of the text when unterminated).
    private static func skipString(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let count = bytes.count
        let quote = UInt8(ascii: "\"")
        if start + 2 < count, bytes[start + 1] == quote, bytes[start + 2] == quote {
            var index = start + 3
            while index < count {
                if bytes[index] == UInt8(ascii: "\\"), index + 3 < count, bytes[index + 1] == quote,
                    bytes[index + 2] == quote, bytes[index + 3] == quote
                {
                    index += 4
                } else if bytes[index] == quote, index + 2 < count, bytes[index + 1] == quote,
                    bytes[index + 2] == quote
                {
                    return index + 3
                } else {
                    index += 1
                }
            }
            return count
        }
        var index = start + 1
        while index < count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case quote: return index + 1
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): return index  // unterminated: the parser says so
            default: index += 1
            }
        }
        return count
    }
}

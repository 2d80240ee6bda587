import Foundation

/// A strict JSON parser (RFC 8259) producing ``GQLValue``.
///
/// Integers that fit in `Int64` stay exact; every other number becomes a `Double`.
/// Errors name the line and column of the fault.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    static let maxDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws -> GQLValue {
        skipByteOrderMark()
        skipWhitespace()
        let value = try parseValue()
        try expectEnd()
        return value
    }

    /// Parses a document whose value is an object, handing each member to `body` in order instead of building the
    /// object (a name given twice is handed over twice). Returns false, having read nothing, when the document's
    /// value is not an object; throws what ``parseDocument()`` throws for the same bytes.
    mutating func parseObjectDocument(_ body: (String, GQLValue) -> Void) throws -> Bool {
        skipByteOrderMark()
        skipWhitespace()
        guard peek(UInt8(ascii: "{")) else { return false }
        try parseMembers(body)
        try expectEnd()
        return true
    }

    // Skip a UTF-8 byte order mark.
    private mutating func skipByteOrderMark() {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private mutating func expectEnd() throws {
        skipWhitespace()
        guard index == bytes.count else { throw fault("unexpected text after the JSON value") }
    }

    private mutating func parseValue() throws -> GQLValue {
        guard index < bytes.count else { throw fault("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default:
            // Decode the whole UTF-8 sequence so 'é' is named as such, not as its first byte.
            let text = String(decoding: bytes[index..<min(index + 4, bytes.count)], as: UTF8.self)
            throw fault("unexpected character '\(text.unicodeScalars.first ?? "?")'")
        }
    }

    private mutating func parseObject() throws -> GQLValue {
        var object = GQLValues()
        try parseMembers { object[$0] = $1 }
        return .object(object)
    }

    /// The members of the object at `index` (its `{`), in order, up to and including its `}`.
    private mutating func parseMembers(_ body: (String, GQLValue) -> Void) throws {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if peek(UInt8(ascii: "}")) { index += 1; return }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw fault("expected a member name in quotes") }
            let key = try parseString()
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw fault("expected ':' after member name") }
            index += 1
            skipWhitespace()
            body(key, try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "}")) { index += 1; return }
            throw fault("expected ',' or '}' in object")
        }
    }

    private mutating func parseArray() throws -> GQLValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var array: [GQLValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) { index += 1; return .array(array) }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            if peek(UInt8(ascii: "]")) { index += 1; return .array(array) }
            throw fault("expected ',' or ']' in array")
        }
    }

    /// Whether one of the eight bytes of `word` is a quote, a backslash or below 0x20: the bytes that end the
    /// common string or make it another. Exact (no such byte is missed), from the classic "has a zero byte" and "has
    /// a byte less than n" tests.
    @inline(__always)
    private static func mayEndPlainString(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highBits != 0
    }

    private mutating func parseString() throws -> String {
        index += 1  // opening quote
        let start = index
        // The common string, with no escape or control character before its closing quote: found and made a
        // `String` through the array's storage (a request's query text was most of a request body's parse when
        // read byte by byte, each read bounds-checked). Any other string is read again below, with its faults.
        // Plain ASCII is valid UTF-8 as it stands, so it skips `String(validating:)`, which is generic and was
        // most of a request's string cost (about 970 instructions a string, callgrind-server.sh).
        var ascii = true
        let plainEnd: Int? = bytes.withUnsafeBufferPointer { buffer in
            var i = start
            // Eight bytes at a time while none of them can end the common string (a quote, a backslash, a control
            // byte), their high bits gathered to tell ASCII; then byte by byte from the word that may end it.
            var highBits: UInt64 = 0
            let words = UnsafeRawBufferPointer(buffer)
            while i + 8 <= buffer.count {
                let word = words.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if Self.mayEndPlainString(word) { break }
                highBits |= word
                i += 8
            }
            var high: UInt8 = highBits & 0x8080_8080_8080_8080 == 0 ? 0 : 0x80
            while i < buffer.count {
                let byte = buffer[i]
                if byte == UInt8(ascii: "\"") {
                    ascii = high < 0x80
                    return i
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                high |= byte
                i += 1
            }
            return nil
        }
        if let plainEnd {
            index = plainEnd + 1
            let string = bytes.withUnsafeBufferPointer {
                let run = UnsafeBufferPointer(rebasing: $0[start..<plainEnd])
                return ascii ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
            }
            guard let string else { throw fault("string is not valid UTF-8") }
            return string
        }
        var runStart = index
        var raw: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fault("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if runStart == start {
                    // No escape: the string is the bytes as they stand, with no copy to a buffer first.
                    index += 1
                    guard let string = String(validating: bytes[start..<index - 1], as: UTF8.self) else {
                        throw fault("string is not valid UTF-8")
                    }
                    return string
                }
                raw.append(contentsOf: bytes[runStart..<index])
                index += 1
                break
            }
            if byte < 0x20 { throw fault("control character in string") }
            if byte == UInt8(ascii: "\\") {
                raw.append(contentsOf: bytes[runStart..<index])
                index += 1
                guard index < bytes.count else { throw fault("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): raw.append(0x22)
                case UInt8(ascii: "\\"): raw.append(0x5C)
                case UInt8(ascii: "/"): raw.append(0x2F)
                case UInt8(ascii: "b"): raw.append(0x08)
                case UInt8(ascii: "f"): raw.append(0x0C)
                case UInt8(ascii: "n"): raw.append(0x0A)
                case UInt8(ascii: "r"): raw.append(0x0D)
                case UInt8(ascii: "t"): raw.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fault("unpaired surrogate in string") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fault("invalid surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw fault("unpaired surrogate in string")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fault("invalid \\u escape") }
                    raw.append(contentsOf: Array(String(scalar).utf8))
                default: throw fault("invalid escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
                runStart = index
                continue
            }
            index += 1
        }
        guard let string = String(validating: raw, as: UTF8.self) else {
            throw fault("string is not valid UTF-8")
        }
        return string
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw fault("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Self.hexDigit(bytes[index]) else { throw fault("invalid hex digit in \\u escape") }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws -> GQLValue {
        let start = index
        var isInteger = true
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fault("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fault("leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fault("digit expected after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fault("digit expected in exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw fault("number out of range") }
        return .double(d)
    }

    /// The value of a hexadecimal digit, either case.
    static func hexDigit(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private func peek(_ b: UInt8) -> Bool { index < bytes.count && bytes[index] == b }

    private mutating func expect(_ word: String) throws {
        let w = word.utf8
        guard index + w.count <= bytes.count, bytes[index..<index + w.count].elementsEqual(w) else {
            throw fault("invalid literal, expected '\(word)'")
        }
        index += w.count
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maxDepth { throw fault("nesting deeper than \(Self.maxDepth) levels") }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func fault(_ message: String) -> GQLError {
        var line = 1
        var column = 1
        for b in bytes[..<min(index, bytes.count)] {
            // Columns count characters (Unicode scalars), not bytes: UTF-8 continuation bytes add nothing.
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return GQLError(.invalidJSON, "\(message) at line \(line), column \(column)")
    }
}

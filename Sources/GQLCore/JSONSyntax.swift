/// A check that text is JSON by ``JSONParser``'s rules and limits, without building the value: no allocation
/// except for a number that may not fit (more than 18 digits, a fraction or an exponent), which is converted as
/// the parser converts it.
///
/// GQLSync checks every queued item's stored values with it before sending them as stored, where parsing them
/// only to learn that they parse was a third of reading an item. Its input is a `String`, so its bytes are valid
/// UTF-8, and so is every run of them between escapes (the parser's check of decoded strings cannot fail).
struct JSONSyntax {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    /// Whether `text` is one JSON value that is an object, as ``GQLValue/init(json:)`` would parse it.
    static func isObject(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var syntax = JSONSyntax(bytes: bytes)
            return syntax.checkDocument(object: true)
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private mutating func checkDocument(object: Bool) -> Bool {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        if object, !peek(UInt8(ascii: "{")) { return false }
        guard checkValue() else { return false }
        skipWhitespace()
        return index == bytes.count
    }

    private mutating func checkValue() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return checkContainer(close: UInt8(ascii: "}"), members: true)
        case UInt8(ascii: "["): return checkContainer(close: UInt8(ascii: "]"), members: false)
        case UInt8(ascii: "\""): return checkString()
        case UInt8(ascii: "t"): return skip("true")
        case UInt8(ascii: "f"): return skip("false")
        case UInt8(ascii: "n"): return skip("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return checkNumber()
        default: return false
        }
    }

    /// An object (`members`: each value after a quoted name and `:`) or an array.
    private mutating func checkContainer(close: UInt8, members: Bool) -> Bool {
        depth += 1
        defer { depth -= 1 }
        guard depth <= JSONParser.maxDepth else { return false }
        index += 1
        skipWhitespace()
        if peek(close) {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            if members {
                guard peek(UInt8(ascii: "\"")), checkString() else { return false }
                skipWhitespace()
                guard peek(UInt8(ascii: ":")) else { return false }
                index += 1
                skipWhitespace()
            }
            guard checkValue() else { return false }
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(close) else { return false }
            index += 1
            return true
        }
    }

    private mutating func checkString() -> Bool {
        index += 1  // opening quote
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return true }
            if byte < 0x20 { return false }
            guard byte == UInt8(ascii: "\\") else { continue }
            guard index < bytes.count else { return false }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                guard let code = hex4() else { return false }
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { return false }
                    index += 2
                    guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                } else if (0xDC00...0xDFFF).contains(code) {
                    return false
                }
            default: return false
            }
        }
        return false  // unterminated
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = JSONParser.hexDigit(bytes[index]) else { return nil }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    /// The parser's number grammar, then its range: an integer that fits in `Int64`, or a finite double.
    private mutating func checkNumber() -> Bool {
        let start = index
        var isInteger = true
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { return false }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let integerDigits = index - start - (bytes[start] == UInt8(ascii: "-") ? 1 : 0)
        if peek(UInt8(ascii: ".")) {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { return false }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { return false }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // 18 digits always fit in Int64; anything else is converted as the parser converts it.
        if isInteger && integerDigits <= 18 { return true }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, Int64(text) != nil { return true }
        guard let d = Double(text) else { return false }
        return d.isFinite
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private func peek(_ b: UInt8) -> Bool { index < bytes.count && bytes[index] == b }

    private mutating func skip(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}

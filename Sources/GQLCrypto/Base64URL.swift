/// The URL-safe base64 alphabet without padding (RFC 4648 §5, as JOSE uses it: RFC 7515 §2).
///
/// ```swift
/// Base64URL.encode(Array("hi?".utf8))        // "aGk_"
/// Base64URL.decode("aGk_")                    // [104, 105, 63]
/// Base64URL.decode("aGk_=")                   // nil: JOSE has no padding
/// ```
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// The unpadded base64url text of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(word >> UInt32(shift) & 0x3f)]) }
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let word = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            for shift in [18, 12, 6].prefix(rest + 1) { out.append(alphabet[Int(word >> UInt32(shift) & 0x3f)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` spells, or nil when it is not canonical unpadded base64url: a character outside the
    /// alphabet, `=` padding, a length that leaves one character over, or unused low bits that are not zero
    /// (so every byte string has exactly one accepted spelling).
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// ``decode(_:)`` of UTF-8 bytes (a part of a token, without making a String of it).
    package static func decode(bytes input: some Collection<UInt8>) -> [UInt8]? {
        guard input.count % 4 != 1 else { return nil }
        let table = values
        var out = [UInt8]()
        out.reserveCapacity(input.count * 3 / 4)
        var word: UInt32 = 0
        var bits = 0
        for character in input {
            let value = table[Int(character)]
            guard value != 0xff else { return nil }
            word = word << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: word >> UInt32(bits)))
                word &= (1 << UInt32(bits)) - 1
            }
        }
        guard word == 0 else { return nil }
        return out
    }
}

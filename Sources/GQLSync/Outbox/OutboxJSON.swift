import GQLCore

/// The JSON text of an item's values and key, written byte by byte into one buffer.
///
/// The same text as ``GQLValue/jsonString(pretty:)`` for scalars (strings escaped as `JSONWriter.quote` does),
/// members in the dictionary's order (nothing compares the stored text); nested arrays and objects, doubles and
/// data go through `jsonString`. One buffer, because queueing an item runs inside the app's write.
enum OutboxJSON {
    /// The values as a JSON object, each converted with `gqlValue` as it is written (no dictionary in between).
    static func object(_ values: [String: any GQLValueConvertible]) throws -> String {
        try object(values, count: values.count) { $0.gqlValue }
    }

    /// The values as a JSON object, members in their order.
    static func object(_ values: GQLValues) throws -> String { try object(values, count: values.count) { $0 } }

    private static func object<Value>(
        _ values: some Sequence<(key: String, value: Value)>, count: Int, _ convert: (Value) -> GQLValue
    ) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(16 + count * 32)
        out.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in values {
            if first { first = false } else { out.append(UInt8(ascii: ",")) }
            quote(name, into: &out)
            out.append(UInt8(ascii: ":"))
            do {
                try write(convert(value), into: &out)
            } catch let error as GQLError {
                throw GQLError(error.code, "the value of '\(name)': \(error.message)")
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// One value as JSON text (an item's key).
    static func value(_ value: GQLValue) throws -> String {
        switch value {
        case .int(let i): return String(i)
        case .string, .null, .bool:
            var out: [UInt8] = []
            out.reserveCapacity(24)
            try write(value, into: &out)
            return String(decoding: out, as: UTF8.self)
        case .double, .data, .array, .object: return try value.jsonString()
        }
    }

    private static func write(_ value: GQLValue, into out: inout [UInt8]) throws {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .int(let i): integer(i, into: &out)
        case .string(let text): quote(text, into: &out)
        case .double, .data, .array, .object: out.append(contentsOf: try value.jsonString().utf8)
        }
    }

    private static func integer(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // The magnitude as UInt64, so Int64.min has one too.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: 20 digits at most
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var n = 0
            repeat {
                buffer[31 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            return n
        }
        withUnsafeBytes(of: &digits) { out.append(contentsOf: $0[(32 - count)...]) }
    }

    /// `text` as a JSON string literal: quotes, backslashes and control characters escaped (`\n`, `\r`, `\t`,
    /// otherwise `\u00xx`), as `JSONWriter.quote` writes it.
    private static func quote(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let plain =
            text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    return false
                }
                out.append(contentsOf: bytes)
                return true
            } ?? false
        if !plain {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
                case ..<0x20:
                    let low = byte & 0xF
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(UInt8(ascii: "0") + (byte >> 4))
                    out.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

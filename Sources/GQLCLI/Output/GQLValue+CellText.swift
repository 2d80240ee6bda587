import GQLCore

extension GQLValue {
    /// The value as one line of a text table: `NULL`, numbers and strings as they are, control characters
    /// escaped so a value never breaks a row, blobs as hex (long ones cut), arrays and objects as JSON.
    var cellText: String {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return Self.escapingControls(s)
        case .data(let d):
            let shown = d.prefix(16).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
            return d.count > 16 ? "x'\(shown)…' (\(d.count) bytes)" : "x'\(shown)'"
        case .array, .object:
            return (try? jsonString()) ?? "<invalid JSON value>"
        }
    }

    /// Whether a text table right-aligns the value.
    var isNumber: Bool {
        switch self {
        case .int, .double: true
        default: false
        }
    }

    private static func escapingControls(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

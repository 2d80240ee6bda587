import GQLCore

extension GQLValue {
    /// The value as one line of a text table: `NULL`, numbers and strings as they are, control characters
    /// escaped so a value never breaks a row (``TerminalText``), blobs as hex (long ones cut), arrays and objects as
    /// JSON; strings and JSON cut after ``TextTable/maximumCellWidth`` characters.
    var cellText: String {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return TerminalText.escaped(s, limit: TextTable.maximumCellWidth)
        case .data(let d):
            let shown = d.prefix(16).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
            return d.count > 16 ? "x'\(shown)…' (\(d.count) bytes)" : "x'\(shown)'"
        case .array, .object:
            return TerminalText.escaped(
                (try? jsonString()) ?? "<invalid JSON value>", limit: TextTable.maximumCellWidth)
        }
    }

    /// Whether a text table right-aligns the value.
    var isNumber: Bool {
        switch self {
        case .int, .double: true
        default: false
        }
    }
}

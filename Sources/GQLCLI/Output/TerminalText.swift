import GQLCore

/// Text from a server (or a file) made safe to print on a terminal as one line: every character that moves the
/// cursor, ends a line, starts an escape sequence or reorders what follows is shown as a visible escape instead.
///
/// ```swift
/// print("\(date)  \(size)  \(TerminalText.escaped(object.key))")   // "a\nb" prints as a\nb, on one line
/// ```
///
/// Escaped: the C0 controls (`\n`, `\r`, `\t` by name, the others as `\u{1b}`), DEL, the C1 controls
/// (U+0080–U+009F, which terminals read as escape sequences too), the line and paragraph separators, and the
/// bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which can make a
/// line read differently from what it holds. Everything else, backslashes included, is printed as it is; JSON
/// output (`--json`, ``json(_:pretty:)``) is exact instead, with the same characters as JSON escapes.
enum TerminalText {
    /// `text` with every unsafe character escaped; with `limit`, cut with `…` once about that many characters are
    /// shown (an escape counts as its length; only the shown part is read, so a huge text costs no more than a
    /// short one).
    static func escaped(_ text: some StringProtocol, limit: Int? = nil) -> String {
        let limit = limit.map { max($0, 1) }
        if limit == nil, !text.unicodeScalars.contains(where: isUnsafe) { return String(text) }
        var out = ""
        var shown = 0
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if let limit, shown >= limit {
                out += "…"
                break
            }
            if isUnsafe(scalar) {
                let escape = name(scalar)
                out += escape
                shown += escape.utf8.count
            } else {
                out.unicodeScalars.append(scalar)
                shown += 1
            }
        }
        return out
    }

    /// `value` as JSON text that is as exact and as safe on a terminal: the encoder already writes the C0 controls
    /// inside strings as escapes; DEL, the C1 controls, the separators and the bidirectional formatting characters,
    /// which it writes as they are, become `\u` escapes too (they can only stand inside strings, so the JSON reads
    /// back to the same value).
    static func json(_ value: GQLValue, pretty: Bool = false) throws -> String {
        let text = try value.jsonString(pretty: pretty)
        guard text.unicodeScalars.contains(where: { $0.value >= 0x7F && isUnsafe($0) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x7F, isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a character is escaped.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func name(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        default: "\\u{" + String(scalar.value, radix: 16) + "}"
        }
    }
}

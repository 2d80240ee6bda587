import GQLCore

/// Rows rendered as an aligned text table with a header and a rule, numbers right-aligned:
///
/// ```
/// userId  name        age
/// ------  ----------  ---
///   1001  John Smith   42
/// (1 row)
/// ```
///
/// Cells show at most ``maximumCellWidth`` characters (longer ones end with `…`), escaped as ``TerminalText``
/// does, so one huge value neither breaks a row nor makes every row as wide; rendering is linear in the input.
struct TextTable {
    /// The most characters a cell shows.
    static let maximumCellWidth = 200

    var columns: [String]
    var rows: [[GQLValue]]
    /// Whether to end with a `(N rows)` line.
    var showsCount = true

    init(columns: [String], rows: [[GQLValue]], showsCount: Bool = true) {
        self.columns = columns
        self.rows = rows
        self.showsCount = showsCount
    }

    /// A table of dictionary rows, in `columns` order; missing keys show as `NULL`.
    init(columns: [String], rows: [GQLValues], showsCount: Bool = true) {
        self.init(
            columns: columns, rows: rows.map { row in columns.map { row[$0] ?? .null } }, showsCount: showsCount)
    }

    /// The table as lines of text, each without a trailing newline.
    var lines: [String] {
        var lines: [String] = []
        if !columns.isEmpty {
            let cells = rows.map { $0.map(\.cellText) }
            var widths = columns.map(\.count)
            for row in cells {
                for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
            }
            // A column is right-aligned when every non-null value in it is a number.
            let numeric = columns.indices.map { i in
                let values = rows.map { i < $0.count ? $0[i] : .null }.filter { !$0.isNull }
                return !values.isEmpty && values.allSatisfy(\.isNumber)
            }
            func line(_ row: [String]) -> String {
                var parts: [String] = []
                for (i, width) in widths.enumerated() {
                    let cell = i < row.count ? row[i] : ""
                    let padding = String(repeating: " ", count: max(0, width - cell.count))
                    parts.append(numeric[i] ? padding + cell : cell + padding)
                }
                return Self.trimmingTrailingSpaces(parts.joined(separator: "  "))
            }
            lines.append(line(columns))
            lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
            lines.append(contentsOf: cells.map(line))
        }
        if showsCount { lines.append(rows.count == 1 ? "(1 row)" : "(\(rows.count) rows)") }
        return lines
    }

    /// The table as text ending with a newline.
    var rendered: String { lines.map { $0 + "\n" }.joined() }

    /// `s` without its trailing spaces, found from the end in its bytes (linear in the spaces removed).
    static func trimmingTrailingSpaces(_ s: String) -> String {
        let bytes = s.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: " ") {
            end = bytes.index(before: end)
        }
        return end == bytes.endIndex ? s : String(s[..<end])
    }
}

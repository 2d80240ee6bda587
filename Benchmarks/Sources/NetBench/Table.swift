import BenchKit

/// The results table: one row per figure, GQLNet next to the raw transport, with the ratio and the target.
struct Table {
    struct Row {
        var label: String
        var gqlnet: Double
        var raw: Double?
        var format = "%.0f"
        /// The target for the ratio; `nil`: no target.
        var target: Double?
        /// A cost (CPU time): the ratio is raw ÷ GQLNet, so that higher is better on every row.
        var lowerIsBetter = false
        /// The per-round ratios (the contenders measured back to back): their median replaces the ratio of the
        /// medians, which drifts with the machine's other load, and their lowest and highest are printed beside it.
        var pairedRatios: [Double]?
    }

    var rows: [Row] = []
    var notes: [String] = []
    /// Set when a contender failed a check (a wrong answer, a missing event).
    var failed = false

    mutating func add(_ row: Row) { rows.append(row) }

    mutating func note(_ text: String) { notes.append(text) }

    func print() {
        var lines: [[String]] = [["workload", "GQLNet", "raw", "ratio (rounds min–max)", "target"]]
        for row in rows {
            var cells = [row.label, String(format: row.format, row.gqlnet)]
            if let raw = row.raw, raw > 0 {
                let ratio =
                    row.pairedRatios.flatMap(Statistics.median)
                    ?? (row.lowerIsBetter ? raw / row.gqlnet : row.gqlnet / raw)
                cells += [
                    String(format: row.format, raw),
                    row.pairedRatios.map(Statistics.spread) ?? String(format: "%.2f×", ratio),
                ]
                if let target = row.target {
                    cells.append(String(format: "≥ %.1f× ", target) + (ratio >= target ? "✔" : "✘"))
                } else {
                    cells.append("")
                }
            } else {
                cells += ["—", "", ""]
            }
            lines.append(cells)
        }
        let widths = lines[0].indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        for cells in lines {
            let line = cells.enumerated().map { column, cell in
                column == 0 || column == 4
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            Swift.print(line.joined(separator: "  "))
        }
        Swift.print("")
        Swift.print(
            "ratio: median (lowest–highest) over rounds of GQLNet ÷ raw measured back to back (raw ÷ GQLNet for "
                + "CPU time): higher is better on every row")
        for note in notes { Swift.print("  " + note) }
    }
}

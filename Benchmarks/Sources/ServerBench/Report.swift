import BenchKit
import Foundation

/// ServerBench's table: the median of every contender per workload, GQLDevServer ÷ Strawberry at its best (the
/// median of the per-round ratios, with their spread) and GQLDevServer's share of the physical limit.
struct Report {
    struct Results {
        /// Wrong answers while seeding and warming up, per contender.
        var wrong: [String: Int] = [:]
        var throughput: [RoundResult] = []
        var fanOut: [String: [FanOut.Result]] = [:]
        var paced: [String: [FanOut.Result]] = [:]
        var fanOutErrors: [String] = []
        var aliasAttack: AliasAttack.Result?
    }

    let options: ServerBench.Options
    let results: Results
    let configurations: [String: String]
    /// What drove the throughput rounds, when it was wrk.
    var loadGenerator: String?

    static let ours = "GQLDevServer"

    /// Prints everything; returns false when an answer was wrong, a fan-out incomplete or a limit did not hold.
    func print(header: [String], loadAfter: String) -> Bool {
        let names =
            results.throughput.first.map { round in
                ["GQLDevServer", "Strawberry ×1", "Strawberry ×\(options.workers)", "limit", "nginx"]
                    .filter { round.rates[$0] != nil }
            } ?? []
        let strawberries = names.filter { $0.hasPrefix("Strawberry") }
        Swift.print(
            "ServerBench — GQLDevServer (gql-cli serve) vs Strawberry GraphQL at its best, and the limit, loopback")
        for line in header { Swift.print(line) }
        Swift.print("load:    load average \(loadAfter) at the end")
        Swift.print(
            "rounds:  \(options.rounds) interleaved rounds × \(options.seconds) s per contender and workload (closed loop, "
                + "order rotating); fan-out \(options.fanOutRounds) rounds of \(options.subscribers) subscribers × "
                + "\(options.events) events, then \(options.latencyEvents) paced at "
                + String(format: "%g", options.latencyRate) + "/s for latency")
        if let loadGenerator {
            Swift.print("driver:  \(loadGenerator); every answer compared with one checked exactly before the turn")
        } else {
            Swift.print("driver:  ServerBench's own Swift client (AsyncHTTPClient), every answer checked exactly")
        }
        for set in options.headers where options.workloads.contains("queries") && set != .bare {
            Swift.print(
                "headers: \(set.label): " + set.lines.map { "\($0.name): \($0.value)" }.joined(separator: " | "))
        }
        if options.headers.contains(.browser) {
            Swift.print(
                "         GQLDevServer allows \(HeaderSet.origin); each of its answers to the browser's requests must carry "
                    + "Access-Control-Allow-Origin: \(HeaderSet.origin) (Strawberry and nginx send no CORS headers)")
        }
        if options.workloads.contains("plans-off") {
            Swift.print("plans off: the row's GQLDevServer is a second server with GQL_DEV_SERVER_PLANS=off")
        }
        Swift.print("servers: each a child process on 127.0.0.1")
        Swift.print("  GQLDevServer: " + (options.memory ? "in-memory database" : "SQLite file (WAL)"))
        for name in strawberries { Swift.print("  \(name): \(configurations[name] ?? "?")") }
        if names.contains("limit") {
            Swift.print("  limit: a bare Hummingbird 2.28.1 route answering fixed bytes of the same shape, no GraphQL")
        }
        if names.contains("nginx") { Swift.print("  nginx: \(configurations["nginx"] ?? "?")") }
        Swift.print("")

        let header = ["workload"] + names + ["÷ Strawberry best (min–max)", "% of limit", "goal (issue)"]
        var rows = [header]
        for round in results.throughput {
            var cells = [round.label] + names.map { round.median($0).map(Self.format) ?? "—" }
            let ratios = round.ratios(Self.ours, over: strawberries)
            let shares = round.ratios(Self.ours, over: [names.contains("nginx") ? "nginx" : "limit"])
            cells.append(Statistics.spread(ratios))
            cells.append(Statistics.median(shares).map { String(format: "%.0f %%", $0 * 100) } ?? "—")
            cells.append(round.target.map { Self.describe($0, ratios: ratios, shares: shares) } ?? "—")
            rows.append(cells)
        }
        fanOutRows(names: names, into: &rows)
        Self.printRows(rows)
        Swift.print("")
        Swift.print(
            "÷ Strawberry best: per round, GQLDevServer ÷ the faster Strawberry setup (for latencies, Strawberry ÷ "
                + "GQLDevServer), median of the rounds; % of limit: GQLDevServer ÷ nginx (the limit when nginx is absent), "
                + "median of the rounds.")
        Swift.print("fan-out: Strawberry ×1 only (its events do not cross uvicorn workers without a broker).")
        return footer(names)
    }

    private func fanOutRows(names: [String], into rows: inout [[String]]) {
        let peer = "Strawberry ×1"
        func row(
            _ label: String, _ series: [String: [FanOut.Result]], higherIsBetter: Bool,
            _ value: (FanOut.Result) -> Double
        ) {
            guard series[Self.ours] != nil || series[peer] != nil else { return }
            var cells = [label]
            for name in names {
                let values = (series[name] ?? []).map(value)
                cells.append(
                    Statistics.median(values).map(higherIsBetter ? Self.format : { String(format: "%.1f", $0) }) ?? "—")
            }
            let ours = (series[Self.ours] ?? []).map(value)
            let theirs = (series[peer] ?? []).map(value)
            let ratios = zip(ours, theirs).compactMap { a, b -> Double? in
                guard a > 0, b > 0 else { return nil }
                return higherIsBetter ? a / b : b / a
            }
            cells += [
                Statistics.spread(ratios), "—",
                higherIsBetter ? "≥ 3× " + ((Statistics.median(ratios) ?? 0) >= 3 ? "✔" : "✘") : "",
            ]
            rows.append(cells)
        }
        let pace = String(format: "%g", options.latencyRate)
        row("fan-out deliveries/s", results.fanOut, higherIsBetter: true) { $0.perSecond }
        row("fan-out p50 ms, unpaced", results.fanOut, higherIsBetter: false) { $0.p50Milliseconds }
        row("fan-out p99 ms, unpaced", results.fanOut, higherIsBetter: false) { $0.p99Milliseconds }
        row("fan-out p50 ms, \(pace) ev/s", results.paced, higherIsBetter: false) { $0.p50Milliseconds }
        row("fan-out p99 ms, \(pace) ev/s", results.paced, higherIsBetter: false) { $0.p99Milliseconds }
    }

    /// The checks: wrong answers, incomplete fan-outs, the alias attack.
    private func footer(_ names: [String]) -> Bool {
        var ok = true
        for name in names {
            var wrong = results.wrong[name, default: 0]
            for round in results.throughput { wrong += round.wrong[name, default: 0] }
            let fanOuts = (results.fanOut[name] ?? []) + (results.paced[name] ?? [])
            wrong += fanOuts.map(\.wrongAnswers).reduce(0, +)
            var notes = ["\(wrong) wrong or failed answers"]
            if !fanOuts.isEmpty {
                let delivered = fanOuts.map(\.delivered).reduce(0, +)
                let expected = fanOuts.map { $0.subscribers * $0.events }.reduce(0, +)
                notes.append("fan-out delivered \(delivered) of \(expected) events")
                if delivered != expected { ok = false }
            }
            if wrong > 0 { ok = false }
            Swift.print("  \(name): " + notes.joined(separator: "; "))
        }
        for error in results.fanOutErrors {
            Swift.print("  fan-out failed: \(error)")
            ok = false
        }
        if let attack = results.aliasAttack {
            Swift.print(
                String(
                    format: "  alias attack on GQLDevServer (100 and 1,000 × listObjects(limit: 1000), 5 each): "
                        + "RSS %.0f MB before, peak %.0f MB after (target < 200 MB %@); answers: %@",
                    attack.residentBefore, attack.peakAfter, attack.peakAfter < 200 ? "✔" : "✘",
                    attack.answers.sorted().joined(separator: ", ")))
            if !attack.allRefused { ok = false }
            if let largest = attack.largest {
                Swift.print(
                    String(
                        format: "  largest request the default limits allow (listObjects(limit: 1000), %d fields of "
                            + "1,000 items, %.1f MB of JSON): answered; peak RSS %.0f MB after it",
                        largest.fields, largest.responseMegabytes, largest.peakAfter))
            } else {
                Swift.print("  largest request the default limits allow: not answered with 1,000 items")
                ok = false
            }
        }
        if !ok { Swift.print("FAILED: a wrong answer, an incomplete fan-out or a limit that did not hold (see above)") }
        return ok
    }

    /// A row's goal and whether the medians meet it: `≥ 4×, ≥ 60 % ✔ (25)`.
    static func describe(_ target: Workload.Target, ratios: [Double], shares: [Double]) -> String {
        let ratio = Statistics.median(ratios) ?? 0
        let share = Statistics.median(shares) ?? 0
        var text = String(format: "≥ %g×", target.ratio)
        var met = ratio >= target.ratio
        if let goal = target.share {
            text += String(format: ", ≥ %g %%", goal * 100)
            met = met && share >= goal
        }
        return text + (met ? " ✔" : " ✘") + " (\(target.issue))"
    }

    static func format(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value.rounded())) ?? String(format: "%.0f", value)
    }

    static func printRows(_ rows: [[String]]) {
        let widths = rows[0].indices.map { column in
            rows.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        for cells in rows {
            let line = cells.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: max(0, widths[column] - cell.count)) + cell
            }
            Swift.print(line.joined(separator: "  "))
        }
    }
}

import BenchKit
import Foundation

/// A throughput workload measured in interleaved rounds: in every round each contender gets one turn of the same
/// length, the order rotating from round to round, so that bursts of other work on the machine fall on all of
/// them alike. Every answer is checked exactly; a wrong one counts as a failure, not as an operation.
struct RoundResult {
    let label: String
    /// The goal GQLDevServer's row is held to, if any.
    var target: Workload.Target?
    /// Operations per second, per contender name, one entry per round.
    var rates: [String: [Double]] = [:]
    /// Wrong or failed answers, per contender name, over all rounds.
    var wrong: [String: Int] = [:]

    func median(_ name: String) -> Double? { Statistics.median(rates[name] ?? []) }

    /// `numerator ÷ denominator` in each round, where the denominator is the best of `denominators` in that round.
    func ratios(_ numerator: String, over denominators: [String]) -> [Double] {
        guard let ours = rates[numerator] else { return [] }
        return ours.indices.compactMap { round in
            let best = denominators.compactMap { rates[$0]?[round] }.max() ?? 0
            return best > 0 ? ours[round] / best : nil
        }
    }
}

enum Rounds {
    enum Operation: Sendable {
        case query
        case mutation
    }

    static func measure(
        _ workload: Workload, contenders: [Contender], rounds: Int, seconds: Int, runID: String, wrk: WrkLoad?
    ) async -> RoundResult {
        let (label, operation, clients) = (workload.label, workload.operation, workload.clients)
        var result = RoundResult(label: label, target: workload.target)
        for round in 0..<rounds {
            let shift = round % contenders.count
            let order = Array(contenders[shift...]) + Array(contenders[..<shift])
            for contender in order {
                FileHandle.standardError.write(Data("round \(round + 1)/\(rounds) \(label): \(contender.name)\n".utf8))
                if let wrk {
                    let prefix = "w-\(runID)-\(contender.tag)-\(round)-\(clients)"
                    do {
                        let throughput = try await turn(
                            wrk, operation, contender: contender, clients: clients, seconds: seconds, prefix: prefix,
                            headers: workload.headers)
                        result.rates[contender.name, default: []].append(throughput.perSecond)
                        result.wrong[contender.name, default: 0] += throughput.failures
                        // Each turn's rate, so that a run's rounds can be read one by one (the table gives medians).
                        FileHandle.standardError.write(
                            Data("  \(contender.name): \(Int(throughput.perSecond.rounded()))/s\n".utf8))
                    } catch {
                        FileHandle.standardError.write(Data("  \(contender.name): \(error)\n".utf8))
                        result.rates[contender.name, default: []].append(0)
                        result.wrong[contender.name, default: 0] += 1
                    }
                    continue
                }
                let throughput = await Throughput.measure(clients: clients, duration: .seconds(seconds)) {
                    client, index in
                    switch operation {
                    case .query:
                        let n = (client * 7 + index) % 100
                        return await contender.http.answers(Operations.getBody("seed-\(n)"), contender.getAnswer(n))
                    case .mutation:
                        let key = "m-\(runID)-\(contender.tag)-\(round)-\(clients)-\(client)-\(index)"
                        return await contender.mutationHTTP.answers(
                            Operations.createBody(key, number: index), contender.createAnswer(key, number: index))
                    }
                }
                result.rates[contender.name, default: []].append(throughput.perSecond)
                result.wrong[contender.name, default: 0] += throughput.failures
            }
        }
        return result
    }
}

extension Rounds {
    /// One contender's turn driven by wrk: one answer checked exactly by the Swift client first, then every answer
    /// wrk receives compared with that text (a mutation's with its key masked), and GQLDevServer's answers to the
    /// browser's requests for the CORS header that lets the page read them.
    static func turn(
        _ wrk: WrkLoad, _ operation: Operation, contender: Contender, clients: Int, seconds: Int, prefix: String,
        headers: HeaderSet
    ) async throws -> Throughput {
        let allowOrigin = contender.kind == .devServer && headers == .browser ? HeaderSet.origin : nil
        switch operation {
        case .query:
            let body = Operations.getBody("seed-1")
            guard let text = await contender.http.checkedText(body, contender.getAnswer(1)) else {
                throw WrkLoad.Failure(description: "the query's answer before the turn was wrong")
            }
            var script = WrkLoad.query(body: body, expected: text)
            (script.headers, script.allowOrigin) = (headers, allowOrigin)
            return try await wrk.run(url: contender.http.url, connections: clients, seconds: seconds, script: script)
        case .mutation:
            let key = prefix + "-sample"
            let body = Operations.createBody(key, number: 1)
            guard let text = await contender.mutationHTTP.checkedText(body, contender.createAnswer(key, number: 1))
            else {
                throw WrkLoad.Failure(description: "the mutation's answer before the turn was wrong")
            }
            var script = WrkLoad.mutation(prefix: prefix, expected: text)
            (script.headers, script.allowOrigin) = (headers, allowOrigin)
            return try await wrk.run(
                url: contender.mutationHTTP.url, connections: clients, seconds: seconds, script: script)
        }
    }
}

/// One throughput row: what is sent, by how many connections, and the goal it is held to.
struct Workload: Sendable {
    /// GQLDevServer ÷ the best Strawberry at least `ratio`, and (when given) at least `share` of nginx.
    struct Target: Sendable {
        var ratio: Double
        var share: Double?
        /// The issue the goal comes from.
        var issue: Int
    }

    var label: String
    var operation: Rounds.Operation
    var clients: Int
    var headers = HeaderSet.bare
    /// Whether GQLDevServer runs every document through GraphQLSwift's executor (`GQL_DEV_SERVER_PLANS=off`).
    var plansOff = false
    var target: Target?

    /// The rows `--workloads` selects, in the table's order: queries with each header set at 1 and 16 connections
    /// (issue 25's goals), the bare query with plans off, mutations (issue 10's goals).
    static func rows(_ selected: Set<String>, headers: [HeaderSet]) -> [Workload] {
        var rows: [Workload] = []
        let noun = { (clients: Int) in clients == 1 ? "1 client" : "\(clients) clients" }
        if selected.contains("queries") {
            for clients in [1, 16] {
                for set in headers {
                    let target = clients == 1 ? Target(ratio: 4, share: 0.6, issue: 25) : Target(ratio: 10, issue: 25)
                    rows.append(
                        Workload(
                            label: "queries/s, \(noun(clients)), \(set.label)", operation: .query, clients: clients,
                            headers: set, target: target))
                }
            }
        }
        if selected.contains("plans-off") {
            rows.append(
                Workload(label: "queries/s, 1 client, bare, plans off", operation: .query, clients: 1, plansOff: true))
        }
        if selected.contains("mutations") {
            for clients in [1, 16] {
                let target = clients == 1 ? Target(ratio: 3, share: 0.4, issue: 10) : Target(ratio: 5, issue: 10)
                rows.append(
                    Workload(
                        label: "mutations/s, \(noun(clients))", operation: .mutation, clients: clients, target: target))
            }
        }
        return rows
    }
}

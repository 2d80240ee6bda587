import BenchKit
import Foundation

/// A throughput workload measured in interleaved rounds: in every round each contender gets one turn of the same
/// length, the order rotating from round to round, so that bursts of other work on the machine fall on all of
/// them alike. Every answer is checked exactly; a wrong one counts as a failure, not as an operation.
struct RoundResult {
    let label: String
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
        _ label: String, _ operation: Operation, clients: Int, contenders: [Contender], rounds: Int, seconds: Int,
        runID: String, wrk: WrkLoad?
    ) async -> RoundResult {
        var result = RoundResult(label: label)
        for round in 0..<rounds {
            let shift = round % contenders.count
            let order = Array(contenders[shift...]) + Array(contenders[..<shift])
            for contender in order {
                FileHandle.standardError.write(Data("round \(round + 1)/\(rounds) \(label): \(contender.name)\n".utf8))
                if let wrk {
                    let prefix = "w-\(runID)-\(contender.tag)-\(round)-\(clients)"
                    do {
                        let throughput = try await turn(
                            wrk, operation, contender: contender, clients: clients, seconds: seconds, prefix: prefix)
                        result.rates[contender.name, default: []].append(throughput.perSecond)
                        result.wrong[contender.name, default: 0] += throughput.failures
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
    /// wrk receives compared with that text (a mutation's with its key masked).
    static func turn(
        _ wrk: WrkLoad, _ operation: Operation, contender: Contender, clients: Int, seconds: Int, prefix: String
    ) async throws -> Throughput {
        switch operation {
        case .query:
            let body = Operations.getBody("seed-1")
            guard let text = await contender.http.checkedText(body, contender.getAnswer(1)) else {
                throw WrkLoad.Failure(description: "the query's answer before the turn was wrong")
            }
            return try await wrk.run(
                url: contender.http.url, connections: clients, seconds: seconds,
                script: WrkLoad.query(body: body, expected: text))
        case .mutation:
            let key = prefix + "-sample"
            let body = Operations.createBody(key, number: 1)
            guard let text = await contender.mutationHTTP.checkedText(body, contender.createAnswer(key, number: 1)) else {
                throw WrkLoad.Failure(description: "the mutation's answer before the turn was wrong")
            }
            return try await wrk.run(
                url: contender.mutationHTTP.url, connections: clients, seconds: seconds,
                script: WrkLoad.mutation(prefix: prefix, expected: text))
        }
    }
}

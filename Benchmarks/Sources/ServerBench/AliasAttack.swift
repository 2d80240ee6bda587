import Foundation
import GQLCore

/// The alias attack of issue 10 against GQLDevServer in its child process: 100 aliases of
/// `listObjects(limit: 1000) { items { objectId } }` (4.6 KB), then 1,000 of them (47 KB), each sent 5 times, and
/// the server's resident memory before and its peak (`VmHWM` of /proc/PID/status) after. Before GQLDevServer had
/// a cost limit the first peaked at 1.25 GB and the second passed 6 GB; the target is under 200 MB, and with the
/// default limits each request must be refused with a GraphQL error whose code names the limit.
struct AliasAttack {
    struct Result {
        /// The server's resident memory in MB before the attack.
        var residentBefore: Double
        /// The server's peak resident memory in MB (over its whole life) after the attack.
        var peakAfter: Double
        /// "status code" of each distinct answer, e.g. "400 COST_LIMIT_EXCEEDED".
        var answers: Set<String>
        /// Whether every request was refused with a limit's code.
        var allRefused: Bool
        /// The largest request the default limits allow, when it was answered in full.
        var largest: Largest?
    }

    /// The largest request the default limits allow: `listObjects(limit: 1000)` with as many fields of each of
    /// 1,000 stored items as the cost limit lets through.
    struct Largest {
        /// The fields selected of each item.
        var fields: Int
        /// The server's peak resident memory in MB after it answered.
        var peakAfter: Double
        /// The answer's size in MB.
        var responseMegabytes: Double
    }

    static func isLimitCode(_ code: String) -> Bool {
        code.hasSuffix("_LIMIT_EXCEEDED") || code == "RESPONSE_TOO_LARGE"
    }

    static func run(http: GraphQLHTTP, pid: Int32) async -> Result? {
        guard let before = memory(pid, "VmRSS:") else { return nil }
        var answers: Set<String> = []
        var allRefused = true
        for count in [100, 1_000] {
            let aliases = (0..<count).map { "a\($0): listObjects(limit: 1000) { items { objectId } }" }
            let body = GraphQLHTTP.json("{ " + aliases.joined(separator: " ") + " }", [:])
            for _ in 0..<5 {
                guard let (status, text) = try? await http.post(body) else {
                    answers.insert("no answer")
                    allRefused = false
                    continue
                }
                let code = (try? GQLValue(json: text))?["errors"]?[0]?["extensions"]?["code"]?.stringValue ?? "-"
                answers.insert("\(status) \(code)")
                if !isLimitCode(code) { allRefused = false }
            }
        }
        guard let peak = memory(pid, "VmHWM:") else { return nil }
        let largest = await largestAllowed(http: http, pid: pid)
        return Result(
            residentBefore: before, peakAfter: peak, answers: answers, allRefused: allRefused, largest: largest)
    }

    /// Sends `listObjects(limit: 1000)` with 20 fields of each item, then one field fewer while the answer is
    /// `COST_LIMIT_EXCEEDED`, after making sure 1,000 objects are stored; nil when no such request was answered
    /// with 1,000 items.
    static func largestAllowed(http: GraphQLHTTP, pid: Int32) async -> Largest? {
        for n in 0..<1_000 {
            _ = try? await http.post(Operations.createBody("largest-\(n)", number: n))
        }
        for fields in stride(from: 20, to: 0, by: -1) {
            let selection = ["objectId"] + (1..<fields).map { "f\($0): text" }
            let query = "{ listObjects(limit: 1000) { items { \(selection.joined(separator: " ")) } } }"
            guard let (status, text) = try? await http.post(GraphQLHTTP.json(query, [:])),
                let answer = try? GQLValue(json: text)
            else { return nil }
            if answer["errors"]?[0]?["extensions"]?["code"]?.stringValue == "COST_LIMIT_EXCEEDED" { continue }
            guard status == 200, case .array(let items)? = answer["data"]?["listObjects"]?["items"],
                items.count == 1_000, let peak = memory(pid, "VmHWM:")
            else { return nil }
            return Largest(fields: fields, peakAfter: peak, responseMegabytes: Double(text.utf8.count) / 1_048_576)
        }
        return nil
    }

    /// A memory line (`VmRSS:`, `VmHWM:`) of /proc/PID/status, in MB; `nil` where /proc is missing.
    static func memory(_ pid: Int32, _ field: String) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }
}

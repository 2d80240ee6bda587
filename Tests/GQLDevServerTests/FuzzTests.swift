import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// A seeded generator of hostile and half-valid documents and variables, run through the engine's whole path
/// (scan, parse, limits, validation, execution) and, for a share, over HTTP to a real server. Whatever comes in,
/// the answer is a JSON object with `data` or `errors`, and after every 100 documents the server still answers a
/// known query over HTTP with exactly the answer it gave before them.
///
/// `make fuzz` runs it for `GQL_FUZZ_SECONDS` (default 60) from `GQL_FUZZ_SEED` (default: the time); a plain test
/// run does 300 documents from the fixed seeds below. A seed that ever failed joins ``regressionSeeds``.
@Suite("GQLDevServer fuzz", .timeLimit(.minutes(10)))
struct FuzzTests {
    /// Seeds of past failures, replayed on every run (none has failed yet).
    static let regressionSeeds: [UInt64] = [1, 2, 3]

    @Test func generatedDocumentsAreAnsweredAndTheServerSurvives() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["GQL_FUZZ_SECONDS"].flatMap(Double.init)
        let seed = environment["GQL_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970)
        let seeds = seconds == nil ? Self.regressionSeeds : [seed]
        if seconds != nil { print("FuzzTests: seed \(seed) (GQL_FUZZ_SEED=\(seed) replays it)") }
        let deadline = ContinuousClock.now + .seconds(seconds ?? 0)
        try await withDevServer { server, endpoints in
            let engine = try #require(server.devEngine)
            // An object no generated document names, and the exact answer a read of it must keep getting.
            let known = "fuzz-known-\(UUID().uuidString)"
            let made = await engine.execute(
                .init(query: #"mutation { createObjects(input: {objectId: "\#(known)", text: "known"}) { objectId } }"#)
            )
            #expect(made.value["errors"] == nil)
            let probe = #"{ getObjects(objectId: "\#(known)") { objectId text } }"#
            let expected: GQLValue = ["data": ["getObjects": ["objectId": .string(known), "text": "known"]]]
            for seed in seeds {
                var generator = DocumentGenerator(seed: seed)
                var count = 0
                while count < 100 || ContinuousClock.now < deadline {
                    count += 1
                    let (query, variables) = generator.request()
                    let response = await engine.execute(.init(query: query, variables: variables)).value
                    #expect(response["data"] != nil || response["errors"] != nil, "seed \(seed) #\(count): \(query)")
                    if count % 10 == 0 {
                        let outcome = try await post(
                            endpoints.http, ["query": .string(query), "variables": .object(variables)])
                        #expect([200, 400].contains(outcome.status), "seed \(seed) #\(count): HTTP \(outcome.status)")
                    }
                    if count % 100 == 0 {
                        let answer = try await post(endpoints.http, ["query": .string(probe)])
                        #expect(
                            answer.status == 200 && answer.json == expected,
                            "seed \(seed) after #\(count): the known query got HTTP \(answer.status) \(answer.json.map { "\($0)" } ?? "")"
                        )
                    }
                }
            }
            try await HostileDocumentTests.expectAnswering(endpoints.http)
        }
    }
}

/// Generates requests: valid operations of the default model, then mangled — deepened, widened, aliased,
/// truncated, with odd values and variables.
struct DocumentGenerator {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
    private mutating func number(_ upTo: Int) -> Int { Int(random.next() % UInt64(max(1, upTo))) }

    mutating func request() -> (String, GQLValues) {
        var query = pick(Self.bases)
        for _ in 0..<number(4) { query = mutate(query) }
        var variables: GQLValues = [:]
        for name in ["f", "n", "id", "input"] where number(3) == 0 { variables[name] = value(depth: number(40)) }
        return (query, variables)
    }

    private mutating func mutate(_ query: String) -> String {
        switch number(7) {
        case 0:  // deepen a selection
            let depth = number(2_000)
            return query.replacingOccurrences(
                of: "objectId",
                with: "objectId " + String(repeating: "a{", count: depth) + "b" + String(repeating: "}", count: depth),
                options: [], range: query.range(of: "objectId"))
        case 1:  // a deep list literal as an argument
            let depth = number(120)
            return query.replacingOccurrences(
                of: "limit: 5",
                with: "limit: " + String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth))
        case 2:  // many aliases
            let field = "x: listObjects(limit: \(number(1_500))) { items { objectId text } }"
            return "{ "
                + (0..<number(300)).map { field.replacingOccurrences(of: "x:", with: "a\($0):") }.joined(separator: " ")
                + " }"
        case 3:  // truncate
            return String(query.prefix(number(query.count + 1)))
        case 4:  // insert a random punctuator or token
            var characters = Array(query)
            characters.insert(
                contentsOf: pick(["{", "}", "[", "]", "(", ")", "...", "$", "\"", "#", "@skip", "!", ":"]),
                at: number(characters.count + 1))
            return String(characters)
        case 5:  // a deep filter
            let depth = number(200)
            return "{ listObjects(filter: " + String(repeating: "{not: ", count: depth) + "{text: {eq: \"a\"}}"
                + String(repeating: "}", count: depth) + ") { items { objectId } } }"
        default:  // fragments that multiply
            let levels = number(25)
            var fragments = ["fragment F\(levels) on Objects { objectId }"]
            for level in 0..<levels {
                fragments.append("fragment F\(level) on Objects { ...F\(level + 1) ...F\(level + 1) }")
            }
            return "{ getObjects(objectId: \"x\") { ...F0 } } " + fragments.joined(separator: " ")
        }
    }

    private mutating func value(depth: Int) -> GQLValue {
        if depth == 0 { return pick([.null, .int(Int64(number(10_000))), "text", .bool(true), .double(0.5)]) }
        return number(2) == 0
            ? .array([value(depth: depth - 1)])
            : .object([pick(["not", "and", "or", "text", "eq", "objectId"]): value(depth: depth - 1)])
    }

    static let bases = [
        "{ listObjects(limit: 5) { items { objectId text number } nextToken } }",
        "query($f: ModelObjectsFilterInput, $n: Int) { listObjects(filter: $f, limit: $n) { items { objectId } } }",
        "query($id: ID!) { getObjects(objectId: $id) { objectId text } }",
        "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
        "{ syncObjects(limit: 5, lastSync: 0) { items { objectId _version } startedAt } }",
        "{ __schema { types { name fields { name args { name isDeprecated } } } } }",
    ]
}

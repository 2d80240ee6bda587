import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// Two engines over two fresh databases with one fixed clock: every request runs on both, by its compiled plan on
/// one and by GraphQLSwift's executor on the other, so the databases stay alike and the answers can be compared
/// byte for byte.
struct PlanDifferential {
    let planned: EngineFixture
    let executed: EngineFixture
    /// How many requests ran by a plan, and how many of those the plan handed to the executor.
    private(set) var plannedRuns = 0
    private(set) var fallbacks = 0

    static let sdl = """
        type Item @model {
          id: ID!
          name: String
          count: Int
          ratio: Float
          flag: Boolean
          stamp: AWSTimestamp
          meta: AWSJSON
          when: AWSDateTime
          tags: [String]
          size: Size
          required: String!
        }
        enum Size { SMALL LARGE }
        """

    init(sdl: String? = nil) throws {
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_700_000_000.123) }
        planned = try EngineFixture(sdl: sdl, clock: clock)
        executed = try EngineFixture(sdl: sdl, clock: clock)
    }

    /// The two answers to one request, and whether the plan answered it (not handing it to the executor).
    struct Outcome {
        var planned: String
        var executed: String
        var usedPlan: Bool
    }

    /// Runs `query` on both engines; `budget` is the response budget in bytes.
    mutating func run(
        _ query: String, _ variables: GQLValues = [:], style: DevEngine.ErrorStyle = .standard,
        budget: Int = 16 << 20
    ) async -> Outcome {
        let request = DevEngine.Request(query: query, variables: variables)
        let formatter = ResponseFormatter(style: style)
        switch (planned.engine.prepare(request), executed.engine.prepare(request)) {
        case (.success(let a), .success(let b)):
            var usedPlan = false
            var first: DevEngine.Response?
            if let plan = a.plan {
                plannedRuns += 1
                first = await planned.engine.run(plan, a, formatter: formatter, budget: ResponseBudget(limit: budget))
                usedPlan = first != nil
                if first == nil { fallbacks += 1 }
            }
            if first == nil {
                first = await planned.engine.executeWithoutPlan(
                    a, formatter: formatter, budget: ResponseBudget(limit: budget))
            }
            let second = await executed.engine.executeWithoutPlan(
                b, formatter: formatter, budget: ResponseBudget(limit: budget))
            return Outcome(planned: first?.json ?? "", executed: second.json, usedPlan: usedPlan)
        case (.failure(let a), .failure(let b)):
            return Outcome(
                planned: a.response(style).description, executed: b.response(style).description, usedPlan: false)
        default:
            return Outcome(planned: "prepared on one engine only", executed: "", usedPlan: false)
        }
    }

    /// Runs `query` on both and expects the same bytes; returns the planned answer.
    @discardableResult
    mutating func expectSame(
        _ query: String, _ variables: GQLValues = [:], style: DevEngine.ErrorStyle = .standard,
        budget: Int = 16 << 20, planned expectPlan: Bool? = nil, errorsInAnyOrder: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> String {
        let outcome = await run(query, variables, style: style, budget: budget)
        #expect(
            errorsInAnyOrder
                ? Self.sameIgnoringErrorOrder(outcome.planned, outcome.executed)
                : outcome.planned == outcome.executed,
            "\(query) \(variables)\nplan:     \(outcome.planned)\nexecutor: \(outcome.executed)",
            sourceLocation: sourceLocation)
        if let expectPlan {
            #expect(
                outcome.usedPlan == expectPlan, "plan used: \(outcome.usedPlan) for \(query) \(variables)",
                sourceLocation: sourceLocation)
        }
        return outcome.planned
    }

    /// Whether two responses have the same `data`, byte for byte, and the same errors in any order (the GraphQL spec
    /// does not order a response's errors, and the executor lists field errors in an order of its own).
    static func sameIgnoringErrorOrder(_ a: String, _ b: String) -> Bool {
        guard case .object(let first)? = try? GQLValue(json: a), case .object(let second)? = try? GQLValue(json: b)
        else { return a == b }
        func errors(_ response: GQLValues) -> [String] {
            (response["errors"]?.arrayValue ?? []).compactMap { try? $0.jsonString() }.sorted()
        }
        let data = { (response: GQLValues) in (try? response["data"]?.jsonString()) ?? nil }
        return data(first) == data(second) && errors(first) == errors(second)
    }

    /// Runs raw SQL on both databases (values the API cannot write).
    func sql(_ statement: String) throws {
        try planned.db.execute(statement)
        try executed.db.execute(statement)
    }
}

/// Generates operations of the plan's shapes over the default `Objects` model with variables of every kind,
/// right and wrong.
struct PlanCorpusGenerator {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
    private mutating func chance(_ n: Int) -> Bool { random.next() % UInt64(n) == 0 }

    static let fields = [
        "objectId", "text", "number", "double", "boolean", "createdAt", "updatedAt", "_version", "_deleted",
        "_lastChangedAt", "__typename",
    ]

    /// A selection of some fields in a random order, some aliased, some repeated.
    mutating func selection() -> String {
        var chosen: [String] = []
        for _ in 0..<(1 + Int(random.next() % 8)) {
            let field = pick(Self.fields)
            chosen.append(chance(3) ? "a\(chosen.count): \(field)" : field)
        }
        return "{ " + chosen.joined(separator: " ") + " }"
    }

    /// A value for a variable: right for `kind` most of the time, otherwise anything.
    mutating func value(_ kind: String) -> GQLValue? {
        if chance(6) { return pick([nil, .null, .bool(true), .double(1.5), .int(3_000_000_000), "x", .array(["a"])]) }
        switch kind {
        case "ID": return pick(["seed-1", "seed-2", "missing", .int(42)])
        case "Int": return .int(Int64(random.next() % 2000) - 1000)
        case "Float": return pick([.double(2.5), .int(3), .double(-0.125)])
        case "Boolean": return .bool(chance(2))
        default: return .string(pick(["hello", "", "quote \" and \\ and \n", "ünïcode ✓"]))
        }
    }

    /// A create, update, delete or get with its variables.
    mutating func request(_ n: Int) -> (String, GQLValues) {
        switch random.next() % 5 {
        case 4:
            var variables: GQLValues = [:]
            if chance(2) { variables["n"] = value("Int") ?? .null }
            if chance(2) {
                variables["f"] = pick([
                    ["text": ["eq": value("String") ?? .null]], ["number": ["between": value("Int") ?? .null]],
                    [
                        "or": [
                            ["boolean": ["eq": value("Boolean") ?? .null]], ["double": ["gt": value("Float") ?? .null]],
                        ]
                    ],
                    ["not": ["objectId": ["beginsWith": "gen"]]], ["unknown": 1],
                ])
            }
            let query =
                "query($f: ModelObjectsFilterInput, $n: Int) { listObjects(filter: $f, limit: $n) "
                + "{ items \(selection()) nextToken } }"
            return (query, variables)
        case 0:
            var input: GQLValues = ["objectId": .string("gen-\(n)")]
            for (field, kind) in [("text", "String"), ("number", "Int"), ("double", "Float"), ("boolean", "Boolean")]
            where chance(2) {
                input[field] = value(kind) ?? .null
            }
            if chance(8) { input["unknown"] = 1 }
            return (
                "mutation M($input: CreateObjectsInput!) { createObjects(input: $input) \(selection()) }",
                ["input": .object(input)]
            )
        case 1:
            var input: GQLValues = ["objectId": .string(pick(["seed-1", "gen-\(n - 1)", "missing"]))]
            if chance(2) { input["text"] = value("String") ?? .null }
            if chance(3) { input["_version"] = .int(Int64(random.next() % 4)) }
            let verb = pick(["update", "delete"])
            let type = verb == "update" ? "UpdateObjectsInput" : "DeleteObjectsInput"
            if verb == "delete" { input["text"] = nil }
            return (
                "mutation($input: \(type)!) { \(verb)Objects(input: $input) \(selection()) }", ["input": .object(input)]
            )
        default:
            var variables: GQLValues = [:]
            if let id = value("ID") { variables["id"] = id }
            return ("query Q($id: ID!) { getObjects(objectId: $id) \(selection()) }", variables)
        }
    }
}

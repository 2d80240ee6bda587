import Foundation
import GQLCore
import GQLTestSupport
import GraphQL
import Testing

@testable import GQLDevServer

/// A compiled `getT` writes its answer straight from the row's columns (``DevEngine/written(_:_:key:budget:)``).
/// These tests hold it to the two paths it replaced, byte for byte, over seeded rows of every storage class in every
/// column: the item dictionary path (``ModelResolvers/get(_:key:budget:)`` then ``DevEngine/object(_:_:path:errors:into:)``)
/// and GraphQLSwift's executor.
@Suite("GQLDevServer's get answers written from the row", .timeLimit(.minutes(1)))
struct EngineRowTests {
    /// The scalar fields of ``PlanDifferential/sdl``'s `Item` a plan can select, the server's own included.
    static let fields = [
        "id", "name", "count", "ratio", "flag", "stamp", "meta", "when", "required", "createdAt", "updatedAt",
        "_version", "_deleted", "_lastChangedAt", "__typename",
    ]

    /// SQL literals of every storage class: text (plain, empty, quotes, backslashes, unicode, control characters,
    /// NUL, DEL, invalid UTF-8, JSON, long), integers (at and past Int32's and Int64's ends), reals (negative zero,
    /// tiny, huge, infinite, integral), blobs and NULL.
    static let texts = [
        "'plain'", "''", #"'quote "dq" and ''single'''"#, #"'back\slash \n'"#, "'ünïcode ✓ 日本語'", "'emoji 😀'",
        "char(0) || 'nul'", "'tab' || char(9) || 'nl' || char(10)", "char(1, 31, 127)", "'del' || char(127)",
        "CAST(X'FF80' AS TEXT)", "CAST(X'C3' AS TEXT)", "'2024-01-01T00:00:00.000Z'", #"'{"a":[1,2.5,null]}'"#,
        #"'["x",null,"y"]'"#, "'SMALL'", "printf('%.300c', 'x')", "'42'", "'1.5'", "'true'",
    ]
    static let integers = [
        "0", "1", "-1", "2147483647", "2147483648", "-2147483648", "-2147483649", "3000000000",
        "9223372036854775807", "-9223372036854775808", "1700000000000",
    ]
    static let reals = ["0.5", "-0.0", "2.0", "1e300", "-1e-300", "0.1", "1e999", "-1e999", "3.141592653589793"]
    static let others = ["NULL", "X''", "X'00FF'"]

    /// The natural literals of each column (what the API would store), picked most of the time.
    static let natural: [String: [String]] = [
        "name": texts, "count": integers, "ratio": reals, "flag": ["0", "1", "2", "-1"], "stamp": integers,
        "meta": [#"'{"a":1}'"#, "'[]'", "'null'", #"'"s"'"#], "when": ["'2024-01-01T00:00:00.000Z'", "''"],
        "tags": [#"'["a","b"]'"#, "'[]'", #"'[null,"é"]'"#, "'not json'"], "size": ["'SMALL'", "'LARGE'", "'HUGE'"],
        "required": texts, "createdAt": ["'2023-11-14T22:13:20.123Z'"], "updatedAt": ["'2023-11-14T22:13:20.123Z'"],
        "_version": ["1", "2", "2147483648"], "_deleted": ["0", "1"], "_lastChangedAt": ["1700000000123"],
    ]
    /// Columns the table declares NOT NULL.
    static let notNull: Set<String> = ["_version", "_deleted", "_lastChangedAt"]

    /// Values the non-null fields can return (for ``seed(_:count:executable:random:)``).
    static let returnable: [String: [String]] = [
        "required": ["'r'", "'ünïcode ✓ 日本語'", #"'quote "dq"'"#], "_version": ["1", "2"],
        "createdAt": ["'2023-11-14T22:13:20.123Z'"], "updatedAt": ["''"], "_lastChangedAt": ["1700000000123"],
    ]

    /// Inserts `count` seeded rows into both engines' `Item` tables; their keys are `r0`, `r1`, ….
    ///
    /// With `executable`, no column holds an infinite real and every non-null field a value it can return: where
    /// those make a plan's answer differ from the executor's (see ``rowsAnswerAsTheExecutor()``).
    static func seed(_ pair: PlanDifferential, count: Int, executable: Bool = false, random: inout SplitMix64) throws {
        func pick(_ choices: [String]) -> String {
            let choices = executable ? choices.filter { !$0.hasSuffix("1e999") } : choices
            return choices[Int(random.next() % UInt64(choices.count))]
        }
        let columns = [
            "name", "count", "ratio", "flag", "stamp", "meta", "when", "tags", "size", "required", "createdAt",
            "updatedAt", "_version", "_deleted", "_lastChangedAt",
        ]
        for n in 0..<count {
            var values = ["'r\(n)'"]
            for column in columns {
                if executable, let choices = returnable[column] {
                    values.append(pick(choices))
                    continue
                }
                let anything = texts + integers + reals + (notNull.contains(column) ? [] : others)
                values.append(random.next() % 5 < 3 ? pick(natural[column] ?? anything) : pick(anything))
            }
            let names = (["id"] + columns).map { "\"\($0)\"" }.joined(separator: ", ")
            try pair.sql("INSERT INTO Item (\(names)) VALUES (\(values.joined(separator: ", ")))")
        }
    }

    /// A selection of 1–10 fields in a random order, some aliased, some repeated.
    static func selection(_ random: inout SplitMix64) -> String {
        var chosen: [String] = []
        for _ in 0..<(1 + Int(random.next() % 10)) {
            let field = fields[Int(random.next() % UInt64(fields.count))]
            chosen.append(random.next() % 4 == 0 ? "a\(chosen.count): \(field)" : field)
        }
        return "{ " + chosen.joined(separator: " ") + " }"
    }

    /// One `getItem` answered both ways inside the plan: (JSON, errors) or the budget's refusal.
    struct Answers {
        var written: String
        var dictionary: String
    }

    static func answers(
        _ engine: DevEngine, _ query: String, key: String, budget: Int
    ) throws -> Answers {
        let prepared = try engine.prepare(DevEngine.Request(query: query, variables: ["id": .string(key)])).get()
        let field = try #require(prepared.plan?.fields.first)
        guard case .get(let source) = field.action else {
            Issue.record("not a get: \(query)")
            return Answers(written: "", dictionary: "")
        }
        let store = source.store
        func text(_ json: ResponseJSON, _ errors: [GraphQLError]) -> String {
            json.text + " " + errors.map { "\($0.message) at \($0.path)" }.joined(separator: "; ")
        }
        let written: String
        do {
            switch try DevEngine.written(field, source, key: .string(key), budget: ResponseBudget(limit: budget)) {
            case .written(let json, let errors): written = text(json, errors)
            case .item(nil): written = "no row"
            case .item(let item?): written = "an item: \(item)"
            }
        } catch {
            written = "thrown: \(error)"
        }
        let dictionary: String
        do {
            if let item = try ModelResolvers.get(store, key: .string(key), budget: ResponseBudget(limit: budget)) {
                var out = ResponseJSON()
                var errors: [GraphQLError] = []
                DevEngine.object(item, field.outputs, path: { [field.key] }, errors: &errors, into: &out)
                dictionary = text(out, errors)
            } else {
                dictionary = "no row"
            }
        } catch {
            dictionary = "thrown: \(error)"
        }
        return Answers(written: written, dictionary: dictionary)
    }

    /// The bytes the item dictionary path charges for row `key` (the smallest budget it passes).
    static func itemSize(_ engine: DevEngine, key: String) throws -> Int {
        let prepared = try engine.prepare(DevEngine.Request(query: "query($id: ID!) { getItem(id: $id) { id } }")).get()
        guard case .get(let source)? = prepared.plan?.fields.first?.action else { return -1 }
        let store = source.store
        var (low, high) = (0, 1 << 20)
        while low < high {
            let middle = (low + high) / 2
            if (try? ModelResolvers.get(store, key: .string(key), budget: ResponseBudget(limit: middle))) != nil {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }

    @Test("seeded rows of every storage class: the same bytes, errors and budget as the item dictionary path")
    func rowsAnswerAsTheDictionaryPath() async throws {
        let pair = try PlanDifferential(sdl: PlanDifferential.sdl)
        var random = SplitMix64(seed: TestSeed.make("rows answer as the dictionary path"))
        try Self.seed(pair, count: 150, random: &random)
        let engine = pair.planned.engine
        var compared = 0
        for n in 0..<150 {
            let key = "r\(n)"
            let size = try Self.itemSize(engine, key: key)
            for round in 0..<4 {
                let query = "query($id: ID!) { getItem(id: $id) \(Self.selection(&random)) }"
                // A large budget, then the item's exact size and one byte less (the charge passes, then fails).
                let budget = [16 << 20, size, size - 1, 16 << 20][round]
                let answers = try Self.answers(engine, query, key: key, budget: budget)
                #expect(answers.written == answers.dictionary, "\(query) for \(key), budget \(budget)")
                compared += 1
            }
        }
        let missing = try Self.answers(engine, "query($id: ID!) { getItem(id: $id) { id } }", key: "none", budget: 0)
        #expect(missing.written == "no row" && missing.dictionary == "no row")
        #expect(compared == 600)
    }

    /// Two kinds of value are left out here, where a plan's answers differ from the executor's as they did before the
    /// columns were read straight (``rowsAnswerAsTheDictionaryPath()`` holds them to that path): an infinite real,
    /// which a plan answers in its field alone (`null`, or its scalar's error) where the executor's whole response is
    /// "The response could not be encoded." (the DocC catalog's "Compiled plans"); and a non-null field's value it
    /// cannot return, after which a plan reports no further field's error where the executor reports them all.
    @Test("seeded rows of every storage class: the same bytes as GraphQLSwift's executor")
    func rowsAnswerAsTheExecutor() async throws {
        var pair = try PlanDifferential(sdl: PlanDifferential.sdl)
        var random = SplitMix64(seed: TestSeed.make("rows answer as the executor"))
        try Self.seed(pair, count: 100, executable: true, random: &random)
        for n in 0..<100 {
            let query = "query($id: ID!) { getItem(id: $id) \(Self.selection(&random)) }"
            await pair.expectSame(query, ["id": .string("r\(n)")], planned: true, errorsInAnyOrder: true)
        }
        await pair.expectSame("query($id: ID!) { getItem(id: $id) { id name } }", ["id": "none"], planned: true)
    }
}

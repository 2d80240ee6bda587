import Foundation
import GQLCore
import GraphQL
import Testing

@testable import GQLNet

/// `GQLOperation` renders text; every test parses that text back with GraphQLSwift's parser and checks what the
/// parser saw, so "the output always parses as GraphQL" is what is being tested.
@Suite struct GQLOperationBuilderTests {
    typealias Op = GQLOperation

    static let filmParts = Op.Fragment("FilmParts", on: "Film") { "releaseDate" }

    static let getFilm = Op.query("GetFilm", variables: [.init("id", "ID!")]) {
        Op.Field("film", arguments: ["id": .variable("id")]) {
            "title"
            Op.Field("director", alias: "boss") { "name" }
            filmParts
        }
    }

    // MARK: Exact renderings

    @Test func compactRenderingIsOneLineWithTheFragmentAppended() throws {
        #expect(
            try Self.getFilm.render()
                == "query GetFilm($id: ID!) { film(id: $id) { title boss: director { name } ...FilmParts } } "
                + "fragment FilmParts on Film { releaseDate }")
        #expect(
            try Self.getFilm.render(includingFragments: false)
                == "query GetFilm($id: ID!) { film(id: $id) { title boss: director { name } ...FilmParts } }")
    }

    @Test func prettyRenderingIndentsAndSeparatesDefinitions() throws {
        let expected = """
            query GetFilm($id: ID!) {
              film(id: $id) {
                title
                boss: director {
                  name
                }
                ...FilmParts
              }
            }

            fragment FilmParts on Film {
              releaseDate
            }
            """
        #expect(try Self.getFilm.render(.pretty) == expected)
        #expect(try Self.filmParts.render(.pretty) == "fragment FilmParts on Film {\n  releaseDate\n}")
    }

    @Test func theArticleExampleRendersAsDocumented() throws {
        let filmParts = Op.Fragment("FilmParts", on: "Film") {
            "title"
            "releaseDate"
        }
        let op = Op.query(
            "GetFilm", variables: [.init("id", "ID!"), .init("withDirector", "Boolean!", default: false)]
        ) {
            Op.Field("film", arguments: ["id": .variable("id")]) {
                filmParts
                Op.Field("director", alias: "boss", directives: [.include(if: .variable("withDirector"))]) {
                    "name"
                }
                Op.InlineFragment(on: "AnimatedFilm") { "studio" }
            }
        }
        #expect(
            try op.render()
                == "query GetFilm($id: ID!, $withDirector: Boolean! = false) { film(id: $id) { ...FilmParts "
                + "boss: director @include(if: $withDirector) { name } ... on AnimatedFilm { studio } } } "
                + "fragment FilmParts on Film { title releaseDate }")
        #expect(op.description == (try op.render()))
    }

    @Test func valuesAndDirectivesRenderInGraphQLSyntax() throws {
        let op = Op.mutation(
            variables: [.init("first", " [ Int ! ] ! ", default: [1, 2]), .init("on", "Boolean", default: .null)],
            directives: [.init("trace")]
        ) {
            Op.Field(
                "update",
                arguments: [
                    "input": ["b": "x", "a": [1.5, -2, true, nil]], "order": .enum("ASC"), "flag": .variable("on"),
                    "first": .variable("first"),
                ],
                directives: [.include(if: .variable("on")), .skip(if: false)])
        }
        #expect(
            try op.render()
                == "mutation($first: [Int!]! = [1, 2], $on: Boolean = null) @trace { update(input: {a: [1.5, -2, "
                + "true, null], b: \"x\"}, order: ASC, flag: $on, first: $first) @include(if: $on) @skip(if: false) }")
    }

    // MARK: Parsed back

    @Test(arguments: [GQLQuery.OperationType.query, .mutation, .subscription])
    func everyKindParsesWithAndWithoutAName(kind: GQLQuery.OperationType) throws {
        for name in ["Named", nil] {
            let op = Op(kind, name: name) { "a" }
            let operation = try Self.operation(in: op.render())
            #expect(operation.operation.rawValue == kind.rawValue)
            #expect(operation.name?.value == name)
        }
    }

    @Test func fieldsAliasesArgumentsAndNestingParseBack() throws {
        let op = Op.query("Nested", variables: [.init("id", "ID!"), .init("n", "Int")]) {
            Op.Field("film", alias: "first", arguments: ["id": .variable("id")]) {
                "title"
                Op.Field("characters", arguments: ["first": .variable("n"), "order": .enum("NAME_DESC")]) {
                    "__typename"
                    Op.Field("name", alias: "fullName")
                }
            }
            Op.Field("film", alias: "second", arguments: ["id": "2"]) { "title" }
        }
        let operation = try Self.operation(in: op.render())
        let top = Self.fields(operation.selectionSet)
        #expect(top.map { $0.alias?.value } == ["first", "second"])
        #expect(top.map(\.name.value) == ["film", "film"])
        #expect(top[0].arguments.map(\.name.value) == ["id"])
        #expect((top[0].arguments[0].value as? Variable)?.name.value == "id")
        #expect((top[1].arguments[0].value as? StringValue)?.value == "2")
        let characters = Self.fields(top[0].selectionSet)[1]
        #expect(characters.arguments.map(\.name.value) == ["first", "order"])
        #expect((characters.arguments[1].value as? EnumValue)?.value == "NAME_DESC")
        let leaves = Self.fields(characters.selectionSet)
        #expect(leaves.map(\.name.value) == ["__typename", "name"])
        #expect(leaves[1].alias?.value == "fullName")
        #expect(leaves[1].selectionSet == nil)
        #expect(try Self.model(of: op.render()) == op)
    }

    @Test func argumentValuesOfEveryKindParseBack() throws {
        let value: Op.Value = [
            "int": .int(.min), "float": 6.02e23, "string": "s", "bool": false, "null": nil, "enum": .enum("RED"),
            "variable": .variable("v"), "list": [[], [1, [2]]], "object": ["empty": [:] as Op.Value],
        ]
        let op = Op.query(variables: [.init("v", "String")]) { Op.Field("f", arguments: ["value": value]) }
        let argument = try #require(Self.fields(Self.operation(in: op.render()).selectionSet).first?.arguments.first)
        #expect(Self.model(argument.value) == value)
        let object = try #require(argument.value as? ObjectValue)
        #expect(object.fields.map(\.name.value) == object.fields.map(\.name.value).sorted())
        #expect((object.fields.first { $0.name.value == "int" }?.value as? IntValue)?.value == "-9223372036854775808")
    }

    @Test func variableDefinitionsKeepTypesAndDefaults() throws {
        let op = Op.query(
            "Vars",
            variables: [
                .init("id", "ID!"), .init("ids", "[ID!]"), .init("matrix", "[[Float]!]!"),
                .init("first", "Int", default: 10), .init("where", "Filter", default: ["tags": ["a"], "n": nil]),
            ]
        ) {
            Op.Field(
                "search",
                arguments: [
                    "id": .variable("id"), "ids": .variable("ids"), "m": .variable("matrix"),
                    "first": .variable("first"), "where": .variable("where"),
                ]
            ) { "id" }
        }
        let definitions = try Self.operation(in: op.render()).variableDefinitions
        #expect(definitions.map(\.variable.name.value) == ["id", "ids", "matrix", "first", "where"])
        #expect(definitions.map { Self.typeText($0.type) } == ["ID!", "[ID!]", "[[Float]!]!", "Int", "Filter"])
        #expect(definitions[3].defaultValue.map(Self.model) == .int(10))
        #expect(definitions[4].defaultValue.map(Self.model) == ["tags": ["a"], "n": nil])
        #expect(definitions[0].defaultValue == nil)
    }

    @Test func fragmentsAreAppendedTransitivelyInOrderOfFirstUseAndOnlyWhenUsed() throws {
        let person = Op.Fragment("PersonParts", on: "Person") { "name" }
        let planet = Op.Fragment("PlanetParts", on: "Planet") { "climate" }
        let film = Op.Fragment("FilmParts", on: "Film") {
            "title"
            Op.Field("director") { Op.FragmentSpread("PersonParts") }
        }
        let unused = Op.Fragment("Unused", on: "Film") { "id" }
        let op = Op.query("Films", fragments: [unused, person]) {
            Op.Field("allFilms") {
                film
                Op.Field("planets") { planet }
                film
            }
            Op.Field("people") { person }
        }
        let text = try op.render()
        let document = try GraphQL.parse(source: Source(body: text))
        let fragments = document.definitions.compactMap { $0 as? FragmentDefinition }
        #expect(fragments.map(\.name.value) == ["FilmParts", "PersonParts", "PlanetParts"])
        #expect(fragments.map(\.typeCondition.name.value) == ["Film", "Person", "Planet"])
        #expect(try op.usedFragments() == [film, person, planet])
        #expect(try Self.model(of: text).fragments == [film, person, planet])
        let spreads = try Self.fields(Self.operation(in: text).selectionSet)[0].selectionSet?.selections
            .compactMap { $0 as? FragmentSpread }.map(\.name.value)
        #expect(spreads == ["FilmParts", "FilmParts"])
        let bare = try GraphQL.parse(source: Source(body: op.render(includingFragments: false)))
        #expect(bare.definitions.count == 1)
    }

    @Test func inlineFragmentsAndDirectivesParseBack() throws {
        let op = Op.query(
            "Search", variables: [.init("full", "Boolean!", default: true)], directives: [.init("live")]
        ) {
            Op.Field("search", arguments: ["text": "han"]) {
                "__typename"
                Op.InlineFragment(on: "Human") { "height" }
                Op.InlineFragment(directives: [.include(if: .variable("full"))]) { "biography" }
                Op.FragmentSpread("Extra", directives: [.skip(if: .variable("full"))])
                Op.Field(
                    "cached", directives: [.init("cacheControl", arguments: ["maxAge": 60, "scope": .enum("PRIVATE")])])
            }
        }
        let text = try op.render(includingFragments: false)
        let operation = try Self.operation(in: text)
        #expect(operation.directives.map(\.name.value) == ["live"])
        let selections = try #require(Self.fields(operation.selectionSet).first?.selectionSet?.selections)
        let human = try #require(selections[1] as? InlineFragment)
        #expect(human.typeCondition?.name.value == "Human")
        #expect(Self.fields(human.selectionSet).map(\.name.value) == ["height"])
        let conditional = try #require(selections[2] as? InlineFragment)
        #expect(conditional.typeCondition == nil)
        #expect(conditional.directives.map(\.name.value) == ["include"])
        #expect((conditional.directives.first?.arguments.first?.value as? Variable)?.name.value == "full")
        let spread = try #require(selections[3] as? FragmentSpread)
        #expect(spread.name.value == "Extra")
        #expect(spread.directives.map(\.name.value) == ["skip"])
        let cached = try #require(selections[4] as? GraphQL.Field)
        #expect(cached.directives.first?.arguments.map(\.name.value) == ["maxAge", "scope"])
        var expected = op
        expected.fragments = []
        #expect(try Self.model(of: text) == expected)
    }

    @Test func builderBlocksTakeConditionsLoopsAndPrebuiltSelections() throws {
        func op(withDirector: Bool, extra: [String]) -> Op {
            Op.query {
                Op.Field("film") {
                    "title"
                    if withDirector { Op.Field("director") { "name" } } else { "producers" }
                    for name in extra { name }
                    [Op.Selection.field(.init("id"))]
                }
            }
        }
        #expect(
            try op(withDirector: true, extra: ["a", "b"]).render()
                == "query { film { title director { name } a b id } }")
        #expect(try op(withDirector: false, extra: []).render() == "query { film { title producers id } }")
    }

    @Test func swiftValuesConvertToGraphQLValues() throws {
        #expect(Op.Value(42) == .int(42))
        #expect(Op.Value(2.5) == .float(2.5))
        #expect(Op.Value("x") == .string("x"))
        #expect(Op.Value(Optional<Int>.none) == .null)
        #expect(Op.Value(["a": [1, 2]]) == .object(["a": .list([.int(1), .int(2)])]))
        #expect(Op.Value(Data([1, 2, 3])) == .string("AQID"))
        let op = Op.query { Op.Field("f", arguments: ["limit": Op.Value(UInt8(7)), "tags": Op.Value(["x", "y"])]) }
        #expect(try op.render() == #"query { f(limit: 7, tags: ["x", "y"]) }"#)
    }

    // MARK: Escaping

    @Test(arguments: [
        "plain", "", "\"quoted\"", "back\\slash", "\\\"", "line\nbreak\r\n", "tab\there", "\u{0}\u{1}\u{8}\u{C}\u{1F}",
        "\u{7F}", "café", "日本語", "😀 👩‍👩‍👧 🇯🇵", "\u{2028}\u{2029}", "\u{FEFF}bom", "\u{10FFFF}", "\\u0041", "/* # */",
        "\"\"\"block\"\"\"", "${x}",
    ])
    func stringsRoundTripThroughTheParser(text: String) throws {
        let op = Op.query { Op.Field("echo", arguments: ["text": .string(text)]) }
        let rendered = try op.render()
        #expect(!rendered.unicodeScalars.contains { $0.value < 0x20 })
        let argument = Self.fields(try Self.operation(in: rendered).selectionSet).first?.arguments.first
        let value = try #require(argument?.value as? StringValue)
        #expect(value.value == text)
        #expect(value.block != true)
    }

    @Test func escapesAreTheShortFormsOrUnicodeEscapes() throws {
        var out = ""
        Op.Renderer.quote("a\"b\\c\nd\re\tf\u{8}g\u{C}h\u{1B}é", into: &out)
        #expect(out == #""a\"b\\c\nd\re\tf\u0008g\u000ch\u001bé""#)
    }

    // MARK: Faults

    struct Fault: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var operation: Op
        /// Words the message must contain: the bad name and where it is.
        var mentions: [String]
    }

    static let badNames: [Fault] = [
        Fault(
            testDescription: "field", operation: Op.query("Q") { Op.Field("film") { "first-name" } },
            mentions: ["invalid field name \"first-name\"", "query Q > film"]),
        Fault(
            testDescription: "string shorthand with an alias", operation: Op.query { "boss: director" },
            mentions: ["\"boss: director\""]),
        Fault(
            testDescription: "alias", operation: Op.query("Q") { Op.Field("a", alias: "1st") },
            mentions: ["invalid alias \"1st\"", "query Q > 1st: a"]),
        Fault(
            testDescription: "operation", operation: Op.mutation("Do It") { "a" },
            mentions: ["invalid operation name \"Do It\""]),
        Fault(
            testDescription: "argument", operation: Op.query("Q") { Op.Field("a", arguments: ["bad-arg": 1]) },
            mentions: ["invalid argument name \"bad-arg\"", "query Q > a > argument bad-arg"]),
        Fault(
            testDescription: "variable", operation: Op.query("Q", variables: [.init("my var", "ID")]) { "a" },
            mentions: ["invalid variable name \"my var\"", "query Q"]),
        Fault(
            testDescription: "variable reference",
            operation: Op.query("Q") { Op.Field("a", arguments: ["x": .variable("$id")]) },
            mentions: ["invalid variable name \"$id\"", "query Q > a > argument x"]),
        Fault(
            testDescription: "directive",
            operation: Op.query("Q") { Op.Field("a", directives: [.init("no-cache")]) },
            mentions: ["invalid directive name \"no-cache\"", "query Q > a > @no-cache"]),
        Fault(
            testDescription: "enum", operation: Op.query("Q") { Op.Field("a", arguments: ["o": .enum("a.b")]) },
            mentions: ["invalid enum value \"a.b\"", "query Q > a > argument o"]),
        Fault(
            testDescription: "enum true", operation: Op.query("Q") { Op.Field("a", arguments: ["o": .enum("true")]) },
            mentions: ["true cannot be an enum value", "query Q > a > argument o"]),
        Fault(
            testDescription: "input field",
            operation: Op.query("Q") { Op.Field("a", arguments: ["in": ["é": 1]]) },
            mentions: ["invalid input field name \"é\"", "query Q > a > argument in"]),
        Fault(
            testDescription: "inline type condition",
            operation: Op.query("Q") { Op.Field("a") { Op.InlineFragment(on: "[Human]") { "x" } } },
            mentions: ["invalid type condition \"[Human]\"", "query Q > a > ... on [Human]"]),
        Fault(
            testDescription: "spread", operation: Op.query("Q") { Op.Field("a") { Op.FragmentSpread("on") } },
            mentions: ["a fragment cannot be called \"on\"", "query Q > a > ...on"]),
        Fault(
            testDescription: "fragment", operation: Op.query("Q") { Op.Fragment("Bad Name", on: "T") { "x" } },
            mentions: ["invalid fragment name \"Bad Name\""]),
        Fault(
            testDescription: "fragment type condition",
            operation: Op.query("Q") { Op.Fragment("F", on: "") { "x" } },
            mentions: ["invalid type condition \"\"", "fragment F"]),
        Fault(
            testDescription: "variable type", operation: Op.query("Q", variables: [.init("id", "ID!!")]) { "a" },
            mentions: ["invalid type \"ID!!\" for variable $id"]),
        Fault(
            testDescription: "empty variable type", operation: Op.query("Q", variables: [.init("id", "[]")]) { "a" },
            mentions: ["invalid type \"[]\" for variable $id"]),
    ]

    @Test(arguments: badNames)
    func invalidNamesThrowNamingTheNameAndWhere(fault: Fault) throws {
        let error = try #require(gqlError { _ = try fault.operation.render() })
        #expect(error.code == .invalidArgument)
        for mention in fault.mentions {
            #expect(error.message.contains(mention), "\(error.message) should mention \(mention)")
        }
    }

    static let otherFaults: [Fault] = [
        Fault(
            testDescription: "empty operation", operation: Op.query("Q") {}, mentions: ["selects nothing", "query Q"]),
        Fault(
            testDescription: "empty inline fragment",
            operation: Op.query("Q") { Op.Field("a") { Op.InlineFragment(on: "T") {} } },
            mentions: ["inline fragment selects nothing", "query Q > a > ... on T"]),
        Fault(
            testDescription: "empty fragment", operation: Op.query("Q") { Op.Fragment("F", on: "T") {} },
            mentions: ["fragment selects nothing", "fragment F"]),
        Fault(
            testDescription: "undeclared variable",
            operation: Op.query("Q") { Op.Field("a") { Op.Field("b", arguments: ["id": .variable("id")]) } },
            mentions: ["variable $id is used at query Q > a > b > argument id but not declared"]),
        Fault(
            testDescription: "undeclared variable in a fragment",
            operation: Op.query("Q") { Op.Fragment("F", on: "T") { Op.Field("b", arguments: ["x": .variable("x")]) } },
            mentions: ["variable $x is used at fragment F > b > argument x"]),
        Fault(
            testDescription: "variable in a default",
            operation: Op.query("Q", variables: [.init("a", "[ID]", default: [.variable("b")]), .init("b", "ID")]) {
                "x"
            },
            mentions: ["default value of $a refers to a variable"]),
        Fault(
            testDescription: "duplicate variable",
            operation: Op.query("Q", variables: [.init("a", "ID"), .init("a", "Int")]) { "x" },
            mentions: ["variable $a is declared twice"]),
        Fault(
            testDescription: "duplicate argument",
            operation: Op.query("Q") { Op.Field("f", arguments: ["a": 1, "a": 2]) },
            mentions: ["argument is given twice", "query Q > f > argument a"]),
        Fault(
            testDescription: "missing fragment",
            operation: Op.query("Q") { Op.Field("f") { Op.FragmentSpread("Missing") } },
            mentions: ["fragment \"Missing\" is spread in the operation but not defined"]),
        Fault(
            testDescription: "two fragments with one name",
            operation: Op.query("Q") {
                Op.Fragment("F", on: "T") { "a" }
                Op.Fragment("F", on: "T") { "b" }
            },
            mentions: ["two different fragments are called \"F\""]),
        Fault(
            testDescription: "cycle",
            operation: Op.query(
                "Q",
                fragments: [
                    Op.Fragment("A", on: "T") { Op.FragmentSpread("B") },
                    Op.Fragment("B", on: "T") { Op.Field("x") { Op.FragmentSpread("A") } },
                ]
            ) { Op.FragmentSpread("A") },
            mentions: ["cycle: A > B > A"]),
    ]

    @Test(arguments: otherFaults)
    func unrenderableOperationsThrowSayingWhatAndWhere(fault: Fault) throws {
        let error = try #require(gqlError { _ = try fault.operation.render() })
        #expect(error.code == .invalidArgument)
        #expect(error.operation == "Q")
        for mention in fault.mentions {
            #expect(error.message.contains(mention), "\(error.message) should mention \(mention)")
        }
    }

    @Test func nonFiniteNumbersThrowInvalidValue() throws {
        for number in [Double.nan, .infinity, -.infinity] {
            let op = Op.query("Q") { Op.Field("f", arguments: ["x": [.float(number)]]) }
            let error = try #require(gqlError { _ = try op.render() })
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("query Q > f > argument x"))
        }
        #expect(Op.query { Op.Field("f", arguments: ["x": .float(.nan)]) }.description.hasPrefix("<invalid operation"))
    }

    @Test func aSpreadByNameFindsADefinitionCarriedLaterInTheDocument() throws {
        let b = Op.Fragment("B", on: "T") { "x" }
        let op = Op.query("Q") {
            Op.Field("c") { Op.FragmentSpread("B") }
            Op.Field("a") { b }
        }
        #expect(try op.usedFragments() == [b])
        #expect(try op.render() == "query Q { c { ...B } a { ...B } } fragment B on T { x }")
        // Carried inside another carried definition, after the spread by name.
        let outer = Op.Fragment("A", on: "T") { Op.Field("y") { b } }
        let nested = Op.query("Q", fragments: [Op.Fragment("L", on: "T") { Op.FragmentSpread("B") }]) {
            Op.FragmentSpread("L")
            outer
        }
        #expect(try nested.usedFragments().map(\.name) == ["L", "B", "A"])
        _ = try Self.operation(in: try nested.render())
    }

    @Test func deeplyNestedValuesThrowInvalidValueInsteadOfOverflowingTheStack() throws {
        var deep = Op.Value.int(1)
        for _ in 0..<10_000 { deep = .list([deep]) }
        let op = Op.query("Q") { Op.Field("f", arguments: ["x": deep]) }
        let error = try #require(gqlError { _ = try op.render() })
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("more than 256"))
        #expect(error.message.contains("query Q > f > argument x"))
        var deepObject = Op.Value.null
        for _ in 0..<10_000 { deepObject = ["a": deepObject] }
        let inDefault = Op.query("Q", variables: [.init("v", "In", default: deepObject)]) {
            Op.Field("f", arguments: ["v": .variable("v")])
        }
        let defaultError = try #require(gqlError { _ = try inDefault.render() })
        #expect(defaultError.code == .invalidValue)
        #expect(defaultError.message.contains("default of $v"))
        // 256 levels is the limit; just under it still renders and parses.
        var allowed = Op.Value.int(1)
        for _ in 0..<255 { allowed = .list([allowed]) }
        _ = try Self.operation(in: try Op.query("Q") { Op.Field("f", arguments: ["x": allowed]) }.render())
    }

    @Test func deeplyNestedSelectionsThrowInsteadOfOverflowingTheStack() throws {
        var field = Op.Field("leaf")
        for _ in 0..<10_000 {
            var parent = Op.Field("f")
            parent.selections = [.field(field)]
            field = parent
        }
        let op = Op.query("Q", fragments: [Op.Fragment("F", on: "T") { field }]) { Op.FragmentSpread("F") }
        #expect(try op.usedFragments().map(\.name) == ["F"])
        let error = try #require(gqlError { _ = try op.render() })
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("nest more than 256 levels"))
        #expect(error.message.contains("fragment F > f > f"))
        let inline = Op.query("Q") { Op.InlineFragment { Op.Field("x") { Op.InlineFragment { "y" } } } }
        _ = try Self.operation(in: try inline.render())
    }

    @Test func theArticleShowsTheRealErrorMessage() throws {
        let op = Op.query("GetFilm") { Op.Field("film") { "first-name" } }
        let error = try #require(gqlError { _ = try op.render() })
        #expect(
            error.message
                == "invalid field name \"first-name\": a GraphQL name starts with a letter or _ and continues with "
                + "letters, digits or _ at query GetFilm > film > first-name")
    }

    @Test func typeNamesKeepTheirSpellingAndOnlySpaceBetweenTokensIsIgnored() throws {
        for bad in ["I D!", "I D !", "[Str ing]", "Int!x", "[ID] ]"] {
            let op = Op.query("Q", variables: [.init("a", bad)]) { Op.Field("f", arguments: ["a": .variable("a")]) }
            let error = try #require(gqlError { _ = try op.render() }, "\(bad) should be refused")
            #expect(error.message.contains("invalid type \(bad.debugDescription)"))
        }
        let op = Op.query("Q", variables: [.init("a", " [ ID !\t]\n! ")]) {
            Op.Field("f", arguments: ["a": .variable("a")])
        }
        #expect(try op.render() == "query Q($a: [ID!]!) { f(a: $a) }")
    }

    static let mergeFaults: [Fault] = [
        Fault(
            testDescription: "unused variable",
            operation: Op.query("Q", variables: [.init("a", "Int"), .init("b", "Int")]) {
                Op.Field("f", arguments: ["b": .variable("b")])
            },
            mentions: ["variable $a is declared but never used"]),
        Fault(
            testDescription: "one response name for two fields",
            operation: Op.query("Q") {
                Op.Field("p") {
                    Op.Field("f", alias: "x")
                    Op.Field("g", alias: "x")
                }
            },
            mentions: ["response name \"x\" is given to two different fields, f and g", "at query Q > p"]),
        Fault(
            testDescription: "an alias that is another field's name",
            operation: Op.query("Q") {
                "g"
                Op.Field("f", alias: "g")
            },
            mentions: ["response name \"g\" is given to two different fields, g and f", "at query Q"]),
        Fault(
            testDescription: "one field twice with different arguments",
            operation: Op.query("Q") {
                Op.Field("f", arguments: ["a": 1])
                Op.Field("f", arguments: ["a": 2])
            },
            mentions: ["field f is selected twice as \"f\" with different arguments"]),
    ]

    @Test(arguments: mergeFaults)
    func unusedVariablesAndConflictingResponseNamesThrow(fault: Fault) throws {
        let error = try #require(gqlError { _ = try fault.operation.render() })
        #expect(error.code == .invalidArgument)
        #expect(error.operation == "Q")
        for mention in fault.mentions {
            #expect(error.message.contains(mention), "\(error.message) should mention \(mention)")
        }
    }

    @Test func fieldsThatMergeAndVariablesUsedElsewhereStillRender() throws {
        let same = Op.query("Q", variables: [.init("v", "Int")]) {
            Op.Field("f", arguments: ["a": 1, "b": .variable("v")])
            Op.Field("f", arguments: ["b": .variable("v"), "a": 1], directives: [.skip(if: false)])
            Op.Field("g", alias: "x")
            Op.InlineFragment(on: "T") { Op.Field("h", alias: "x") }
        }
        _ = try Self.operation(in: try same.render())
        // The fragment sent from elsewhere may use $v, so it is not reported unused.
        let external = Op.query("Q", variables: [.init("v", "Int")]) { Op.FragmentSpread("External") }
        #expect(try external.render(includingFragments: false) == "query Q($v: Int) { ...External }")
        // A variable used only in a fragment counts as used.
        let inFragment = Op.query("Q", variables: [.init("v", "Int")]) {
            Op.Fragment("F", on: "T") { Op.Field("f", arguments: ["a": .variable("v")]) }
        }
        _ = try Self.operation(in: try inFragment.render())
    }

    @Test func aSpreadByNameRendersAloneWhenFragmentsAreSentFromElsewhere() throws {
        let op = Op.query("Q") { Op.Field("f") { Op.FragmentSpread("External") } }
        #expect(throws: GQLError.self) { try op.render() }
        #expect(try op.render(includingFragments: false) == "query Q { f { ...External } }")
    }

    @Test func serverExecuteRefusesSubscriptions() throws {
        let subscription = Op.subscription("S") { "a" }
        let error = try #require(gqlError { _ = try GQLServer.text(of: subscription) })
        #expect(error.code == .invalidArgument)
        #expect(error.operation == "S")
        #expect(error.message.contains("not sent over HTTP"))
        #expect(try GQLServer.text(of: Op.mutation("M") { "a" }) == "mutation M { a }")
    }

    @Test func builtOperationsRunAgainstADevServer() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let fields = Op.Fragment("ObjectFields", on: "Objects") {
                    "objectId"; "text"
                }
                let create = Op.mutation("Create", variables: [.init("input", "CreateObjectsInput!")]) {
                    Op.Field("createObjects", alias: "made", arguments: ["input": .variable("input")]) { fields }
                }
                let created = try await server.execute(create, ["input": ["objectId": "b1", "text": "built \"x\""]])
                #expect(created.errors.isEmpty)
                #expect(created.data?["made"]?["text"] == "built \"x\"")
                let get = Op.query("Get") {
                    Op.Field("getObjects", arguments: ["objectId": "b1"]) { fields }
                }
                let fetched = try await server.execute(get)
                #expect(fetched.errors.isEmpty)
                #expect(fetched.data?["getObjects"]?["objectId"] == "b1")
            }
        }
    }

    // MARK: Randomized round trip

    @Test(arguments: 0..<8)
    func randomOperationsRoundTripThroughTheParser(seed: UInt64) throws {
        var generator = OperationGenerator(seed: seed)
        for _ in 0..<25 {
            let op = generator.operation()
            for format in [Op.Format.compact, .pretty] {
                let text = try op.render(format)
                let parsed = try Self.model(of: text)
                var expected = op
                expected.fragments = try op.usedFragments()
                #expect(parsed == expected, "seed \(seed): \(text)")
            }
        }
    }

    // MARK: Helpers

    static func operation(in text: String) throws -> OperationDefinition {
        let document = try GraphQL.parse(source: Source(body: text))
        return try #require(document.definitions.first as? OperationDefinition)
    }

    static func fields(_ selectionSet: SelectionSet?) -> [GraphQL.Field] {
        selectionSet?.selections.compactMap { $0 as? GraphQL.Field } ?? []
    }

    /// Parses `text` and builds the `GQLOperation` the parser saw: the first definition is the operation, the
    /// others its fragments. Spreads come back by name.
    static func model(of text: String) throws -> Op {
        let document = try GraphQL.parse(source: Source(body: text))
        let operation = try #require(document.definitions.first as? OperationDefinition)
        var op = Op(
            GQLQuery.OperationType(rawValue: operation.operation.rawValue) ?? .query, name: operation.name?.value
        ) {}
        op.variables = operation.variableDefinitions.map { definition in
            Op.Variable(
                definition.variable.name.value, typeText(definition.type), default: definition.defaultValue.map(model))
        }
        op.directives = operation.directives.map(model)
        op.selections = model(operation.selectionSet)
        op.fragments = document.definitions.dropFirst().compactMap { $0 as? FragmentDefinition }.map { definition in
            var fragment = Op.Fragment(definition.name.value, on: definition.typeCondition.name.value) {}
            fragment.directives = definition.directives.map(model)
            fragment.selections = model(definition.selectionSet)
            return fragment
        }
        return op
    }

    static func model(_ selectionSet: SelectionSet?) -> [Op.Selection] {
        (selectionSet?.selections ?? []).compactMap { selection in
            switch selection {
            case let field as GraphQL.Field:
                var result = Op.Field(field.name.value, alias: field.alias?.value)
                result.arguments = field.arguments.map { Op.Argument($0.name.value, model($0.value)) }
                result.directives = field.directives.map(model)
                result.selections = model(field.selectionSet)
                return .field(result)
            case let spread as FragmentSpread:
                return .fragmentSpread(Op.FragmentSpread(spread.name.value, directives: spread.directives.map(model)))
            case let inline as InlineFragment:
                var result = Op.InlineFragment(on: inline.typeCondition?.name.value) {}
                result.directives = inline.directives.map(model)
                result.selections = model(inline.selectionSet)
                return .inlineFragment(result)
            default:
                Issue.record("unexpected selection \(selection)")
                return nil
            }
        }
    }

    static func model(_ directive: GraphQL.Directive) -> Op.Directive {
        var result = Op.Directive(directive.name.value)
        result.arguments = directive.arguments.map { Op.Argument($0.name.value, model($0.value)) }
        return result
    }

    static func model(_ value: GraphQL.Value) -> Op.Value {
        switch value {
        case let v as IntValue: return Int64(v.value).map(Op.Value.int) ?? .string("bad int \(v.value)")
        case let v as FloatValue: return Double(v.value).map(Op.Value.float) ?? .string("bad float \(v.value)")
        case let v as StringValue: return .string(v.value)
        case let v as BooleanValue: return .bool(v.value)
        case is NullValue: return .null
        case let v as EnumValue: return .enum(v.value)
        case let v as Variable: return .variable(v.name.value)
        case let v as ListValue: return .list(v.values.map(model))
        case let v as ObjectValue:
            return .object(
                Dictionary(v.fields.map { ($0.name.value, model($0.value)) }, uniquingKeysWith: { a, _ in a }))
        default: return .string("unexpected value \(value)")
        }
    }

    static func typeText(_ type: GraphQL.`Type`) -> String {
        switch type {
        case let named as NamedType: named.name.value
        case let list as ListType: "[\(typeText(list.type))]"
        case let nonNull as NonNullType: typeText(nonNull.type) + "!"
        default: "?"
        }
    }
}

/// Builds random valid operations: names, aliases, arguments with every kind of value, variables with defaults,
/// directives, inline fragments and fragments that spread each other without cycles.
private struct OperationGenerator {
    typealias Op = GQLOperation
    var random: SplitMix64
    var declared: [String] = []

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func name() -> String {
        let start = Array("_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let rest = start + Array("0123456789")
        var text = String(start[Int.random(in: 0..<start.count, using: &random)])
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            text.append(rest[Int.random(in: 0..<rest.count, using: &random)])
        }
        return ["on", "true", "false", "null"].contains(text) ? text + "_" : text
    }

    mutating func string() -> String {
        var scalars = String.UnicodeScalarView()
        let specials: [Unicode.Scalar] = ["\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{7F}", "$", "#"]
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: scalars.append(specials[Int.random(in: 0..<specials.count, using: &random)])
            case 1: scalars.append(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
            default:
                // Any scalar, surrogates excluded (they are not scalars).
                let value = UInt32.random(in: 0...0x10FFFF, using: &random)
                scalars.append(Unicode.Scalar(value) ?? "?")
            }
        }
        return String(scalars)
    }

    mutating func value(depth: Int, constant: Bool) -> Op.Value {
        switch Int.random(in: 0..<(depth > 2 ? 7 : 9), using: &random) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2:
            return .int(
                chance(20)
                    ? [.min, .max, 0][Int.random(in: 0..<3, using: &random)] : .random(in: -1000...1000, using: &random)
            )
        case 3:
            let number = Double(bitPattern: random.next())
            return .float(number.isFinite ? number : Double.random(in: -1e6...1e6, using: &random))
        case 4: return .string(string())
        case 5: return .enum(name())
        case 6:
            if !constant, let variable = declared.randomElement(using: &random) { return .variable(variable) }
            return .string(string())
        case 7:
            return .list(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth: depth + 1, constant: constant) })
        default:
            var members: [String: Op.Value] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                members[name()] = value(depth: depth + 1, constant: constant)
            }
            return .object(members)
        }
    }

    mutating func arguments() -> [Op.Argument] {
        var names: Set<String> = []
        for _ in 0..<Int.random(in: 0...3, using: &random) { names.insert(name()) }
        return names.sorted().map { Op.Argument($0, value(depth: 0, constant: false)) }
    }

    mutating func directives() -> [Op.Directive] {
        (0..<(chance(25) ? Int.random(in: 1...2, using: &random) : 0)).map { _ in
            var directive = Op.Directive(name())
            directive.arguments = arguments()
            return directive
        }
    }

    mutating func type(depth: Int = 0) -> String {
        let base = depth < 2 && chance(30) ? "[\(type(depth: depth + 1))]" : name()
        return chance(40) ? base + "!" : base
    }

    /// Selections whose fields all have different response names, so none conflict ("Field Selection Merging").
    mutating func selections(depth: Int, fragments: [String]) -> [Op.Selection] {
        var responseNames: Set<String> = []
        return (0..<Int.random(in: 1...4, using: &random)).map { _ in
            let roll = Int.random(in: 0..<10, using: &random)
            if roll == 0, let fragment = fragments.randomElement(using: &random) {
                var spread = Op.FragmentSpread(fragment)
                spread.directives = directives()
                return .fragmentSpread(spread)
            }
            if roll == 1, depth < 3 {
                var inline = Op.InlineFragment(on: chance(70) ? name() : nil) { "id" }
                inline.directives = directives()
                inline.selections = selections(depth: depth + 1, fragments: fragments)
                return .inlineFragment(inline)
            }
            var field = Op.Field(name(), alias: chance(30) ? name() : nil)
            while !responseNames.insert(field.alias ?? field.name).inserted { field.alias = name() }
            field.arguments = arguments()
            field.directives = directives()
            if depth < 3, chance(40) { field.selections = selections(depth: depth + 1, fragments: fragments) }
            return .field(field)
        }
    }

    mutating func operation() -> Op {
        let kinds: [GQLQuery.OperationType] = [.query, .mutation, .subscription]
        var variables: [Op.Variable] = []
        var names: Set<String> = []
        for _ in 0..<Int.random(in: 0...3, using: &random) { names.insert(name()) }
        declared = names.sorted()
        for variable in declared {
            variables.append(.init(variable, type(), default: chance(40) ? value(depth: 0, constant: true) : nil))
        }
        // Fragment i spreads only fragments after it, so there is no cycle.
        let fragmentNames = Array(Set((0..<Int.random(in: 0...3, using: &random)).map { _ in "F" + name() })).sorted()
        var fragments: [Op.Fragment] = []
        for (index, fragmentName) in fragmentNames.enumerated() {
            var fragment = Op.Fragment(fragmentName, on: name()) { "id" }
            fragment.directives = directives()
            fragment.selections = selections(depth: 1, fragments: Array(fragmentNames[(index + 1)...]))
            fragments.append(fragment)
        }
        var op = Op(kinds[Int.random(in: 0..<3, using: &random)], name: chance(70) ? name() : nil, fragments: fragments)
        {
            "id"
        }
        op.variables = variables
        op.directives = directives()
        op.selections = selections(depth: 0, fragments: fragmentNames)
        // Every declared variable must be used; a field whose name is longer than any random name uses them all.
        if !declared.isEmpty {
            var uses = Op.Field("usesAllVariables")
            uses.arguments = declared.map { Op.Argument($0, .variable($0)) }
            op.selections.append(.field(uses))
        }
        return op
    }
}

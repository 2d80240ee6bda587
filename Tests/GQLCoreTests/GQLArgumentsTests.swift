import Foundation
import GQLCore
import Testing

/// ``GQLArguments`` as the store's SQL methods take it. (`Date` arguments are in GQLDateTests.)
@Suite struct GQLArgumentsTests {
    /// Stands in for `User.fetchAll(db, condition, arguments)`.
    private func bind(_ condition: String, _ arguments: GQLArguments = []) -> GQLArguments { arguments }

    @Test func emptyForms() {
        #expect(GQLArguments().isEmpty)
        #expect(bind("1 = 1").isEmpty)
        let array: GQLArguments = []
        let dictionary: GQLArguments = [:]
        #expect(array.isEmpty)
        #expect(dictionary.isEmpty)
        #expect(array == GQLArguments())
        #expect(dictionary == GQLArguments())
    }

    @Test func arrayLiteralOfLiterals() {
        let arguments: GQLArguments = [42]
        #expect(arguments.positional == [.int(42)])
        #expect(arguments.named.isEmpty)
        #expect(!arguments.isEmpty)
    }

    @Test func arrayLiteralOfPlainVariables() {
        let minAge = 30
        let maxAge: Int64 = 35
        let arguments = bind("age >= ? AND age <= ?", [minAge, maxAge])
        #expect(arguments.positional == [.int(30), .int(35)])
        #expect(arguments.named.isEmpty)
    }

    @Test func arrayLiteralOfMixedTypesKeepsOrderAndKinds() {
        let name = "John Smith"
        let approved = true
        let nickname: String? = nil
        let ratio: Float = 0.5
        let avatar = Data([1, 2, 3])
        let big = UInt64.max
        let arguments = bind("…", [name, 7, approved, nickname, ratio, avatar, big, GQLNull, [1, 2]])
        #expect(
            arguments.positional == [
                .string("John Smith"), .int(7), .bool(true), .null, .double(0.5), .data(avatar),
                .string("18446744073709551615"), .null, [1, 2],
            ])
    }

    @Test func dictionaryLiteralOfLiterals() {
        let arguments = bind("age >= :min AND age <= :max", [":min": 18, ":max": 99])
        #expect(arguments.named == [":min": .int(18), ":max": .int(99)])
        #expect(arguments.positional.isEmpty)
        #expect(!arguments.isEmpty)
    }

    @Test func dictionaryLiteralOfPlainVariables() {
        let minAge = 18
        let name = "Ann"
        let missing: Int? = nil
        let arguments: GQLArguments = [":min": minAge, "@name": name, "$missing": missing, "bare": 1.5]
        #expect(arguments.named == [":min": 18, "@name": "Ann", "$missing": nil, "bare": 1.5])
    }

    @Test func dictionaryLiteralWithARepeatedKeyKeepsTheLast() {
        let arguments: GQLArguments = [":a": 1, ":a": 2]
        #expect(arguments.named == [":a": 2])
    }

    @Test func initialisersFromCollections() {
        let list: [any GQLValueConvertible] = [1, "two", false]
        let positional = GQLArguments(list)
        #expect(positional.positional == [1, "two", false])
        #expect(positional.named.isEmpty)

        let map: [String: any GQLValueConvertible] = [":x": 1, ":y": "y"]
        let named = GQLArguments(map)
        #expect(named.named == [":x": 1, ":y": "y"])
        #expect(named.positional.isEmpty)

        #expect(GQLArguments([any GQLValueConvertible]()).isEmpty)
        #expect(GQLArguments([String: any GQLValueConvertible]()).isEmpty)
    }

    @Test func propertiesAreMutable() {
        var arguments: GQLArguments = [1]
        arguments.positional.append(.string("x"))
        arguments.named[":n"] = .bool(true)
        #expect(arguments.positional == [1, "x"])
        #expect(arguments.named == [":n": true])
        arguments.positional.removeAll()
        arguments.named.removeAll()
        #expect(arguments.isEmpty)
    }

    @Test func equalityAndHashing() {
        let a: GQLArguments = [1, "x"]
        let b = GQLArguments([1, "x"])
        let c: GQLArguments = ["x", 1]
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        let named1: GQLArguments = [":a": 1, ":b": 2]
        let named2: GQLArguments = [":b": 2, ":a": 1]
        #expect(named1 == named2)
        #expect(named1.hashValue == named2.hashValue)
    }

    @Test func argumentsAreSendable() async {
        let arguments: GQLArguments = [":id": 1001]
        let id = await Task.detached { arguments.named[":id"] }.value
        #expect(id == .int(1001))
    }
}

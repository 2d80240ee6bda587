import Foundation
import GQLCore
import GQLTestSupport
import Testing

/// `GQLValues`, the ordered JSON object: order kept through literals, parsing, writing and edits; equality and
/// hashing that ignore order; lookups whose cost does not grow with the object.
@Suite struct GQLValuesTests {
    // MARK: - Order

    @Test func literalsKeepTheirWrittenOrder() {
        let values: GQLValues = ["zeta": 1, "alpha": 2, "mid": 3]
        #expect(values.keys == ["zeta", "alpha", "mid"])
        let value: GQLValue = ["b": 1, "a": ["y": 1, "x": 2]]
        #expect(value.objectValue?.keys == ["b", "a"])
        #expect(value["a"]?.objectValue?.keys == ["y", "x"])
        #expect(Array(values.map(\.key)) == ["zeta", "alpha", "mid"])
        #expect(GQLValue.object(["b": 1, "a": 2]).objectValue?.keys == ["b", "a"])
    }

    @Test func parseThenWriteKeepsTheDocumentsOrder() throws {
        let text = #"{"z":1,"a":{"q":true,"b":[{"k2":null,"k1":"v"}]},"m":2.5}"#
        let value = try GQLValue(json: text)
        #expect(try value.jsonString() == text)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        let pretty = try value.jsonString(pretty: true)
        #expect(try GQLValue(json: pretty).jsonString() == text)
        #expect(pretty.range(of: "\"z\"")!.lowerBound < pretty.range(of: "\"m\"")!.lowerBound)
    }

    @Test func sortedKeysWritesEveryLevelInKeyOrder() throws {
        let value = try GQLValue(json: #"{"z":1,"a":{"q":true,"b":2}}"#)
        #expect(try value.jsonString(sortedKeys: true) == #"{"a":{"b":2,"q":true},"z":1}"#)
        #expect(try value.jsonString() == #"{"z":1,"a":{"q":true,"b":2}}"#)
    }

    @Test func aRepeatedNameKeepsItsFirstPlaceAndItsLastValue() throws {
        let value = try GQLValue(json: #"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
        #expect(try value.jsonString() == #"{"a":3,"b":2}"#)
        let literal: GQLValues = ["a": 1, "b": 2, "a": 3]
        #expect(literal.keys == ["a", "b"] && literal["a"] == 3)
    }

    @Test func editsKeepTheOrderOfTheOthers() {
        var values: GQLValues = ["a": 1, "b": 2, "c": 3]
        values["b"] = "two"
        #expect(values.keys == ["a", "b", "c"] && values["b"] == "two")
        values["d"] = 4
        #expect(values.keys == ["a", "b", "c", "d"])
        values["a"] = nil
        #expect(values.keys == ["b", "c", "d"])
        #expect(values.removeValue(forKey: "c") == 3)
        #expect(values.removeValue(forKey: "nope") == nil)
        #expect(values.keys == ["b", "d"])
        #expect(values.updateValue(5, forKey: "d") == 4)
        values["e", default: 0] = 9
        #expect(values.keys == ["b", "d", "e"] && values["e"] == 9)
        values.merge(["b": 1, "f": 6] as GQLValues) { old, _ in old }
        #expect(values.keys == ["b", "d", "e", "f"] && values["b"] == "two")
        #expect(values.filter { $0.key != "d" }.keys == ["b", "e", "f"])
        #expect(values.mapValues { _ in GQLValue.null }.keys == ["b", "d", "e", "f"])
        #expect(values.compactMapValues { $0.intValue.map(GQLValue.int) }.keys == ["d", "e", "f"])
    }

    @Test func aDictionaryComesInKeyOrder() {
        let dictionary: [String: GQLValue] = ["c": 3, "a": 1, "b": 2]
        #expect(GQLValues(dictionary).keys == ["a", "b", "c"])
        #expect(GQLValue.object(dictionary).objectValue?.keys == ["a", "b", "c"])
        #expect(GQLValues(dictionary).dictionary == dictionary)
        let converted = (["y": 1, "x": 2] as [String: Int]).gqlValue
        #expect(converted.objectValue?.keys == ["x", "y"])
    }

    // MARK: - Equality, hashing, Codable

    @Test func equalityAndHashingIgnoreOrder() throws {
        let one = try GQLValue(json: #"{"a":1,"b":{"c":[1,2],"d":null}}"#)
        let other = try GQLValue(json: #"{"b":{"d":null,"c":[1,2]},"a":1}"#)
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(Set([one, other]).count == 1)
        #expect(one != (try GQLValue(json: #"{"a":1,"b":{"c":[2,1],"d":null}}"#)))
        #expect(one != (try GQLValue(json: #"{"a":1,"b":{"c":[1,2]}}"#)))
        #expect(one != (try GQLValue(json: #"{"a":1,"x":{"c":[1,2],"d":null}}"#)))
    }

    @Test func codableWritesInOrderAndReadsThroughJSONDecoder() throws {
        let value: GQLValue = ["b": 1, "a": ["d": true, "c": "x"]]
        let encoded = try JSONEncoder().encode(value)
        #expect(try GQLValue(json: encoded) == value)
        let decoded = try JSONDecoder().decode(GQLValue.self, from: encoded)
        #expect(decoded == value)
        // A Decoder does not say the document's order; members come in key order, the same every time.
        #expect(decoded.objectValue?.keys == ["a", "b"])
    }

    // MARK: - Lookup cost

    private static let lookupRemovals =
        ProcessInfo.processInfo.environment["GQL_LOOKUP_REMOVALS"].flatMap { Int($0) }.map { max($0, 1) } ?? 500

    @Test func lookupsInALargeObjectCostOneProbeWhateverItsSize() throws {
        let seed = TestSeed.make("GQLValues large object")
        var random = SplitMix64(seed: seed)
        var values = GQLValues()
        var order: [String] = []
        for n in 0..<20_000 {
            let key = "k\(random.next() % 1_000_000)-\(n)"
            values[key] = .int(Int64(n))
            order.append(key)
        }
        #expect(values.keys == order)
        for (n, key) in order.enumerated() where n % 97 == 0 {
            #expect(values.probes(toFind: key) == 1)
            #expect(values[key] == .int(Int64(n)))
        }
        #expect(values.probes(toFind: "absent") == 1)
        // Still indexed, and right, after removals move members. Each removal rebuilds the index (O(n), as
        // documented), so 5,000 of them took 30 s of CI's debug build; 500 move every member just the same.
        // GQL_LOOKUP_REMOVALS removes more (up to 19,999).
        let removals = min(Self.lookupRemovals, 19_999)
        for key in order.prefix(removals) { values[key] = nil }
        #expect(values.count == 20_000 - removals)
        #expect(values.index(forKey: order[removals]) == 0)
        #expect(values.probes(toFind: order[19_999]) == 1)
        #expect(values[order[19_999]] == .int(19_999))
        // Parsed objects are indexed the same way.
        let text = "{" + (0..<1_000).map { #""m\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let parsed = try #require(try GQLValue(json: text).objectValue)
        #expect(parsed.probes(toFind: "m999") == 1)
        #expect(parsed["m999"] == 999)
        #expect(parsed.keys.first == "m0" && parsed.keys.last == "m999")
    }

    @Test func smallObjectsScanAtMostTheLimit() {
        var values = GQLValues()
        for n in 0..<GQLValues.linearLimit { values["k\(n)"] = .int(Int64(n)) }
        #expect(values.probes(toFind: "k\(GQLValues.linearLimit - 1)") == GQLValues.linearLimit)
        #expect(values.probes(toFind: "absent") == GQLValues.linearLimit)
        values["one-more"] = 1
        #expect(values.probes(toFind: "absent") == 1)
        values["one-more"] = nil
        #expect(values.probes(toFind: "absent") == GQLValues.linearLimit)
    }
}

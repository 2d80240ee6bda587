import Foundation
import GQLCore
import Testing

/// `GQLValue`'s `Codable` conformance through Foundation's coders, and `GQLValue(encoding:)` / `decode(_:)`.
/// Types with `Date` properties are covered in GQLDateTests (the date format is process-wide).
@Suite struct GQLValueCodableTests {
    struct Address: Codable, Equatable {
        var city: String
        var zip: Int?
    }

    struct Person: Codable, Equatable {
        var name: String
        var age: Int
        var score: Double
        var tags: [String]
        var address: Address
        var extra: GQLValue
        var avatar: Data
    }

    static let person = Person(
        name: "John Smith", age: 42, score: 0.75, tags: ["a", "😀"], address: Address(city: "Oslo", zip: nil),
        extra: ["nested": [1, "two", nil]], avatar: Data([0, 1, 254, 255]))

    private func roundTrip(_ value: GQLValue) throws -> GQLValue {
        try JSONDecoder().decode(GQLValue.self, from: JSONEncoder().encode(value))
    }

    // MARK: - JSONEncoder / JSONDecoder

    @Test func everyKindRoundTripsThroughFoundationCoders() throws {
        let value: GQLValue = [
            "null": nil, "true": true, "false": false, "int": -12, "double": 0.25, "string": "Zoë 😀\n\u{1}",
            "array": [1, "a", [], [:]], "object": ["k": ["deep": 1.5]],
        ]
        #expect(try roundTrip(value) == value)
    }

    @Test func int64LimitsStayExactThroughFoundationCoders() throws {
        let value: GQLValue = [.int(Int64.max), .int(Int64.min), .int(0)]
        #expect(try roundTrip(value) == value)
    }

    @Test func integralDoublesComeBackAsIntsThroughFoundationCoders() throws {
        // JSONEncoder writes 3.0 as "3": JSON text carries no kind, so the number comes back as an int of the
        // same value. GQLValue's own writer keeps the kind (see JSONTests).
        let back = try roundTrip([.double(3.0), .double(-2.0)])
        #expect(back == [.int(3), .int(-2)])
        #expect(back[0]?.doubleValue == 3.0)
    }

    @Test func topLevelScalarsRoundTrip() throws {
        for value: GQLValue in [nil, true, 7, 1.25, "text"] {
            #expect(try roundTrip(value) == value)
        }
    }

    @Test func dataIsEncodedAsBase64AndComesBackAsItsText() throws {
        let bytes = Data([0, 1, 2, 3, 255])
        let back = try roundTrip(.data(bytes))
        #expect(back == .string(bytes.base64EncodedString()))
        #expect(back.dataValue == bytes)
    }

    @Test func nonFiniteDoubleFailsToEncode() throws {
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(GQLValue.double(.nan)) }
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(GQLValue.array([.double(-.infinity)])) }
    }

    @Test func decodesFoundationJSON() throws {
        let json = Data(
            #"{"n": null, "b": false, "i": 9007199254740993, "d": 0.1, "s": "\ud83d\ude00", "a": [{}]}"#.utf8)
        let value = try JSONDecoder().decode(GQLValue.self, from: json)
        #expect(value == ["n": nil, "b": false, "i": 9_007_199_254_740_993, "d": 0.1, "s": "😀", "a": [[:]]])
    }

    @Test func booleansAndNumbersAreNotConfused() throws {
        let value = try JSONDecoder().decode(GQLValue.self, from: Data("[true, 1, 0, false, 1.5]".utf8))
        #expect(value == [true, 1, 0, false, 1.5])
    }

    @Test func structsHoldingGQLValuesRoundTrip() throws {
        struct Envelope: Codable, Equatable {
            var id: Int
            var payload: GQLValue
            var list: [GQLValue]
            var map: GQLValues
        }
        let envelope = Envelope(id: 1, payload: ["x": [1, 2.5]], list: [nil, "a"], map: ["k": true])
        let back = try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope))
        #expect(back == envelope)
    }

    @Test func encodedTextMatchesOwnWriterForNonIntegralValues() throws {
        let value: GQLValue = ["b": [0.5, "x"], "a": nil, "c": ["d": false]]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let foundation = try String(decoding: encoder.encode(value), as: UTF8.self)
        #expect(foundation == (try value.jsonString(sortedKeys: true)))
    }

    // MARK: - Through GQLValue(json:) / jsonString()

    @Test func foundationOutputParsesWithGQLValueJSON() throws {
        let value: GQLValue = ["s": "line\nbreak \"q\" \\ 😀", "n": [.int(Int64.min), .int(Int64.max)], "d": 1e-5]
        let text = try String(decoding: JSONEncoder().encode(value), as: UTF8.self)
        #expect(try GQLValue(json: text) == value)
    }

    @Test func ownOutputDecodesWithJSONDecoder() throws {
        let value: GQLValue = ["s": "tab\there \u{0}", "n": [.int(Int64.min), .int(Int64.max)], "d": 2.5, "o": [:]]
        let back = try JSONDecoder().decode(GQLValue.self, from: value.jsonData(pretty: true))
        #expect(back == value)
    }

    // MARK: - GQLValue(encoding:) and decode(_:)

    @Test func encodingAStructGivesItsJSONShape() throws {
        let value = try GQLValue(encoding: Self.person)
        #expect(value["name"] == "John Smith")
        #expect(value["age"] == 42)
        #expect(value["score"] == 0.75)
        #expect(value["tags"] == ["a", "😀"])
        #expect(value["address"] == ["city": "Oslo"])  // a nil optional is left out
        #expect(value["extra"] == ["nested": [1, "two", nil]])
        #expect(value["avatar"] == .string(Data([0, 1, 254, 255]).base64EncodedString()))
    }

    @Test func structRoundTripsThroughGQLValue() throws {
        let value = try GQLValue(encoding: Self.person)
        #expect(try value.decode(Person.self) == Self.person)
        let viaText = try GQLValue(json: value.jsonString())
        #expect(try viaText.decode(Person.self) == Self.person)
    }

    @Test func encodingScalarsAndCollections() throws {
        #expect(try GQLValue(encoding: 5) == .int(5))
        #expect(try GQLValue(encoding: "s") == .string("s"))
        #expect(try GQLValue(encoding: [1, 2]) == [1, 2])
        #expect(try GQLValue(encoding: ["k": [true]]) == ["k": [true]])
        #expect(try GQLValue(encoding: Int?.none) == .null)
        #expect(try GQLValue(encoding: Int64.min) == .int(Int64.min))
    }

    @Test func decodingScalarsAndCollections() throws {
        #expect(try GQLValue.int(5).decode(Int.self) == 5)
        #expect(try GQLValue.double(2.5).decode(Double.self) == 2.5)
        #expect(try GQLValue.string("x").decode(String.self) == "x")
        #expect(try GQLValue.null.decode(Int?.self) == nil)
        #expect(try GQLValue([1, 2, 3]).decode([Int].self) == [1, 2, 3])
        #expect(try GQLValue.data(Data([9, 8])).decode(Data.self) == Data([9, 8]))
    }

    @Test func encodingANonFiniteDoubleIsAnInvalidValue() throws {
        struct Reading: Encodable { var value: Double }
        let error = try #require(throws: GQLError.self) { try GQLValue(encoding: Reading(value: .nan)) }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("Reading"))
        #expect(error.message.contains("at 'value'"))
        let nested = try #require(throws: GQLError.self) { try GQLValue(encoding: [GQLValue.double(.infinity)]) }
        #expect(nested.code == .invalidValue)
    }

    @Test func typeMismatchNamesTheTypeAndThePath() throws {
        let value: GQLValue = [
            "name": "Ann", "age": "old", "score": 1, "tags": [], "address": ["city": "Oslo"], "extra": nil,
            "avatar": "",
        ]
        let error = try #require(throws: GQLError.self) { try value.decode(Person.self) }
        #expect(error.code == .decoding)
        #expect(error.message.hasPrefix("cannot decode Person: expected Int"))
        #expect(error.message.hasSuffix("at 'age'"))
    }

    @Test func nestedMismatchNamesTheFullPath() throws {
        struct Order: Decodable { var lines: [Address] }
        let value: GQLValue = ["lines": [["city": "A"], ["city": 5]]]
        let error = try #require(throws: GQLError.self) { try value.decode(Order.self) }
        #expect(error.code == .decoding)
        #expect(error.message.contains("expected String"))
        #expect(error.message.hasSuffix("at 'lines.1.city'"))
    }

    @Test func missingKeyNamesTheKey() throws {
        let error = try #require(throws: GQLError.self) { try GQLValue(["zip": 1]).decode(Address.self) }
        #expect(error.code == .decoding)
        #expect(error.message == "cannot decode Address: missing key 'city' at the top level")
    }

    @Test func nullForANonOptionalNamesTheMissingValue() throws {
        let error = try #require(throws: GQLError.self) { try GQLValue.object(["city": nil]).decode(Address.self) }
        #expect(error.code == .decoding)
        #expect(error.message.hasPrefix("cannot decode Address: missing String value"))
        #expect(error.message.hasSuffix("at 'city'"))
    }

    @Test func corruptDataNamesThePath() throws {
        struct Blob: Decodable { var bytes: Data }
        let error = try #require(throws: GQLError.self) { try GQLValue(["bytes": "%%%"]).decode(Blob.self) }
        #expect(error.code == .decoding)
        #expect(error.message.hasSuffix("at 'bytes'"))
    }

    @Test func decodingAValueJSONCannotHoldIsInvalidValue() throws {
        let error = try #require(throws: GQLError.self) { try GQLValue.double(.nan).decode(Double.self) }
        #expect(error.code == .invalidValue)
    }
}

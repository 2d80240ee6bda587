import Foundation
import GQLCore
import Testing

/// Literal conformances, accessors, subscripts and the value semantics of ``GQLValue``.
/// (Dates are covered in GQLDateTests, whose suite owns the process-wide date format.)
@Suite struct GQLValueTests {
    // MARK: - Literals

    @Test func documentedDictionaryLiteralCompilesAndKeepsEachKind() {
        let values: GQLValues = ["userId": 1001, "name": "John Smith", "approved": false]
        #expect(values.count == 3)
        #expect(values["userId"] == .int(1001))
        #expect(values["name"] == .string("John Smith"))
        #expect(values["approved"] == .bool(false))
    }

    @Test func scalarLiterals() {
        let null: GQLValue = nil
        let yes: GQLValue = true
        let int: GQLValue = -42
        let double: GQLValue = 2.5
        let string: GQLValue = "héllo 👋"
        #expect(null == .null)
        #expect(yes == .bool(true))
        #expect(int == .int(-42))
        #expect(double == .double(2.5))
        #expect(string == .string("héllo 👋"))
    }

    @Test func integerLiteralsReachTheInt64Limits() {
        let max: GQLValue = 9_223_372_036_854_775_807
        let min: GQLValue = -9_223_372_036_854_775_808
        #expect(max == .int(Int64.max))
        #expect(min == .int(Int64.min))
    }

    @Test func nestedArrayAndObjectLiterals() {
        let value: GQLValue = [
            "tags": ["a", "b"],
            "owner": ["id": 7, "nickname": nil],
            "scores": [1, 2.5, true, nil, [], [:]],
        ]
        #expect(value["tags"] == .array([.string("a"), .string("b")]))
        #expect(value["owner"] == .object(["id": .int(7), "nickname": .null]))
        #expect(
            value["scores"]
                == .array([.int(1), .double(2.5), .bool(true), .null, .array([]), .object([:])]))
    }

    @Test func emptyLiterals() {
        let array: GQLValue = []
        let object: GQLValue = [:]
        #expect(array == .array([]))
        #expect(object == .object([:]))
        #expect(array.arrayValue?.isEmpty == true)
        #expect(object.objectValue?.isEmpty == true)
    }

    @Test func duplicateKeyInDictionaryLiteralKeepsTheLastValue() {
        let value: GQLValue = ["a": 1, "a": 2]
        #expect(value == .object(["a": .int(2)]))
    }

    @Test func literalInitialiserSyntax() {
        #expect(GQLValue(1) == .int(1))
        #expect(GQLValue("x") == .string("x"))
        #expect(GQLValue(true) == .bool(true))
        #expect(GQLValue(1.5) == .double(1.5))
    }

    // MARK: - GQLValue(_:) from convertible values

    @Test func initFromConvertibleVariables() {
        let age = 43
        let name: Substring = "John Smith".prefix(4)
        let bytes = Data([0, 1, 2, 255])
        let missing: Int? = nil
        let big = UInt64.max
        #expect(GQLValue(age) == .int(43))
        #expect(GQLValue(name) == .string("John"))
        #expect(GQLValue(bytes) == .data(bytes))
        #expect(GQLValue(missing) == .null)
        #expect(GQLValue(big) == .string("18446744073709551615"))
        #expect(GQLValue([age, age + 1]) == [43, 44])
        #expect(GQLValue(GQLValue.bool(false)) == .bool(false))
    }

    // MARK: - Accessors

    @Test func isNull() {
        #expect(GQLValue.null.isNull)
        #expect(!GQLValue.int(0).isNull)
        #expect(!GQLValue.string("").isNull)
        #expect(!GQLValue.bool(false).isNull)
    }

    @Test func boolValue() {
        #expect(GQLValue.bool(true).boolValue == true)
        #expect(GQLValue.bool(false).boolValue == false)
        #expect(GQLValue.int(1).boolValue == nil)
        #expect(GQLValue.string("true").boolValue == nil)
        #expect(GQLValue.null.boolValue == nil)
    }

    @Test func intValue() {
        #expect(GQLValue.int(Int64.min).intValue == Int64.min)
        #expect(GQLValue.int(Int64.max).intValue == Int64.max)
        #expect(GQLValue.double(3.0).intValue == 3)
        #expect(GQLValue.double(-1e15).intValue == -1_000_000_000_000_000)
        #expect(GQLValue.double(3.5).intValue == nil)
        #expect(GQLValue.double(1e19).intValue == nil)
        #expect(GQLValue.double(-1e19).intValue == nil)
        #expect(GQLValue.double(.nan).intValue == nil)
        #expect(GQLValue.double(.infinity).intValue == nil)
        #expect(GQLValue.string("3").intValue == nil)
        #expect(GQLValue.bool(true).intValue == nil)
        #expect(GQLValue.null.intValue == nil)
    }

    @Test func doubleValue() {
        #expect(GQLValue.double(2.25).doubleValue == 2.25)
        #expect(GQLValue.int(-7).doubleValue == -7.0)
        #expect(GQLValue.string("2.25").doubleValue == nil)
        #expect(GQLValue.null.doubleValue == nil)
        let nan = GQLValue.double(.nan).doubleValue
        #expect(nan?.isNaN == true)
    }

    @Test func stringValue() {
        #expect(GQLValue.string("").stringValue == "")
        #expect(GQLValue.string("a\u{0}b").stringValue == "a\u{0}b")
        #expect(GQLValue.int(1).stringValue == nil)
        #expect(GQLValue.data(Data([65])).stringValue == nil)
    }

    @Test func dataValueFromDataAndFromBase64Text() {
        let bytes = Data([0x00, 0xFF, 0x10, 0x80])
        #expect(GQLValue.data(bytes).dataValue == bytes)
        #expect(GQLValue.data(Data()).dataValue == Data())
        #expect(GQLValue.string(bytes.base64EncodedString()).dataValue == bytes)
        #expect(GQLValue.string("not base64!").dataValue == nil)
        #expect(GQLValue.int(1).dataValue == nil)
        #expect(GQLValue.null.dataValue == nil)
    }

    @Test func arrayAndObjectValue() {
        let array: GQLValue = [1, "two"]
        let object: GQLValue = ["k": 1]
        #expect(array.arrayValue == [.int(1), .string("two")])
        #expect(array.objectValue == nil)
        #expect(object.objectValue == ["k": .int(1)])
        #expect(object.arrayValue == nil)
        #expect(GQLValue.string("[]").arrayValue == nil)
    }

    @Test func keySubscript() {
        let value: GQLValue = ["name": "Ann", "empty": nil, "nested": ["deep": [10, 20]]]
        #expect(value["name"] == .string("Ann"))
        #expect(value["empty"] == .null)
        #expect(value["missing"] == nil)
        #expect(value["nested"]?["deep"]?[1] == .int(20))
        #expect(GQLValue.array([1])["name"] == nil)
        #expect(GQLValue.string("name")["name"] == nil)
    }

    @Test func indexSubscript() {
        let value: GQLValue = ["a", "b", "c"]
        #expect(value[0] == .string("a"))
        #expect(value[2] == .string("c"))
        #expect(value[3] == nil)
        #expect(value[-1] == nil)
        #expect(GQLValue.object(["0": 1])[0] == nil)
        #expect(GQLValue.array([])[0] == nil)
    }

    @Test(arguments: [
        (GQLValue.null, "null"), (.bool(true), "Bool"), (.int(1), "Int"), (.double(1), "Double"),
        (.string("s"), "String"), (.data(Data()), "Data"), (.array([]), "Array"), (.object([:]), "Object"),
    ])
    func kindName(value: GQLValue, name: String) {
        #expect(value.kindName == name)
    }

    // MARK: - Value semantics

    @Test func descriptionIsCompactJSONInTheMembersOrder() {
        let value: GQLValue = ["b": 1, "a": [true, nil], "c": "x\"y"]
        #expect(value.description == #"{"b":1,"a":[true,null],"c":"x\"y"}"#)
        #expect("\(GQLValue.double(0.5))" == "0.5")
    }

    @Test func descriptionOfAValueJSONCannotHold() {
        #expect(GQLValue.double(.nan).description == "<invalid JSON value>")
        #expect(GQLValue.array([.double(.infinity)]).description == "<invalid JSON value>")
    }

    @Test func equalityIgnoresObjectMemberOrder() {
        let a: GQLValue = ["x": 1, "y": [1, 2]]
        let b: GQLValue = ["y": [1, 2], "x": 1]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(GQLValue.array([1, 2]) != GQLValue.array([2, 1]))
    }

    @Test func hashableInSetsAndAsDictionaryKeys() {
        let set: Set<GQLValue> = [1, 1, "1", nil, nil, [1], [1], ["a": 1], ["a": 1]]
        #expect(set.count == 5)
        #expect(set.contains(.string("1")))
        #expect(!set.contains(.int(2)))
        var counts: [GQLValue: Int] = [:]
        for value: GQLValue in ["a", "b", "a"] { counts[value, default: 0] += 1 }
        #expect(counts["a"] == 2)
        #expect(counts["b"] == 1)
    }

    @Test func valuesCrossConcurrencyDomains() async {
        let value: GQLValue = ["id": 1, "tags": ["x"]]
        let echoed = await Task.detached { value["tags"]?[0] }.value
        #expect(echoed == .string("x"))
    }
}

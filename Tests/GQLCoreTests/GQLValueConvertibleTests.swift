import Foundation
import GQLCore
import Testing

/// Every type that adopts ``GQLValueConvertible``. `Date` is covered in GQLDateTests (process-wide format).
@Suite struct GQLValueConvertibleTests {
    /// Stands in for the store's and the network's input parameters.
    private func value(_ input: some GQLValueConvertible) -> GQLValue { input.gqlValue }
    private func values(_ input: [String: any GQLValueConvertible]) -> GQLValues {
        GQLValues(input.mapValues(\.gqlValue))
    }

    @Test func gqlValueIsItself() {
        let v: GQLValue = ["a": [1, nil]]
        #expect(v.gqlValue == v)
        #expect(GQLNull == .null)
        #expect(GQLNull.gqlValue == .null)
    }

    @Test func bool() {
        #expect(true.gqlValue == .bool(true))
        #expect(false.gqlValue == .bool(false))
    }

    @Test func strings() {
        #expect("John Smith".gqlValue == .string("John Smith"))
        #expect("".gqlValue == .string(""))
        #expect("😀\u{0}".gqlValue == .string("😀\u{0}"))
        let text = "user:1001"
        #expect(text.dropFirst(5).gqlValue == .string("1001"))
    }

    @Test func signedIntegersAtTheirLimits() {
        #expect(Int.min.gqlValue == .int(Int64(Int.min)))
        #expect(Int.max.gqlValue == .int(Int64(Int.max)))
        #expect(Int8.min.gqlValue == .int(-128))
        #expect(Int8.max.gqlValue == .int(127))
        #expect(Int16.min.gqlValue == .int(-32768))
        #expect(Int16.max.gqlValue == .int(32767))
        #expect(Int32.min.gqlValue == .int(-2_147_483_648))
        #expect(Int32.max.gqlValue == .int(2_147_483_647))
        #expect(Int64.min.gqlValue == .int(Int64.min))
        #expect(Int64.max.gqlValue == .int(Int64.max))
    }

    @Test func unsignedIntegersAtTheirLimits() {
        #expect(UInt8.max.gqlValue == .int(255))
        #expect(UInt16.max.gqlValue == .int(65535))
        #expect(UInt32.max.gqlValue == .int(4_294_967_295))
        #expect(UInt8.min.gqlValue == .int(0))
        #expect(UInt64(0).gqlValue == .int(0))
    }

    @Test func uint64UpToInt64MaxStaysAnInt() {
        #expect(UInt64(Int64.max).gqlValue == .int(Int64.max))
        #expect(UInt(Int64.max).gqlValue == .int(Int64.max))
        #expect(UInt(7).gqlValue == .int(7))
    }

    @Test func uint64AboveInt64MaxBecomesADecimalString() throws {
        #expect((UInt64(Int64.max) + 1).gqlValue == .string("9223372036854775808"))
        #expect(UInt64.max.gqlValue == .string("18446744073709551615"))
        #expect(UInt.max.gqlValue == .string("18446744073709551615"))
        // Nothing is rounded: the text converts back to the exact number.
        let back = try #require(UInt64.max.gqlValue.stringValue)
        #expect(UInt64(back) == UInt64.max)
    }

    @Test func floatingPoint() {
        #expect(1.5.gqlValue == .double(1.5))
        #expect(Double.greatestFiniteMagnitude.gqlValue == .double(.greatestFiniteMagnitude))
        #expect(Float(0.5).gqlValue == .double(0.5))
        #expect(Float(-1.25).gqlValue == .double(-1.25))
        #expect(Float(0.1).gqlValue == .double(Double(Float(0.1))))
        #expect(Double.nan.gqlValue.doubleValue?.isNaN == true)
        #expect(Float.infinity.gqlValue == .double(.infinity))
    }

    @Test func data() {
        let bytes = Data([0xDE, 0xAD, 0xBE, 0xEF])
        #expect(bytes.gqlValue == .data(bytes))
        #expect(Data().gqlValue == .data(Data()))
        #expect(bytes.gqlValue.dataValue == bytes)
    }

    @Test func optionals() {
        let some: Int? = 5
        let none: Int? = nil
        let nestedSome: String?? = .some("x")
        let nestedNone: String?? = .some(nil)
        let outerNone: String?? = nil
        #expect(some.gqlValue == .int(5))
        #expect(none.gqlValue == .null)
        #expect(nestedSome.gqlValue == .string("x"))
        #expect(nestedNone.gqlValue == .null)
        #expect(outerNone.gqlValue == .null)
        let noData: Data? = nil
        #expect(noData.gqlValue == .null)
    }

    @Test func arrays() {
        #expect([1, 2, 3].gqlValue == [1, 2, 3])
        #expect([String]().gqlValue == .array([]))
        #expect([true, false].gqlValue == [true, false])
        #expect([1, nil, 3].gqlValue == [1, nil, 3])
        #expect([[1], [], [2, 3]].gqlValue == [[1], [], [2, 3]])
        #expect([Data([1])].gqlValue == .array([.data(Data([1]))]))
        #expect([UInt64.max].gqlValue == ["18446744073709551615"])
    }

    @Test func dictionaries() {
        #expect(["a": 1, "b": 2].gqlValue == ["a": 1, "b": 2])
        #expect([String: Int]().gqlValue == .object([:]))
        #expect(["x": [1.5, nil]].gqlValue == ["x": [1.5, nil]])
        #expect(["o": ["p": ["q": "r"]]].gqlValue == ["o": ["p": ["q": "r"]]])
        let gqlValues: GQLValues = ["k": [1]]
        #expect(gqlValues.gqlValue == .object(["k": [1]]))
    }

    @Test func plainVariablesWorkLikeLiterals() {
        let userId = 1001
        let name = "John Smith"
        let approved = false
        let nickname: String? = nil
        let score: Float = 2.5
        let values = values([
            "userId": userId, "name": name, "approved": approved, "nickname": nickname, "score": score,
        ])
        #expect(values == ["userId": 1001, "name": "John Smith", "approved": false, "nickname": nil, "score": 2.5])
    }

    @Test func genericAndExistentialUsesAgree() {
        let inputs: [any GQLValueConvertible] = [
            true, "s", 1, Int8(2), Int16(3), Int32(4), Int64(5), UInt8(6), UInt16(7), UInt32(8), UInt64(9), UInt(10),
            1.5, Float(2.5), Data([1]), Int?.none, [1], ["k": 1], GQLValue.null, "sub"[...],
        ]
        let expected: [GQLValue] = [
            true, "s", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1.5, 2.5, .data(Data([1])), nil, [1], ["k": 1], nil, "sub",
        ]
        #expect(inputs.map(\.gqlValue) == expected)
        #expect(value(Int8(-1)) == .int(-1))
        #expect(value(["k": [UInt32.max]]) == ["k": [4_294_967_295]])
    }
}

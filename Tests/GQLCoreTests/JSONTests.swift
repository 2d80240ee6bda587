import Foundation
import GQLCore
import Testing

/// `GQLValue(json:)` and `jsonString()` / `jsonData()`: the toolkit's own JSON parser and writer.
@Suite struct JSONTests {
    // MARK: - Parsing

    @Test func parsesEveryKind() throws {
        let value = try GQLValue(
            json: #"{"n": null, "t": true, "f": false, "i": -12, "d": 0.5, "s": "x", "a": [1], "o": {}}"#)
        #expect(
            value
                == [
                    "n": nil, "t": true, "f": false, "i": -12, "d": 0.5, "s": "x", "a": [1], "o": [:],
                ])
    }

    @Test func parsesTopLevelScalars() throws {
        #expect(try GQLValue(json: "null") == .null)
        #expect(try GQLValue(json: "true") == .bool(true))
        #expect(try GQLValue(json: "  42  ") == .int(42))
        #expect(try GQLValue(json: #""hi""#) == .string("hi"))
    }

    @Test func parsesFromData() throws {
        let value = try GQLValue(json: Data(#"[1,"a"]"#.utf8))
        #expect(value == [1, "a"])
    }

    @Test func skipsAByteOrderMarkAndAllJSONWhitespace() throws {
        let value = try GQLValue(json: Data([0xEF, 0xBB, 0xBF]) + Data(" \t\r\n[ 1 ,\n\t2 ]\r\n ".utf8))
        #expect(value == [1, 2])
    }

    @Test func emptyContainers() throws {
        #expect(try GQLValue(json: "[]") == .array([]))
        #expect(try GQLValue(json: "{}") == .object([:]))
        #expect(try GQLValue(json: "[ ]") == .array([]))
        #expect(try GQLValue(json: "{ \n }") == .object([:]))
        #expect(try GQLValue(json: "[[],{}]") == [[], [:]])
        #expect(try GQLValue.array([]).jsonString() == "[]")
        #expect(try GQLValue.object([:]).jsonString() == "{}")
        #expect(try GQLValue.array([]).jsonString(pretty: true) == "[]")
        #expect(try GQLValue.object([:]).jsonString(pretty: true) == "{}")
    }

    @Test func duplicateMemberKeepsTheLastValue() throws {
        #expect(try GQLValue(json: #"{"a": 1, "a": 2}"#) == ["a": 2])
    }

    // MARK: - Numbers

    @Test func int64LimitsAreExact() throws {
        let max = try GQLValue(json: "9223372036854775807")
        let min = try GQLValue(json: "-9223372036854775808")
        #expect(max == .int(Int64.max))
        #expect(min == .int(Int64.min))
        #expect(try GQLValue.int(Int64.max).jsonString() == "9223372036854775807")
        #expect(try GQLValue.int(Int64.min).jsonString() == "-9223372036854775808")
        let list: GQLValue = [.int(Int64.min), .int(Int64.max), .int(0), .int(-1)]
        #expect(try GQLValue(json: list.jsonString()) == list)
    }

    @Test func integersBeyondInt64BecomeDoubles() throws {
        #expect(try GQLValue(json: "9223372036854775808") == .double(9_223_372_036_854_775_808.0))
        #expect(try GQLValue(json: "-9223372036854775809") == .double(-9_223_372_036_854_775_809.0))
        #expect(try GQLValue(json: "18446744073709551615") == .double(18_446_744_073_709_551_615.0))
        #expect(try GQLValue(json: "123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test func fractionsAndExponentsAreDoubles() throws {
        #expect(try GQLValue(json: "1.0") == .double(1.0))
        #expect(try GQLValue(json: "1e2") == .double(100))
        #expect(try GQLValue(json: "1E+2") == .double(100))
        #expect(try GQLValue(json: "-2.5e-3") == .double(-0.0025))
        #expect(try GQLValue(json: "0") == .int(0))
        #expect(try GQLValue(json: "-0") == .int(0))
        #expect(try GQLValue(json: "0.1") == .double(0.1))
        #expect(try GQLValue(json: "5e-324") == .double(.leastNonzeroMagnitude))
        #expect(try GQLValue(json: "1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
    }

    @Test func integralDoublesKeepTheirKindThroughJSONText() throws {
        let value: GQLValue = [.double(3), .double(-0.0), .double(1e15), .double(1e20), .double(-1234567.0)]
        #expect(try value.jsonString() == "[3.0,0.0,1000000000000000.0,1e+20,-1234567.0]")
        #expect(try GQLValue(json: value.jsonString()) == value)
    }

    @Test(arguments: [
        0.1, -0.1, 1.0 / 3.0, .pi, 1e-7, 123456789.125, 1e300, -1e-300, .leastNonzeroMagnitude,
        Double.greatestFiniteMagnitude,
        Double.leastNormalMagnitude, 4503599627370497.0, 9007199254740993.0,
    ])
    func doublesRoundTripExactly(number: Double) throws {
        let text = try GQLValue.double(number).jsonString()
        let back = try GQLValue(json: text)
        #expect(back == .double(number), "\(text)")
    }

    @Test func nonFiniteDoublesAreRejectedWithInvalidValue() throws {
        for number in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            let error = try #require(throws: GQLError.self) { try GQLValue.double(number).jsonString() }
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("JSON cannot represent"))
        }
    }

    @Test func nonFiniteDoubleDeepInsideIsRejected() throws {
        let value: GQLValue = ["ok": 1, "list": [1, ["bad": .double(.infinity)]]]
        #expect(throws: GQLError.self) { try value.jsonString() }
        #expect(throws: GQLError.self) { try value.jsonData(pretty: true) }
        do {
            _ = try value.jsonString()
            Issue.record("expected a throw")
        } catch GQLError.Code.invalidValue {
            // matched by code
        }
    }

    @Test func outOfRangeNumberIsAnError() throws {
        let error = try #require(throws: GQLError.self) { try GQLValue(json: "[1e999]") }
        #expect(error.code == .invalidJSON)
        #expect(error.message == "number out of range at line 1, column 7")
    }

    // MARK: - Strings and Unicode

    @Test func unicodeIsWrittenAsIsAndReadBack() throws {
        let text = "Zoë, 日本語, 😀👨‍👩‍👧, 🇳🇴, \u{10FFFF}, \u{7F}, \u{2028}"
        let json = try GQLValue.string(text).jsonString()
        #expect(json == "\"" + text + "\"")
        #expect(try GQLValue(json: json) == .string(text))
    }

    @Test func unicodeEscapesAreDecoded() throws {
        #expect(try GQLValue(json: #""\u00e9\u00E9""#) == .string("éé"))
        #expect(try GQLValue(json: #""\u0000""#) == .string("\u{0}"))
        #expect(try GQLValue(json: #""\u65e5\u672c""#) == .string("日本"))
    }

    @Test func surrogatePairEscapesBecomeOneScalar() throws {
        let value = try GQLValue(json: #""\ud83d\ude00 and \uD834\uDD1E""#)
        #expect(value == .string("😀 and 𝄞"))
        #expect(value.stringValue?.unicodeScalars.count == 7)
        #expect(try GQLValue(json: #"{"\ud83d\udc4d": 1}"#) == ["👍": 1])
    }

    @Test func simpleEscapes() throws {
        let value = try GQLValue(json: #""\" \\ \/ \b \f \n \r \t""#)
        #expect(value == .string("\" \\ / \u{8} \u{C} \n \r \t"))
    }

    @Test func controlCharactersAreEscaped() throws {
        #expect(try GQLValue.string("\"\\\n\r\t").jsonString() == #""\"\\\n\r\t""#)
        #expect(
            try GQLValue.string("\u{0}\u{1}\u{8}\u{C}\u{1B}\u{1F}").jsonString()
                == #""\u0000\u0001\u0008\u000c\u001b\u001f""#)
        #expect(try GQLValue.string("/ \u{20}").jsonString() == "\"/  \"")
    }

    @Test func everyControlCharacterRoundTrips() throws {
        let text = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let json = try GQLValue.string(text).jsonString()
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 })
        #expect(try GQLValue(json: json) == .string(text))
    }

    @Test func keysAreEscapedToo() throws {
        let value: GQLValue = ["a\"b\n": 1, "😀": 2]
        let json = try value.jsonString()
        #expect(json == #"{"a\"b\n":1,"😀":2}"#)
        #expect(try GQLValue(json: json) == value)
    }

    @Test func dataIsWrittenAsBase64AndReadBackAsItsText() throws {
        let bytes = Data([0, 1, 2, 253, 254, 255])
        let json = try GQLValue.data(bytes).jsonString()
        #expect(json == "\"AAEC/f7/\"")
        let back = try GQLValue(json: json)
        #expect(back == .string("AAEC/f7/"))
        #expect(back.dataValue == bytes)
    }

    // MARK: - Writing

    @Test func compactOutputKeepsTheOrderAndSortsKeysWhenAsked() throws {
        let value: GQLValue = ["zeta": 1, "alpha": ["b": true, "a": nil], "mid": [1.5, "s"]]
        #expect(try value.jsonString() == #"{"zeta":1,"alpha":{"b":true,"a":null},"mid":[1.5,"s"]}"#)
        #expect(try value.jsonString(sortedKeys: true) == #"{"alpha":{"a":null,"b":true},"mid":[1.5,"s"],"zeta":1}"#)
        #expect(try value.jsonString(pretty: false) == value.jsonString())
    }

    @Test func prettyOutputIndentsTwoSpaces() throws {
        let value: GQLValue = ["b": [1, 2], "a": ["x": nil], "c": [], "d": [:]]
        let expected = """
            {
              "b": [
                1,
                2
              ],
              "a": {
                "x": null
              },
              "c": [],
              "d": {}
            }
            """
        #expect(try value.jsonString(pretty: true) == expected)
        #expect(try GQLValue(json: expected) == value)
    }

    @Test func jsonDataIsTheUTF8OfJSONString() throws {
        let value: GQLValue = ["name": "Zoë", "n": 1]
        #expect(try value.jsonData() == Data(value.jsonString().utf8))
        #expect(try value.jsonData(pretty: true) == Data(value.jsonString(pretty: true).utf8))
    }

    @Test func writerOutputIsAcceptedByFoundation() throws {
        let value: GQLValue = ["s": "😀\u{1}\"", "n": [1, -2.5, 1e300], "o": ["t": true, "z": nil]]
        let object = try JSONSerialization.jsonObject(with: value.jsonData()) as? [String: Any]
        #expect(object?["s"] as? String == "😀\u{1}\"")
        #expect((object?["o"] as? [String: Any])?["t"] as? Bool == true)
    }

    // MARK: - Nesting

    @Test func nestingUpTo512LevelsIsAccepted() throws {
        let text = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try GQLValue(json: text)
        var depth = 1
        while let inner = value[0] {
            value = inner
            depth += 1
        }
        #expect(depth == 512)
        #expect(value == .array([]))
    }

    @Test func nestingDeeperThan512LevelsIsAnError() throws {
        let arrays = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        let error = try #require(throws: GQLError.self) { try GQLValue(json: arrays) }
        #expect(error.code == .invalidJSON)
        #expect(error.message == "nesting deeper than 512 levels at line 1, column 513")

        let objects = String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600)
        #expect(throws: GQLError.self) { try GQLValue(json: objects) }
    }

    @Test func hugeDepthFailsCleanlyWithoutOverflowingTheStack() throws {
        let text = String(repeating: "[", count: 100_000)
        let error = try #require(throws: GQLError.self) { try GQLValue(json: text) }
        #expect(error.message.hasPrefix("nesting deeper than 512 levels"))
    }

    @Test func deepValueRoundTrips() throws {
        var value: GQLValue = "leaf"
        for n in 0..<200 { value = n.isMultiple(of: 2) ? [value] : ["k": value] }
        #expect(try GQLValue(json: value.jsonString()) == value)
        #expect(try GQLValue(json: value.jsonString(pretty: true)) == value)
    }

    // MARK: - Malformed input

    @Test(arguments: [
        ("", "unexpected end of input at line 1, column 1"),
        ("   \n  ", "unexpected end of input at line 2, column 3"),
        ("[1, 2", "expected ',' or ']' in array at line 1, column 6"),
        ("[1 2]", "expected ',' or ']' in array at line 1, column 4"),
        ("[1,]", "unexpected character ']' at line 1, column 4"),
        (#"{"a":1,}"#, "expected a member name in quotes at line 1, column 8"),
        (#"{"a" 1}"#, "expected ':' after member name at line 1, column 6"),
        (#"{"a":1 "b":2}"#, "expected ',' or '}' in object at line 1, column 8"),
        ("{a:1}", "expected a member name in quotes at line 1, column 2"),
        ("['a']", "unexpected character ''' at line 1, column 2"),
        ("tru", "invalid literal, expected 'true' at line 1, column 1"),
        ("[nul]", "invalid literal, expected 'null' at line 1, column 2"),
        ("falsey", "unexpected text after the JSON value at line 1, column 6"),
        ("1 2", "unexpected text after the JSON value at line 1, column 3"),
        ("01", "leading zero in number at line 1, column 2"),
        ("-", "invalid number at line 1, column 2"),
        ("-a", "invalid number at line 1, column 2"),
        ("+1", "unexpected character '+' at line 1, column 1"),
        (".5", "unexpected character '.' at line 1, column 1"),
        ("1.", "digit expected after '.' at line 1, column 3"),
        ("1e", "digit expected in exponent at line 1, column 3"),
        ("1e+", "digit expected in exponent at line 1, column 4"),
        ("NaN", "unexpected character 'N' at line 1, column 1"),
        (#""abc"#, "unterminated string at line 1, column 5"),
        (#""a\"#, "unterminated escape at line 1, column 4"),
        (#""\x""#, "invalid escape '\\x' at line 1, column 4"),
        (#""\u12xy""#, "invalid hex digit in \\u escape at line 1, column 6"),
        (#""\u12""#, "short \\u escape at line 1, column 4"),
        (#""\u12"#, "short \\u escape at line 1, column 4"),
        (#""\uD800""#, "unpaired surrogate in string at line 1, column 8"),
        (#""\uD800\n""#, "unpaired surrogate in string at line 1, column 8"),
        (#""\uDC00""#, "unpaired surrogate in string at line 1, column 8"),
        (#""\uD800\u0041""#, "invalid surrogate pair at line 1, column 14"),
        ("\"a\tb\"", "control character in string at line 1, column 3"),
        ("\"a\nb\"", "control character in string at line 1, column 3"),
        ("é", "unexpected character 'é' at line 1, column 1"),
    ])
    func malformedJSONNamesTheFaultAndItsPosition(text: String, message: String) throws {
        let error = try #require(throws: GQLError.self) { try GQLValue(json: text) }
        #expect(error.code == .invalidJSON)
        #expect(error.message == message)
    }

    @Test func errorPositionCountsLinesAndColumns() throws {
        let text = """
            {
              "a": 1,
              "b": tru
            }
            """
        let error = try #require(throws: GQLError.self) { try GQLValue(json: text) }
        #expect(error.message == "invalid literal, expected 'true' at line 3, column 8")
    }

    @Test func errorColumnCountsCharactersNotBytes() throws {
        let error = try #require(throws: GQLError.self) { try GQLValue(json: #"{"ключ": tru}"#) }
        #expect(error.message == "invalid literal, expected 'true' at line 1, column 10")
        let emoji = try #require(throws: GQLError.self) { try GQLValue(json: "[\"😀\"\n,\"😀😀\" x]") }
        #expect(emoji.message == "expected ',' or ']' in array at line 2, column 7")
    }

    @Test func invalidUTF8IsRejected() throws {
        let inString = try #require(throws: GQLError.self) { try GQLValue(json: Data([0x22, 0xFF, 0xFE, 0x22])) }
        #expect(inString.code == .invalidJSON)
        #expect(inString.message.hasPrefix("string is not valid UTF-8"))
        let truncated = try #require(throws: GQLError.self) { try GQLValue(json: Data([0x22, 0xE2, 0x82, 0x22])) }
        #expect(truncated.message.hasPrefix("string is not valid UTF-8"))
        let bare = try #require(throws: GQLError.self) { try GQLValue(json: Data([0x80])) }
        #expect(bare.message.hasPrefix("unexpected character"))
    }

    // MARK: - Round trips of generated values

    @Test(arguments: 0..<40)
    func generatedValuesRoundTripThroughJSONText(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed))
        let value = GQLValue.random(using: &rng, depth: 4)
        #expect(try GQLValue(json: value.jsonString()) == value)
        #expect(try GQLValue(json: value.jsonString(pretty: true)) == value)
        #expect(try GQLValue(json: value.jsonData()) == value)
    }

    @Test func writingIsDeterministic() throws {
        var rng = SplitMix64(seed: 99)
        let value = GQLValue.random(using: &rng, depth: 5)
        let first = try value.jsonString()
        let copy = try GQLValue(json: first)
        #expect(try copy.jsonString() == first)
    }
}

// MARK: - Helpers

extension GQLValue {
    /// A random JSON value (no `.data`, which JSON text reads back as a string).
    static func random(using rng: inout SplitMix64, depth: Int) -> GQLValue {
        let kinds = depth > 0 ? 7 : 5
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2:
            let choices: [Int64] = [0, -1, 1, .min, .max, Int64.random(in: .min ... .max, using: &rng)]
            return .int(choices.randomElement(using: &rng) ?? 0)
        case 3:
            let choices: [Double] = [
                0.5, -0.0, 3, 1e15, 1e-9, .greatestFiniteMagnitude,
                Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &rng)),
                Double.random(in: -1e6...1e6, using: &rng),
            ]
            return .double(choices.randomElement(using: &rng) ?? 0)
        case 4: return .string(randomString(using: &rng))
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in random(using: &rng, depth: depth - 1) })
        default:
            var object = GQLValues()
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                object[randomString(using: &rng)] = random(using: &rng, depth: depth - 1)
            }
            return .object(object)
        }
    }

    static func randomString(using rng: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "é", "ß",
            "日", "\u{2028}", "\u{FEFF}", "😀", "𝄞", "\u{10FFFF}", "\u{301}",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &rng) {
            scalars.append(pool.randomElement(using: &rng) ?? "a")
        }
        return String(scalars)
    }
}

import Foundation
import GQLCore
import GQLTestSupport
import Testing

/// `GQLValue.isJSONObject(_:)`, the check without building the value, says yes exactly when `GQLValue(json:)`
/// parses the text to an object: GQLSync sends the text it checked as it is and parses it only when it needs the
/// values, so a text one accepts and the other refuses would be a queued item that fails later, or one set aside
/// that is fine.
@Suite struct JSONSyntaxTests {
    private static func parsesToObject(_ text: String) -> Bool {
        guard case .object? = try? GQLValue(json: text) else { return false }
        return true
    }

    private static let cases: [String] = [
        // Objects the parser takes.
        "{}", " {} ", "\u{FEFF}{}", "\t\n\r {\"a\" : 1 , \"b\":[ ] }\n", #"{"a":{"b":{"c":[1,2,{"d":null}]}}}"#,
        #"{"n":null,"t":true,"f":false,"i":-12,"z":-0,"d":0.5,"e":1E+3,"g":2e-3,"s":"x"}"#,
        #"{"esc":"\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00 \u0000"}"#, #"{"é":"ü ✓ 😀","a":"a","a":"b"}"#,
        #"{"big":9223372036854775807,"small":-9223372036854775808,"over":9223372036854775808}"#,
        #"{"long":123456789012345678901234567890,"tiny":1e-400,"frac":0.000000000000000000001}"#,
        // Texts it refuses, or that are no object.
        "", " ", "{", "}", "{]", "[]", "[{}]", "1", "\"{}\"", "null", "{} {}", "{}x", "{},", "\u{FEFF}\u{FEFF}{}",
        #"{"a":1,}"#, #"{,"a":1}"#, #"{"a" 1}"#, #"{a:1}"#, #"{'a':1}"#, #"{"a":01}"#, #"{"a":-}"#, #"{"a":1.}"#,
        #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":1e+}"#, #"{"a":+1}"#, #"{"a":0x10}"#, #"{"a":tru}"#, #"{"a":True}"#,
        #"{"a":nul}"#, #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":1e400}"#, #"{"a":-1e400}"#,
        "{\"a\":\"\u{01}\"}", "{\"a\":\"tab\there\"}", #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\u12G4"}"#,
        #"{"a":"\uD83D"}"#, #"{"a":"\uD83Dx"}"#, #"{"a":"\uD83D\u0041"}"#, #"{"a":"\uDE00"}"#, #"{"a":"unterminated}"#,
        #"{"a":"\"#, #"{"a":[1,2}"#, #"{"a":[1,]}"#, #"{"a":[,1]}"#, "{\"a\":1}\u{0B}", "{\"a\":1}\u{A0}",
        String(repeating: "1", count: 400), "{\"n\":" + String(repeating: "9", count: 400) + "}",
    ]

    @Test func agreesWithTheParserOnEveryCase() {
        for text in Self.cases {
            #expect(GQLValue.isJSONObject(text) == Self.parsesToObject(text), "\(text.debugDescription)")
        }
    }

    @Test func agreesWithTheParserAtTheNestingLimit() {
        for depth in [510, 511, 512, 513, 2000] {
            let text =
                "{\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
            #expect(GQLValue.isJSONObject(text) == Self.parsesToObject(text), "depth \(depth)")
        }
        // 512 levels pass, 513 do not.
        #expect(
            GQLValue.isJSONObject(
                "{\"a\":" + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}"))
        #expect(
            !GQLValue.isJSONObject(
                "{\"a\":" + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}"))
    }

    /// Random texts made of JSON's pieces, broken ones included: the two agree on every one.
    @Test func agreesWithTheParserOnRandomTexts() {
        let pieces = [
            "{", "}", "[", "]", ":", ",", " ", "\"a\"", "\"", "1", "-", "0", ".", "5", "e", "E", "+", "true", "null",
            "fals", "\\", "\\u", "D83D", "\\uDE00", "00e9", "x", "é", "😀", "\n", "\u{01}", "9223372036854775808",
        ]
        var generator = SplitMix64(seed: TestSeed.make("JSON syntax vs parser, random texts"))
        var objects = 0
        for _ in 0..<20_000 {
            var text = Bool.random(using: &generator) ? "{" : ""
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                text += pieces.randomElement(using: &generator) ?? ""
            }
            if Bool.random(using: &generator) { text += "}" }
            let parsed = Self.parsesToObject(text)
            #expect(GQLValue.isJSONObject(text) == parsed, "\(text.debugDescription)")
            if parsed { objects += 1 }
        }
        // Some of them are objects (`{}` alone is one in fifty), so acceptance is compared too, not only refusal.
        #expect(objects >= 100, "\(objects) objects among the random texts")
    }
}

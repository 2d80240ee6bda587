import Foundation
import GQLCore
import GQLTestSupport
import Testing

/// GQLCore's JSON parser against an independent one, Foundation's `JSONSerialization`, on valid texts broken at
/// random: whatever one parser accepts, the other accepts too, and to the same value. The only disagreements allowed
/// are the ones GQLCore chooses on purpose and documents: it refuses escapes that are half a surrogate pair (they are
/// no Unicode text) and numbers too large for a Double. `GQL_FUZZ_COUNT` runs more texts than the default.
@Suite struct JSONDifferentialTests {
    private static let count = ProcessInfo.processInfo.environment["GQL_FUZZ_COUNT"].flatMap { Int($0) } ?? 20_000

    /// Bytes a mutation inserts or writes over: JSON's own punctuation, escapes' letters, multi-byte UTF-8 pieces
    /// (whole and cut), and bytes no JSON text may hold.
    private static let alphabet: [UInt8] =
        Array(#"{}[]:,"\/ 0123456789.eE+-tfnrubx"#.utf8) + [
            0x00, 0x01, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xA9, 0xE2, 0x9C, 0x93, 0xF0, 0x9F, 0x98, 0x80, 0xFF, 0x0A, 0x09,
        ]

    @Test func agreesWithFoundationOnBrokenTexts() throws {
        var rng = SplitMix64(seed: TestSeed.make("JSON parser vs Foundation, broken texts"))
        var accepted = 0
        var refused = 0
        for _ in 0..<Self.count {
            let value = Self.withoutFEFF(GQLValue.random(using: &rng, depth: 4))
            var bytes = Array(try value.jsonData())
            for _ in 0..<Int.random(in: 0...3, using: &rng) { Self.mutate(&bytes, using: &rng) }
            let text = Data(bytes)
            let ours = try? GQLValue(json: text)
            let theirs = try? JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed])
            switch (ours, theirs) {
            case (let ours?, let theirs?):
                accepted += 1
                #expect(
                    Self.same(ours, theirs),
                    "different values for \(Self.show(bytes)): \(String(describing: ours)) vs \(String(describing: theirs))"
                )
            case (nil, nil):
                refused += 1
            case (_?, nil):
                Issue.record("GQLCore accepts what Foundation refuses: \(Self.show(bytes))")
            case (nil, _?):
                #expect(Self.refusedOnPurpose(bytes), "GQLCore refuses what Foundation accepts: \(Self.show(bytes))")
            }
        }
        // Both outcomes occur often, so acceptance and refusal are both compared.
        #expect(accepted >= Self.count / 10 && refused >= Self.count / 10, "\(accepted) accepted, \(refused) refused")
    }

    /// One random change: a byte overwritten, deleted or inserted, or a run of bytes repeated.
    private static func mutate(_ bytes: inout [UInt8], using rng: inout SplitMix64) {
        guard !bytes.isEmpty else {
            bytes.append(alphabet.randomElement(using: &rng) ?? 0x30)
            return
        }
        let at = Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: bytes[at] = alphabet.randomElement(using: &rng) ?? 0x30
        case 1: bytes.remove(at: at)
        case 2: bytes.insert(alphabet.randomElement(using: &rng) ?? 0x30, at: at)
        default:
            let end = min(bytes.count, at + Int.random(in: 1...8, using: &rng))
            bytes.insert(contentsOf: bytes[at..<end], at: at)
        }
    }

    /// Texts GQLCore refuses by design: a `\u` escape of half a surrogate pair, a number beyond Double's range, a
    /// trailing comma, or bytes that are not UTF-8.
    private static func refusedOnPurpose(_ bytes: [UInt8]) -> Bool {
        // A NUL byte makes Foundation guess UTF-16 or UTF-32; JSON between systems is UTF-8 (RFC 8259 §8.1).
        if bytes.contains(0) { return true }
        let text = String(decoding: bytes, as: UTF8.self)
        // Foundation lets a comma end an array or object; RFC 8259 does not.
        if text.range(of: #",\s*[\]}]"#, options: .regularExpression) != nil { return true }
        if text.range(of: #"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"#, options: .regularExpression) != nil { return true }
        return text.range(of: #"[0-9][eE][+]?[0-9]{3}"#, options: .regularExpression) != nil
    }

    /// Whether GQLCore's value is Foundation's: the same kinds, the same numbers, the same Unicode scalars.
    private static func same(_ ours: GQLValue, _ theirs: Any) -> Bool {
        switch ours {
        case .null: return theirs is NSNull
        case .bool(let b): return (theirs as? NSNumber)?.boolValue == b
        case .int(let i):
            if let decimal = theirs as? Decimal { return decimal == Decimal(i) }
            return (theirs as? NSNumber)?.int64Value == i
        case .double(let d):
            // Foundation reads long numbers as a Decimal; its digits, read as a Double, must be GQLCore's Double.
            if let decimal = theirs as? Decimal { return Double(decimal.description) == d }
            return (theirs as? NSNumber)?.doubleValue == d
        case .string(let s):
            guard let other = theirs as? String else { return false }
            return Array(s.unicodeScalars) == Array(other.unicodeScalars)
        case .array(let items):
            guard let others = theirs as? [Any], others.count == items.count else { return false }
            return zip(items, others).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let others = theirs as? [String: Any], others.count == members.count else { return false }
            return members.allSatisfy { key, value in others[key].map { same(value, $0) } ?? false }
        case .data: return false
        }
    }

    /// The value with U+FEFF taken out of every string: Foundation on Linux drops that character from strings
    /// (GQLCore keeps it, as RFC 8259 says), which would make the two differ for a reason that is not GQLCore's.
    private static func withoutFEFF(_ value: GQLValue) -> GQLValue {
        let clean = { (s: String) in String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\u{FEFF}" })) }
        switch value {
        case .string(let s): return .string(clean(s))
        case .array(let items): return .array(items.map(withoutFEFF))
        case .object(let members):
            var copy = GQLValues()
            for (key, member) in members { copy[clean(key)] = withoutFEFF(member) }
            return .object(copy)
        default: return value
        }
    }

    private static func show(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).debugDescription + " (\(bytes.count) bytes)"
    }
}

import Foundation
import GQLCore
import Synchronization
import Testing

/// Everything in this target that turns a `Date` into text or back.
///
/// `GQLDate.custom(_:)` is process-wide, so every test that formats or parses a date, switches the format or
/// relies on the default one lives in this one serialized suite, and each test that switches puts the default
/// back. No other suite in GQLCoreTests formats dates.
@Suite(.serialized) struct GQLDateTests {
    init() { GQLDate.reset() }

    /// Texts collected from many tasks.
    private final class Texts: Sendable {
        private let texts = Mutex<Set<String>>([])
        func insert(_ text: String) { texts.withLock { _ = $0.insert(text) } }
        var all: Set<String> { texts.withLock { $0 } }
    }

    /// A date from milliseconds since 1970, the unit the default format carries.
    private static func date(ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// The milliseconds since 1970 of a date, to the nearest millisecond.
    private static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// A UTC formatter for the switching tests.
    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }

    /// Runs `body` with a custom format, then goes back to the default even if `body` throws.
    private static func withCustom<T>(_ format: String, _ body: () async throws -> T) async rethrows -> T {
        GQLDate.custom(formatter(format))
        defer { GQLDate.reset() }
        return try await body()
    }

    // MARK: - Default format

    @Test func defaultFormatIsExact() throws {
        let date = Date(timeIntervalSince1970: 3661)
        #expect(GQLDate.string(from: date) == "1970-01-01T01:01:01.000Z")
        #expect(try GQLDate.date(from: "1970-01-01T01:01:01.000Z") == date)
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func gqlValueOfADateIsItsText() {
        let date = Date(timeIntervalSince1970: 3661)
        #expect(GQLValue(date) == .string("1970-01-01T01:01:01.000Z"))
        #expect(date.gqlValue == .string("1970-01-01T01:01:01.000Z"))
    }

    /// Texts and their milliseconds since 1970, computed independently (proleptic Gregorian calendar).
    static let knownDates: [(String, Int64)] = [
        ("1970-01-01T01:01:01.000Z", 3_661_000),
        ("1969-12-31T23:59:59.999Z", -1),
        ("1900-01-01T00:00:00.000Z", -2_208_988_800_000),
        ("1582-10-15T00:00:00.000Z", -12_219_292_800_000),
        ("1582-10-04T00:00:00.000Z", -12_220_243_200_000),
        ("1066-10-14T09:30:00.000Z", -28_502_721_000_000),
        ("0001-01-01T00:00:00.000Z", -62_135_596_800_000),
        ("0000-01-01T00:00:00.000Z", -62_167_219_200_000),
        ("1600-02-29T12:00:00.000Z", -11_670_955_200_000),
        ("2000-02-29T23:59:59.999Z", 951_868_799_999),
        ("2024-02-29T00:00:00.000Z", 1_709_164_800_000),
        ("2100-03-01T00:00:00.000Z", 4_107_542_400_000),
        ("2001-01-01T00:00:00.000Z", 978_307_200_000),
        ("2038-01-19T03:14:08.000Z", 2_147_483_648_000),
        ("2026-11-22T10:15:30.123Z", 1_795_342_530_123),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    ]

    @Test(arguments: knownDates)
    func knownDateFormatsAndParses(text: String, ms: Int64) throws {
        #expect(GQLDate.string(from: Self.date(ms: ms)) == text)
        let parsed = try GQLDate.date(from: text)
        #expect(Self.millis(parsed) == ms)
        #expect(GQLDate.string(from: parsed) == text)
    }

    @Test func manyDatesRoundTripToTheMillisecond() throws {
        var rng = SplitMix64(seed: 2024)
        let low: Int64 = -62_167_219_200_000  // 0000-01-01
        let high: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999
        var samples: [Int64] = (0..<5_000).map { _ in Int64.random(in: low...high, using: &rng) }
        samples += (0..<1_000).map { _ in Int64.random(in: -5_000_000_000_000...5_000_000_000_000, using: &rng) }
        samples += [low, high, 0, -1, 1, 999, -999, 1000, -1000]
        for ms in samples {
            let text = GQLDate.string(from: Self.date(ms: ms))
            let parsed = try GQLDate.date(from: text)
            #expect(Self.millis(parsed) == ms, "\(ms) → \(text)")
            #expect(GQLDate.string(from: parsed) == text, "\(ms) → \(text)")
            let fraction = String(format: ".%03dZ", Int(((ms % 1000) + 1000) % 1000))
            #expect(text.hasSuffix(fraction), "\(ms) → \(text)")
        }
    }

    @Test func fieldsAgreeWithFoundationsGregorianCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var rng = SplitMix64(seed: 7)
        // From 1583 on, Foundation's calendar is Gregorian, so it is an independent oracle.
        for _ in 0..<500 {
            let ms = Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &rng)
            let date = Self.date(ms: ms)
            // Ask the calendar about the middle of the second, clear of any rounding at its edges.
            let second = Date(timeIntervalSince1970: Double(ms - ((ms % 1000) + 1000) % 1000) / 1000 + 0.5)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: second)
            let expected = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
                c.minute ?? 0, c.second ?? 0, Int(((ms % 1000) + 1000) % 1000))
            #expect(GQLDate.string(from: date) == expected, "\(ms)")
        }
    }

    @Test(arguments: ["2024-02-29T12:34:56", "1969-12-31T23:59:59", "9999-12-31T23:59:59", "0000-01-01T00:00:00"])
    func everyMillisecondOfASecondRoundTrips(second: String) throws {
        for ms in 0..<1000 {
            let text = second + String(format: ".%03dZ", ms)
            let date = try GQLDate.date(from: text)
            #expect(GQLDate.string(from: date) == text)
        }
    }

    @Test func parsedDatesArePreciseToTheMillisecond() throws {
        let a = try GQLDate.date(from: "2024-02-29T12:34:56.001Z")
        let b = try GQLDate.date(from: "2024-02-29T12:34:56.002Z")
        #expect(abs(b.timeIntervalSince(a) - 0.001) < 1e-6)
        #expect(try GQLDate.date(from: "1970-01-01T00:00:00.001Z") == Date(timeIntervalSince1970: 0.001))
        #expect(try GQLDate.date(from: "1969-12-31T23:59:59.999Z") == Date(timeIntervalSince1970: -0.001))
    }

    @Test func subMillisecondsRoundToTheNearestMillisecond() {
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: 0.0004)) == "1970-01-01T00:00:00.000Z")
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: 0.0006)) == "1970-01-01T00:00:00.001Z")
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: -0.0004)) == "1970-01-01T00:00:00.000Z")
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: -0.0006)) == "1969-12-31T23:59:59.999Z")
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: 59.9996)) == "1970-01-01T00:01:00.000Z")
        #expect(GQLDate.string(from: Date(timeIntervalSince1970: 1.001)) == "1970-01-01T00:00:01.001Z")
    }

    @Test func foundationSentinelDatesFormat() throws {
        let past = GQLDate.string(from: .distantPast)
        let future = GQLDate.string(from: .distantFuture)
        #expect(past == "0000-12-30T00:00:00.000Z")  // Foundation's year 1 is Julian; this is the same day
        #expect(future == "4001-01-01T00:00:00.000Z")
        #expect(try GQLDate.date(from: past) == .distantPast)
        #expect(try GQLDate.date(from: future) == .distantFuture)
    }

    @Test func yearsOutside0000Through9999UseExpandedYears() throws {
        let cases: [(String, Int64)] = [
            ("+010000-01-01T00:00:00.000Z", 253_402_300_800_000),
            ("-000001-12-31T00:00:00.000Z", -62_167_305_600_000),
            ("-271821-04-20T00:00:00.000Z", -8_640_000_000_000_000),  // ECMAScript's first and last dates
            ("+275760-09-13T00:00:00.000Z", 8_640_000_000_000_000),
        ]
        for (text, ms) in cases {
            #expect(GQLDate.string(from: Self.date(ms: ms)) == text)
            #expect(try Self.millis(GQLDate.date(from: text)) == ms, "\(text)")
        }
        #expect(try GQLDate.date(from: "+002024-02-29T00:00:00Z") == GQLDate.date(from: "2024-02-29T00:00:00Z"))
    }

    @Test func nonFiniteDatesFormatWithoutTrapping() {
        for seconds in [Double.infinity, -.infinity, .nan, 1e300] {
            let text = GQLDate.string(from: Date(timeIntervalSince1970: seconds))
            // No date can stand for these; the text must at least not parse back as some other date.
            #expect(throws: GQLError.self, "\(seconds) → \(text)") { try GQLDate.date(from: text) }
        }
    }

    // MARK: - Parsing variants

    @Test(arguments: [
        ("1970-01-01T01:01:01Z", 3_661_000),
        ("1970-01-01T01:01:01.0Z", 3_661_000),
        ("1970-01-01T01:01:01.5Z", 3_661_500),
        ("1970-01-01T01:01:01.12Z", 3_661_120),
        ("1970-01-01T01:01:01.123456Z", 3_661_123),
        ("1970-01-01T01:01:01.123999999Z", 3_661_124),
        ("1970-01-01T01:01:01.9996Z", 3_662_000),
        ("1970-01-01T01:01:01.000", 3_661_000),
        ("1970-01-01T01:01:01", 3_661_000),
        ("1970-01-01t01:01:01.000z", 3_661_000),
        ("1970-01-01 01:01:01.000Z", 3_661_000),
        ("1970-01-01T02:01:01.000+01:00", 3_661_000),
        ("1970-01-01T02:01:01+0100", 3_661_000),
        ("1970-01-01T01:01:01.000+00:00", 3_661_000),
        ("1970-01-01T01:01:01.000-00:00", 3_661_000),
        ("1969-12-31T19:31:01.000-05:30", 3_661_000),
        ("1970-01-02T00:46:01.000+23:45", 3_661_000),
        ("2024-03-01T00:30:00.000+01:00", 1_709_249_400_000),
        ("1970-01-01T00:00:60Z", 60_000),
    ])
    func parsesVariants(text: String, ms: Int64) throws {
        #expect(try Self.millis(GQLDate.date(from: text)) == ms)
    }

    @Test func leapDaysParseOnlyInLeapYears() throws {
        for year in ["2024", "2000", "1600", "0000", "9996"] {
            #expect(throws: Never.self) { try GQLDate.date(from: "\(year)-02-29T00:00:00.000Z") }
        }
        for year in ["2023", "1900", "2100", "9999"] {
            #expect(throws: GQLError.self) { try GQLDate.date(from: "\(year)-02-29T00:00:00.000Z") }
        }
    }

    @Test(arguments: [
        "", "yesterday", "1970-01-01", "1970-01-01T01:01", "19700101T010101Z", "70-01-01T01:01:01Z",
        "1970-1-01T01:01:01Z", "1970/01/01 01:01:01", "1970-01-01X01:01:01Z", "1970-01-01T01-01-01Z",
        "1970-00-01T00:00:00Z", "1970-13-01T00:00:00Z", "1970-01-00T00:00:00Z", "1970-01-32T00:00:00Z",
        "2023-02-29T00:00:00Z", "2024-02-30T00:00:00Z", "2024-04-31T00:00:00Z", "2024-06-31T00:00:00Z",
        "1970-01-01T24:00:00Z", "1970-01-01T00:60:00Z", "1970-01-01T00:00:61Z", "1970-01-01T01:01:01.Z",
        "1970-01-01T01:01:01,5Z", "1970-01-01T01:01:01.000ZZ", "1970-01-01T01:01:01.000 Z", "1970-01-01T01:01:01.000Zx",
        "1970-01-01T01:01:01+1", "1970-01-01T01:01:01+01:0", "1970-01-01T01:01:01+24:00", "1970-01-01T01:01:01+01:60",
        "1970-01-01T01:01:01UTC", " 1970-01-01T01:01:01Z", "1970-01-01T01:01:01Z ", "+1970-01-01T01:01:01Z",
        "-70-01-01T01:01:01.000Z", "１９７０-01-01T01:01:01Z",
    ])
    func invalidTextIsAnErrorNamingTheText(text: String) throws {
        let error = try #require(throws: GQLError.self) { try GQLDate.date(from: text) }
        #expect(error.code == .invalidValue)
        #expect(error.message == "'\(text)' is not an ISO 8601 date such as 1970-01-01T01:01:01.000Z")
    }

    @Test func invalidTextMatchesByCodeInACatch() {
        var matched = false
        do {
            _ = try GQLDate.date(from: "31/12/2024")
        } catch GQLError.Code.invalidValue {
            matched = true
        } catch {
            matched = false
        }
        #expect(matched)
    }

    // MARK: - Dates as values and arguments

    @Test func datesInsideConvertibleCollections() {
        let date = Date(timeIntervalSince1970: 3661)
        let none: Date? = nil
        let some: Date? = date
        #expect([date].gqlValue == ["1970-01-01T01:01:01.000Z"])
        #expect(["at": date].gqlValue == ["at": "1970-01-01T01:01:01.000Z"])
        #expect(none.gqlValue == .null)
        #expect(some.gqlValue == "1970-01-01T01:01:01.000Z")
    }

    @Test func datesAsArguments() {
        let since = Date(timeIntervalSince1970: 3661)
        let positional: GQLArguments = [since, 1]
        let named: GQLArguments = [":since": since]
        #expect(positional.positional == ["1970-01-01T01:01:01.000Z", 1])
        #expect(named.named == [":since": "1970-01-01T01:01:01.000Z"])
    }

    struct Event: Codable, Equatable {
        var name: String
        var at: Date
        var until: Date?
        var history: [Date]
    }

    @Test func codableDatesBecomeISOTextAndComeBack() throws {
        let event = Event(
            name: "launch", at: Self.date(ms: 1_795_342_530_123), until: nil,
            history: [Self.date(ms: -1), Self.date(ms: 951_868_799_999)])
        let value = try GQLValue(encoding: event)
        #expect(value["at"] == "2026-11-22T10:15:30.123Z")
        #expect(value["until"] == nil)
        #expect(value["history"] == ["1969-12-31T23:59:59.999Z", "2000-02-29T23:59:59.999Z"])
        let back = try value.decode(Event.self)
        #expect(back == event)
        #expect(try GQLValue(json: value.jsonString()).decode(Event.self) == event)
    }

    @Test func codableDatesKeepMillisecondsOnly() throws {
        let precise = Date(timeIntervalSince1970: 1.23456)
        let event = Event(name: "x", at: precise, until: precise, history: [])
        let back = try GQLValue(encoding: event).decode(Event.self)
        #expect(back.at == Date(timeIntervalSince1970: 1.235))
        #expect(back.until == Date(timeIntervalSince1970: 1.235))
    }

    @Test func badDateTextInADecodedValueNamesThePath() throws {
        let value: GQLValue = ["name": "x", "at": "1970-01-01T01:01:01.000Z", "history": ["2024-02-30T00:00:00Z"]]
        let error = try #require(throws: GQLError.self) { try value.decode(Event.self) }
        #expect(error.code == .decoding)
        #expect(error.message.contains("'2024-02-30T00:00:00Z' is not an ISO 8601 date"))
        #expect(error.message.hasSuffix("at 'history.0'"))
    }

    // MARK: - Concurrency

    @Test func defaultFormatFromManyTasks() async throws {
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<64 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(task))
                    var failures = 0
                    for _ in 0..<200 {
                        let ms = Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &rng)
                        let text = GQLDate.string(from: Self.date(ms: ms))
                        if (try? GQLDate.date(from: text)).map(Self.millis) != ms { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}

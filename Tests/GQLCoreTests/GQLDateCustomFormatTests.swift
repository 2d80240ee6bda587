import Foundation
import GQLCore
import Synchronization
import XCTest

/// The tests that switch `GQLDate.custom(_:)`, which is process-wide.
///
/// They are XCTest cases on purpose: `swift test` runs XCTest cases one at a time and before any Swift Testing
/// test, so no other test (of this target or of GQLStoreTests) formats a date while a custom format is active.
final class GQLDateCustomFormatTests: XCTestCase {
    override func setUp() { GQLDate.reset() }
    override func tearDown() { GQLDate.reset() }

    private struct Event: Codable, Equatable {
        var name: String
        var at: Date
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }

    private let date = Date(timeIntervalSince1970: 3661)

    func testCustomFormatIsUsedEverywhereUntilReset() throws {
        GQLDate.custom(Self.formatter("yyyy/MM/dd HH:mm"))
        XCTAssertEqual(GQLDate.string(from: date), "1970/01/01 01:01")
        XCTAssertEqual(try GQLDate.date(from: "1970/01/01 01:01"), Date(timeIntervalSince1970: 3660))
        XCTAssertEqual(GQLValue(date), "1970/01/01 01:01")
        XCTAssertEqual(date.gqlValue, "1970/01/01 01:01")
        let arguments: GQLArguments = [date]
        XCTAssertEqual(arguments.positional, ["1970/01/01 01:01"])
        let value = try GQLValue(encoding: Event(name: "e", at: date))
        XCTAssertEqual(value["at"], "1970/01/01 01:01")
        XCTAssertEqual(try value.decode(Event.self).at, Date(timeIntervalSince1970: 3660))
        GQLDate.reset()
        XCTAssertEqual(GQLDate.string(from: date), "1970-01-01T01:01:01.000Z")
    }

    func testDefaultTextIsRejectedWhileACustomFormatIsActive() {
        GQLDate.custom(Self.formatter("yyyy/MM/dd HH:mm"))
        XCTAssertThrowsError(try GQLDate.date(from: "1970-01-01T01:01:01.000Z")) { error in
            let error = error as? GQLError
            XCTAssertEqual(error?.code, .invalidValue)
            XCTAssertEqual(error?.message, "'1970-01-01T01:01:01.000Z' is not a date in the custom format")
        }
        GQLDate.reset()
        XCTAssertThrowsError(try GQLDate.date(from: "1970/01/01 01:01"))
    }

    func testCustomNilAndResetBothRestoreTheDefault() throws {
        GQLDate.custom(Self.formatter("dd.MM.yyyy"))
        XCTAssertEqual(GQLDate.string(from: date), "01.01.1970")
        GQLDate.custom(nil)
        XCTAssertEqual(GQLDate.string(from: date), "1970-01-01T01:01:01.000Z")
        GQLDate.custom(Self.formatter("dd.MM.yyyy"))
        XCTAssertEqual(try GQLDate.date(from: "29.02.2024"), Date(timeIntervalSince1970: 1_709_164_800))
        GQLDate.reset()
        XCTAssertEqual(try GQLDate.date(from: "1970-01-01T01:01:01.000Z"), date)
    }

    func testSwitchingReplacesTheEarlierCustomFormat() {
        GQLDate.custom(Self.formatter("yyyy"))
        GQLDate.custom(Self.formatter("HH:mm:ss"))
        XCTAssertEqual(GQLDate.string(from: date), "01:01:01")
    }

    func testCustomFormatterInAnotherTimeZone() throws {
        let formatter = Self.formatter("yyyy-MM-dd HH:mm:ss ZZZZZ")
        formatter.timeZone = TimeZone(secondsFromGMT: 2 * 3600)
        GQLDate.custom(formatter)
        let date = Date(timeIntervalSince1970: 1_795_342_530)
        let text = GQLDate.string(from: date)
        XCTAssertEqual(text, "2026-11-22 12:15:30 +02:00")
        XCTAssertEqual(try GQLDate.date(from: text), date)
    }

    func testCustomFormatFromManyThreads() {
        // Whole seconds: DateFormatter truncates fractions, which is Foundation's business, not GQLDate's.
        GQLDate.custom(Self.formatter("yyyy-MM-dd'T'HH:mm:ss"))
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 64) { task in
            for n in 0..<100 {
                let seconds = Int64(-2_208_988_800 + (task * 100 + n) * 1_234_567)
                let text = GQLDate.string(from: Date(timeIntervalSince1970: Double(seconds)))
                if text.hasSuffix("Z") { failures.add(1, ordering: .relaxed) }  // the default leaked through
                let back = (try? GQLDate.date(from: text)).map { Int64($0.timeIntervalSince1970.rounded()) }
                if back != seconds { failures.add(1, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
    }

    func testSwitchingWhileOtherThreadsFormat() {
        let seen = Mutex<Set<String>>([])
        let date = self.date
        DispatchQueue.concurrentPerform(iterations: 17) { worker in
            for n in 0..<500 {
                if worker == 0 {
                    if n.isMultiple(of: 2) {
                        GQLDate.custom(Self.formatter("yyyy/MM/dd HH:mm"))
                    } else {
                        GQLDate.reset()
                    }
                } else {
                    let text = GQLDate.string(from: date)
                    seen.withLock { _ = $0.insert(text) }
                    _ = try? GQLDate.date(from: text)
                }
            }
        }
        // Every text is whole, in one format or the other, never a mix.
        let texts = seen.withLock { $0 }
        XCTAssertTrue(texts.isSubset(of: ["1970-01-01T01:01:01.000Z", "1970/01/01 01:01"]))
        XCTAssertFalse(texts.isEmpty)
    }
}

import Foundation
import Synchronization

/// How dates become text and back: ISO 8601 with milliseconds in UTC by default,
/// `1970-01-01T01:01:01.000Z`.
///
/// The store keeps `Date` properties as this text, and `Date` arguments are bound as it. Switch the format
/// once, process-wide, with ``custom(_:)``; the switch is thread-safe.
///
/// ```swift
/// let text = GQLDate.string(from: Date())        // "2026-11-22T10:15:30.123Z"
/// let date = try GQLDate.date(from: text)
/// let f = DateFormatter(); f.dateFormat = "yyyy/MM/dd HH:mm"; f.timeZone = TimeZone(identifier: "UTC")
/// GQLDate.custom(f)
/// ```
public enum GQLDate {
    /// A `DateFormatter` kept behind the lock; formatters are only touched while it is held.
    private final class Custom: @unchecked Sendable {
        let formatter: DateFormatter
        init(_ formatter: DateFormatter) { self.formatter = formatter }
    }

    private static let custom = GQLLocked<Custom?>(nil)

    /// Makes every later conversion use `formatter`. Pass `nil` to go back to the default ISO 8601 format.
    public static func custom(_ formatter: DateFormatter?) {
        let box = formatter.map(Custom.init)
        custom.withLock { $0 = box }
    }

    /// Goes back to the default ISO 8601 format with milliseconds.
    public static func reset() { custom(nil) }

    /// The date as text in the current format.
    public static func string(from date: Date) -> String {
        if let box = custom.withLock({ $0 }) {
            return custom.withLock { _ in box.formatter.string(from: date) }
        }
        return iso8601(date)
    }

    /// Parses text in the current format. The default format also accepts a missing fraction, any number
    /// of fraction digits and a `±hh:mm` offset. Years outside 0000...9999 are written and read as ISO 8601
    /// expanded years, a sign and six digits (`+010000-01-01T00:00:00.000Z`).
    ///
    /// - Throws: ``GQLError`` `.invalidValue` naming the text.
    public static func date(from text: String) throws -> Date {
        if let box = custom.withLock({ $0 }) {
            if let date = custom.withLock({ _ in box.formatter.date(from: text) }) { return date }
            throw GQLError(.invalidValue, "'\(text)' is not a date in the custom format")
        }
        guard let date = parseISO8601(text) else {
            throw GQLError(.invalidValue, "'\(text)' is not an ISO 8601 date such as 1970-01-01T01:01:01.000Z")
        }
        return date
    }

    // MARK: - Default format, without Foundation's formatters (they dominate row decoding otherwise)

    static func iso8601(_ date: Date) -> String {
        // Round to the nearest millisecond, not down: a `Date` holds a binary fraction, so the date parsed from
        // ".123" may sit a hair below 123 ms, and flooring would print ".122" (and drift on every round trip).
        guard let totalMillis = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) else {
            return ISO8601DateFormatter().string(from: date)  // NaN, infinite or beyond Int64 milliseconds
        }
        var days = totalMillis / 86_400_000
        var millisOfDay = totalMillis % 86_400_000
        if millisOfDay < 0 {
            millisOfDay += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        guard abs(year) <= 999_999 else { return ISO8601DateFormatter().string(from: date) }
        let seconds = millisOfDay / 1000
        var bytes = [UInt8](repeating: 0, count: 27)
        var i = 0
        func put(_ value: Int64, _ width: Int) {
            var v = value
            for n in stride(from: width - 1, through: 0, by: -1) {
                bytes[i + n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            i += width
        }
        func sep(_ c: Character) {
            bytes[i] = c.asciiValue ?? 0
            i += 1
        }
        if (0...9999).contains(year) {
            put(year, 4)
        } else {
            // ISO 8601 expanded year, as ECMAScript writes it: sign and six digits (+010000, -000001).
            sep(year < 0 ? "-" : "+")
            put(abs(year), 6)
        }
        sep("-"); put(month, 2); sep("-"); put(day, 2); sep("T")
        put(seconds / 3600, 2); sep(":"); put(seconds / 60 % 60, 2); sep(":"); put(seconds % 60, 2)
        sep("."); put(millisOfDay % 1000, 3); sep("Z")
        return String(decoding: bytes[..<i], as: UTF8.self)
    }

    static func parseISO8601(_ text: String) -> Date? {
        var utf8 = Array(text.utf8)
        if utf8.count < 19 { return nil }
        var i = 0
        func number(_ width: Int) -> Int64? {
            guard i + width <= utf8.count else { return nil }
            var v: Int64 = 0
            for _ in 0..<width {
                let c = utf8[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < utf8.count, utf8[i] == c else { return false }
            i += 1
            return true
        }
        var yearSign: Int64 = 1
        var yearWidth = 4
        if utf8[0] == 43 || utf8[0] == 45 {  // expanded year: sign and six digits
            yearSign = utf8[0] == 45 ? -1 : 1
            yearWidth = 6
            i = 1
        }
        guard let yearDigits = number(yearWidth), expect(45), let month = number(2), expect(45),
            let day = number(2)
        else {
            return nil
        }
        let year = yearSign * yearDigits
        guard i < utf8.count, utf8[i] == 84 || utf8[i] == 116 || utf8[i] == 32 else { return nil }
        i += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2) else {
            return nil
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            return nil
        }
        var fraction = 0.0
        if i < utf8.count, utf8[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < utf8.count, utf8[i] >= 48, utf8[i] <= 57 {
                fraction += Double(utf8[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offsetSeconds: Int64 = 0
        if i < utf8.count {
            if utf8[i] == 90 || utf8[i] == 122 {
                i += 1
            } else if utf8[i] == 43 || utf8[i] == 45 {
                let sign: Int64 = utf8[i] == 45 ? -1 : 1
                i += 1
                guard let oh = number(2), oh < 24 else { return nil }
                _ = expect(58)
                guard let om = number(2), om < 60 else { return nil }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        guard i == utf8.count else { return nil }
        utf8.removeAll()
        let days = daysFromCivil(year: year, month: month, day: day)
        // Reject days the month does not have (2023-02-29, 04-31) instead of rolling into the next month.
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        // Round to the millisecond the text carried, so a formatted date parses back to the same value.
        let millis = (fraction * 1000).rounded()
        return Date(timeIntervalSince1970: Double(seconds) + millis / 1000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    package static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (month <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, month, day)
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads an HTTP `Retry-After` value (RFC 9110, 10.2.3): a number of seconds, or an HTTP date.
package enum RetryAfter {
    /// The longest wait taken from a server: a larger one (or a date further ahead) is cut to this.
    static let longest: Duration = .seconds(3600)

    /// The wait `value` asks for at `now`, between zero and ``longest``; `nil` for a value that is neither
    /// delta-seconds nor an IMF-fixdate (a negative number, a word, an obsolete date form), which is ignored.
    static func duration(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Digits only; more than fit in an Int are far past the longest wait anyway.
            guard let seconds = Int(text), seconds < 3600 else { return longest }
            return .seconds(seconds)
        }
        guard let date = imfFixdate(text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        guard seconds > 0 else { return .zero }
        return seconds >= 3600 ? longest : .milliseconds(Int64(seconds * 1000))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func imfFixdate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), parts[1].count == 2, let month = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]),
            let minute = Int(clock[1]), let second = Int(clock[2]),
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&fields)))
    }
}

import Foundation

/// The `Date` header's value (RFC 9110's IMF-fixdate), formatted once per second.
package struct HTTPDate {
    private var second = -1
    private var text = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func now() -> String {
        let current = time(nil)
        if current != second {
            second = current
            text = Self.format(current)
        }
        return text
    }

    package static func format(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

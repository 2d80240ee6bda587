import Foundation
import GQLNet

/// What an HTTP answer's header fields say about caching it (RFC 9111): how long its fields stay fresh
/// (`Cache-Control: max-age` less the age the answer already has, §4.2.3), whether they must be revalidated
/// before every use (`no-cache`, §5.2.2.4), and whether it may be stored at all (`no-store`, §5.2.2.5; `private`
/// answers are stored: this is a private cache, §5.2.2.7).
///
/// `max-age`: the first counts (§4.2.1); a value above 2^31 counts as 2^31 (§1.2.2), so a deadline stays finite
/// whatever the server sends; an invalid value (negative, fractional, empty, missing) is read as 0, which makes
/// the answer stale at once, as §4.2.1 encourages. The age: the larger of the `Age` field and the apparent age
/// from the `Date` field (`now` less the date, at least 0), each at most 2^31. `Age`: its first field line
/// counts, and of a list its first member; an invalid value (not a plain non-negative integer) is ignored
/// (§5.1). `Date`: its first
/// field line counts, an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); anything else (the obsolete date forms
/// included) is ignored. `no-cache` without field names: stored, but stale at once and served only to
/// `cacheOnly`, never in place of the server's answer, not even when the network fails (§4.2.4; see
/// ``mustRevalidate``); `no-cache="…"` names header fields only, which this cache does not keep, so it is ignored
/// (§5.2.2.4).
package enum CacheControl {
    /// The greatest delta-seconds a cache must honour (RFC 9111 §1.2.2).
    static let greatestDeltaSeconds: Double = 2_147_483_648

    /// The deadline a field of a `no-cache` answer is stored with: past any time, and so stale by more than any
    /// `maxStale` can allow (a finite number, so the record's text form stays JSON).
    package static let mustRevalidate = -Double.greatestFiniteMagnitude

    /// Whether an answer stale by `staleness` seconds holds a field with the ``mustRevalidate`` deadline: only
    /// that deadline leaves a field this far past (any other is a time near the clock's, any configured age
    /// finite).
    static func mustBeRevalidated(staleness: Double) -> Bool {
        staleness >= -mustRevalidate / 2
    }

    /// What the header fields of one answer say.
    package struct Directives: Sendable, Equatable {
        /// Seconds the answer's fields stay fresh from its arrival (`max-age` less the age, at least 0); `nil`
        /// without a `max-age`.
        package var freshFor: Double?
        /// `no-store`: the answer is returned but not written to the cache.
        package var noStore = false
        /// `no-cache` (without field names): the answer is stored, but must be revalidated before every use.
        package var noCache = false

        package init(freshFor: Double? = nil, noStore: Bool = false, noCache: Bool = false) {
            self.freshFor = freshFor
            self.noStore = noStore
            self.noCache = noCache
        }

        /// The deadline the answer's fields get, from `now`: ``mustRevalidate`` for `no-cache`, `now` plus
        /// ``freshFor`` with a `max-age`, `nil` (the configuration's ages) otherwise.
        package func deadline(now: Double) -> Double? {
            noCache ? CacheControl.mustRevalidate : freshFor.map { now + $0 }
        }
    }

    /// The directives of an answer's header fields (any case of the field names), received at `now` (seconds since
    /// 1970: the `Date` field's apparent age is measured to it).
    package static func directives(of fields: [(name: String, value: String)], now: Double) -> Directives {
        let parsed = fields.filter { $0.name.lowercased() == "cache-control" }.flatMap { parse($0.value) }
        let noStore = parsed.contains { $0.name == "no-store" }
        let noCache = parsed.contains { $0.name == "no-cache" && $0.argument == nil }
        guard let maxAge = maxAge(in: parsed) else { return Directives(noStore: noStore, noCache: noCache) }
        let stated = fields.first { $0.name.lowercased() == "age" }.flatMap { Self.age($0.value) } ?? 0
        let apparent = fields.first { $0.name.lowercased() == "date" }.flatMap { apparentAge($0.value, now: now) } ?? 0
        let age = max(stated, apparent)
        return Directives(freshFor: max(maxAge - age, 0), noStore: noStore, noCache: noCache)
    }

    package static func maxAge(_ value: String?) -> Double? {
        value.flatMap { maxAge(in: parse($0)) }
    }

    private static func maxAge(in directives: [(name: String, argument: String?)]) -> Double? {
        guard let directive = directives.first(where: { $0.name == "max-age" }) else { return nil }
        guard let argument = directive.argument else { return 0 }
        return deltaSeconds(argument) ?? 0
    }

    /// The seconds of an `Age` field value (RFC 9111 §5.1): of a list (`10, 20`), the first member; `nil` (the
    /// field is ignored) when that is not delta-seconds.
    package static func age(_ value: String) -> Double? {
        let first = value.prefix { $0 != "," }
        return deltaSeconds(first.trimmingCharacters(in: .whitespaces))
    }

    /// The apparent age of an answer whose `Date` field is `value`, received at `now` (RFC 9111 §4.2.3): `now` less
    /// the date, at least 0 (a date ahead of the clock), at most 2^31; `nil` when `value` is not an IMF-fixdate.
    package static func apparentAge(_ value: String, now: Double) -> Double? {
        guard let date = RetryAfter.imfFixdate(value.trimmingCharacters(in: .whitespaces)) else { return nil }
        return min(max(now - date.timeIntervalSince1970, 0), greatestDeltaSeconds)
    }

    /// Whether a `Cache-Control` value holds `no-store`.
    package static func noStore(_ value: String?) -> Bool {
        value.map { parse($0).contains { $0.name == "no-store" } } ?? false
    }

    /// The directives of a `Cache-Control` value (RFC 9111 §5.2): lowercased names with their arguments (quotes
    /// removed), split at commas outside quoted strings, so `no-cache="a, b"` is one directive; empty ones left out.
    /// The lines of a field are read one by one, so a quote one line leaves open ends with it.
    static func parse(_ value: String) -> [(name: String, argument: String?)] {
        var items: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        for index in value.indices {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                items.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        items.append(value[start...])
        return items.compactMap { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first, !name.isEmpty else { return nil }
            guard parts.count == 2 else { return (name.lowercased(), nil) }
            var argument = parts[1]
            if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
                argument = String(argument.dropFirst().dropLast())
            }
            return (name.lowercased(), argument)
        }
    }

    /// Delta-seconds (RFC 9111 §1.2.2): digits only, at most 2^31; `nil` when `text` is not that.
    private static func deltaSeconds(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        // 309 digits and more parse to +inf: past 2^31 like any other great value.
        guard let seconds = Double(text), seconds.isFinite else { return greatestDeltaSeconds }
        return min(seconds, greatestDeltaSeconds)
    }
}

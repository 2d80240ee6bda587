import Foundation
import GQLCore

/// When a field goes stale: the ages of ``GQLCache/Configuration/maxAge`` in seconds, and the receive times the
/// record store keeps per field.
///
/// Each record written while expiry is on holds `"__received": {"<field key>": <seconds since 1970>}` beside its
/// fields (GraphQL reserves names starting with `__`, so no field can collide with it). A field's time is set
/// each time an answer brings it, whether or not its value changed, which is not a change watchers hear of.
///
/// A field stored from an HTTP answer that carried `Cache-Control: max-age=N` holds its deadline instead, in
/// `"__expires": {"<field key>": <seconds since 1970>}`: the server's word wins over ``maxAge(_:_:)`` for that
/// field until an answer without the header brings it again.
struct FieldExpiry: Sendable {
    static let receivedMember = "__received"
    static let expiresMember = "__expires"

    var byName: [String: Double]
    var defaultAge: Double?

    init(_ configuration: GQLCache.Configuration) {
        byName = configuration.maxAge.mapValues(\.seconds)
        defaultAge = configuration.defaultMaxAge.map(\.seconds)
    }

    /// Whether any field can go stale; without it the store keeps no receive times.
    var isOn: Bool { defaultAge != nil || !byName.isEmpty }

    /// The age of `field` of an object of `typename`: its own entry, its type's, or the default.
    func maxAge(_ typename: String?, _ field: String) -> Double? {
        if let typename {
            if let age = byName[typename + "." + field] { return age }
            if let age = byName[typename] { return age }
        }
        return defaultAge
    }

    /// How many seconds past its age the field `storageKey` of `record` is at `now`; `nil` when fresh. A field
    /// without a receive time (written while expiry was off) counts as received at 1970: stale.
    ///
    /// `deadlines` is the record's ``expiresMember`` (read once per record by the caller): a field with a
    /// deadline there is stale past it, whatever the configuration says.
    func staleness(
        _ record: GQLValues, deadlines: GQLValues?, typename: String?, field: String, storageKey: String,
        now: Double
    ) -> Double? {
        if let deadline = deadlines?[storageKey]?.doubleValue {
            // Fresh while the age is below the lifetime (RFC 9111 §4.2): `max-age=0` is stale at once.
            return now >= deadline ? now - deadline : nil
        }
        guard let age = maxAge(typename, field) else { return nil }
        let received = record[Self.receivedMember]?[storageKey]?.doubleValue ?? 0
        // Fresh only while the age is below the lifetime, as for a server's deadline: `maxAge` 0 is stale at once.
        let past = now - (received + age)
        return past >= 0 ? past : nil
    }
}

/// What an HTTP answer's header fields say about caching it (RFC 9111): how long its fields stay fresh
/// (`Cache-Control: max-age` less the `Age` the answer already has, §4.2.3) and whether it may be stored at all
/// (`no-store`, §5.2.2.5; `private` answers are stored: this is a private cache, §5.2.2.7).
///
/// `max-age`: the first counts (§4.2.1); a value above 2^31 counts as 2^31 (§1.2.2), so a deadline stays finite
/// whatever the server sends; an invalid value (negative, fractional, empty, missing) is read as 0, which makes
/// the answer stale at once, as §4.2.1 encourages. `Age`: its first field line counts; a value above 2^31 counts
/// as 2^31, and an invalid one (not a plain non-negative integer) makes the answer stale at once too. `no-cache`
/// is not read: the answer is stored, and one without a `max-age` keeps the configuration's ages.
package enum CacheControl {
    /// The greatest delta-seconds a cache must honour (RFC 9111 §1.2.2).
    static let greatestDeltaSeconds: Double = 2_147_483_648

    /// What the header fields of one answer say.
    package struct Directives: Sendable, Equatable {
        /// Seconds the answer's fields stay fresh from its arrival (`max-age` less `Age`, at least 0); `nil`
        /// without a `max-age`.
        package var freshFor: Double?
        /// `no-store`: the answer is returned but not written to the cache.
        package var noStore = false

        package init(freshFor: Double? = nil, noStore: Bool = false) {
            self.freshFor = freshFor
            self.noStore = noStore
        }
    }

    /// The directives of an answer's header fields (any case of the field names).
    package static func directives(of fields: [(name: String, value: String)]) -> Directives {
        let value = value(of: fields)
        guard let maxAge = maxAge(value) else { return Directives(noStore: noStore(value)) }
        let age = fields.first { $0.name.lowercased() == "age" }.map { Self.age($0.value) } ?? 0
        return Directives(freshFor: max(maxAge - age, 0), noStore: noStore(value))
    }

    package static func maxAge(_ value: String?) -> Double? {
        guard let value else { return nil }
        for directive in value.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == "max-age" else { continue }
            guard parts.count == 2 else { return 0 }
            var number = parts[1]
            if number.count >= 2, number.hasPrefix("\""), number.hasSuffix("\"") {
                number = String(number.dropFirst().dropLast())
            }
            return deltaSeconds(number) ?? 0
        }
        return nil
    }

    /// The seconds of an `Age` field value (RFC 9111 §5.1); an invalid one counts as 2^31 (stale at once).
    package static func age(_ value: String) -> Double {
        deltaSeconds(value.trimmingCharacters(in: .whitespaces)) ?? greatestDeltaSeconds
    }

    /// Whether a `Cache-Control` value holds `no-store`.
    package static func noStore(_ value: String?) -> Bool {
        guard let value else { return false }
        return value.split(separator: ",").contains { directive in
            directive.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
                .lowercased() == "no-store"
        }
    }

    /// Delta-seconds (RFC 9111 §1.2.2): digits only, at most 2^31; `nil` when `text` is not that.
    private static func deltaSeconds(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        // 309 digits and more parse to +inf: past 2^31 like any other great value.
        guard let seconds = Double(text), seconds.isFinite else { return greatestDeltaSeconds }
        return min(seconds, greatestDeltaSeconds)
    }

    /// The value of every `Cache-Control` field of `fields`, in order, joined with ", " (RFC 9110 §5.3), or
    /// `nil` when there is none.
    package static func value(of fields: [(name: String, value: String)]) -> String? {
        let values = fields.filter { $0.name.lowercased() == "cache-control" }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

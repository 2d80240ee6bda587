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
        let past = now - (received + age)
        return past > 0 ? past : nil
    }
}

/// The `max-age` of a `Cache-Control` header field (RFC 9111 §5.2.2.1): seconds, `nil` when the field has none.
/// The first `max-age` counts (RFC 9111 §4.2.1). A value above 2^31 counts as 2^31 (RFC 9111 §1.2.2), so a
/// deadline stays finite whatever the server sends. An invalid value (negative, fractional, empty, missing) is
/// read as 0, which makes the answer stale at once, as RFC 9111 §4.2.1 encourages. `no-store` and `no-cache`
/// are not read: the answer is stored either way, and a `no-cache` answer without a `max-age` keeps the
/// configuration's ages.
package enum CacheControl {
    /// The greatest delta-seconds a cache must honour (RFC 9111 §1.2.2).
    static let greatestDeltaSeconds: Double = 2_147_483_648

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
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return 0 }
            // 309 digits and more parse to +inf: past 2^31 like any other great value.
            guard let seconds = Double(number), seconds.isFinite else { return greatestDeltaSeconds }
            return min(seconds, greatestDeltaSeconds)
        }
        return nil
    }

    /// The value of every `Cache-Control` field of `fields`, in order, joined with ", " (RFC 9110 §5.3), or
    /// `nil` when there is none.
    package static func value(of fields: [(name: String, value: String)]) -> String? {
        let values = fields.filter { $0.name.lowercased() == "cache-control" }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

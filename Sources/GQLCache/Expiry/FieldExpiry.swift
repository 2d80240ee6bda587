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

import Foundation
import GQLCore

/// `POST /notifications` of today's API and `POST /api/v1/notifications`: the request checked as OneSignal checks
/// it, its audience resolved against the app's subscriptions, and the notification kept in the ``PushInbox``.
extension PushApp {
    static let channelTypes: [String: Set<String>] = [
        "push": types.subtracting(contactTypes), "email": ["Email"], "sms": ["SMS"],
    ]
    static let targetingModes = [
        "include_aliases", "include_subscription_ids", "included_segments", "filters", "include_external_user_ids",
        "include_player_ids",
    ]
    static let maxAliases = 2000
    static let nobody = "All included players are not subscribed"

    /// Today's `POST /notifications` (`?c=` the channel, which must agree with `target_channel`).
    func notify(channelQuery: String?, body: GQLValues, caller: Caller) throws -> GQLValue {
        guard case .key = caller else { throw Self.badKey }
        guard body["app_id"]?.stringValue == configuration.appId else {
            throw OneSignalError("app_id not found: give your app's id in app_id")
        }
        if body["excluded_segments"] != nil, body["included_segments"] == nil {
            throw OneSignalError("excluded_segments needs included_segments")
        }
        let modes = Self.targetingModes.filter { body[$0] != nil }
        guard modes.count == 1, let mode = modes.first else {
            throw OneSignalError(
                "Give exactly one way to target: include_aliases, include_subscription_ids, included_segments "
                    + "(with excluded_segments) or filters")
        }
        guard mode != "include_external_user_ids", mode != "include_player_ids" else {
            throw OneSignalError("\(mode) is v1 targeting: use include_aliases with target_channel")
        }
        let channel = body["target_channel"]?.stringValue ?? channelQuery ?? "push"
        guard let reachableTypes = Self.channelTypes[channel], channelQuery == nil || channelQuery == channel else {
            throw OneSignalError("target_channel must be push, email or sms (and match ?c=)")
        }
        if mode == "include_aliases", body["target_channel"] == nil {
            throw OneSignalError("include_aliases needs target_channel")
        }
        try Self.checkContent(body, channel: channel)
        let (recipients, invalid) = try directory.withLock { directory in
            try Self.audience(mode, body[mode] ?? .null, types: reachableTypes, directory)
        }
        guard !recipients.isEmpty else { return ["id": "", "errors": [.string(Self.nobody)]] }
        let id = try keep(body, channel: channel, mode: mode, api: "current", recipients: recipients)
        var answer: GQLValues = ["id": .string(id), "external_id": body["external_id"] ?? .null]
        if !invalid.isEmpty {
            answer["errors"] = ["invalid_aliases": ["external_id": .array(invalid.map { .string($0) })]]
        }
        return .object(answer)
    }

    /// v1's `POST /api/v1/notifications` (`Authorization: Basic <key>`): `include_external_user_ids`,
    /// `include_player_ids` or `included_segments`; the answer has `recipients`.
    func notifyLegacy(body: GQLValues, authorization: String?) throws -> GQLValue {
        let (scheme, value) = Self.schemeAndValue(authorization ?? "")
        guard ["basic", "key"].contains(scheme), GQLEmulatorCredentials.same(value, configuration.restKey) else {
            throw OneSignalError("Give a valid legacy REST API key as 'Authorization: Basic <key>'", status: .forbidden)
        }
        guard body["app_id"]?.stringValue == configuration.appId else {
            throw OneSignalError("app_id not found. You may be missing a Content-Type: application/json header.")
        }
        let modes = ["include_external_user_ids", "include_player_ids", "included_segments"].filter { body[$0] != nil }
        guard modes.count == 1, let mode = modes.first else {
            throw OneSignalError(
                "Give exactly one of include_external_user_ids, include_player_ids and included_segments")
        }
        let channel = body["channel_for_external_user_ids"]?.stringValue ?? "push"
        guard let reachableTypes = Self.channelTypes[channel] else {
            throw OneSignalError("channel_for_external_user_ids must be push, email or sms")
        }
        try Self.checkContent(body, channel: channel)
        let targeting: (String, GQLValue) =
            mode == "include_external_user_ids"
            ? ("include_aliases", ["external_id": body[mode] ?? .null]) : (mode, body[mode] ?? .null)
        if mode != "included_segments" {
            guard let ids = body[mode]?.arrayValue, !ids.isEmpty, ids.allSatisfy({ $0.stringValue != nil }) else {
                throw OneSignalError("\(mode) must be a non-empty array of strings")
            }
            guard ids.count <= Self.maxAliases else {
                throw OneSignalError("\(mode) is limited to \(Self.maxAliases) entries per request")
            }
        }
        let (recipients, invalid) = try directory.withLock { directory in
            try Self.audience(
                targeting.0 == "include_player_ids" ? "include_subscription_ids" : targeting.0, targeting.1,
                types: reachableTypes, directory)
        }
        guard !recipients.isEmpty else {
            return ["id": "", "recipients": 0, "external_id": .null, "errors": [.string(Self.nobody)]]
        }
        let id = try keep(body, channel: channel, mode: mode, api: "v1", recipients: recipients)
        var answer: GQLValues = [
            "id": .string(id), "recipients": .int(Int64(recipients.count)), "external_id": .null,
        ]
        if !invalid.isEmpty {
            answer["errors"] = ["invalid_external_user_ids": .array(invalid.map { .string($0) })]
        }
        return .object(answer)
    }

    // MARK: - Helpers

    /// Keeps an accepted notification in the inbox: its content, how it was targeted (`mode`), by which API and
    /// whom it reached, stamped with the app and the time; its new id.
    private func keep(_ body: GQLValues, channel: String, mode: String, api: String, recipients: [GQLValue]) throws
        -> String
    {
        let id = UUID().uuidString.lowercased()
        let now = configuration.clock()
        var record = Self.content(body, channel: channel)
        record["id"] = .string(id)
        record["api"] = .string(api)
        var targeting: GQLValues = [mode: body[mode] ?? .null]
        if let excluded = body["excluded_segments"], !excluded.isNull { targeting["excluded_segments"] = excluded }
        record["targeting"] = .object(targeting)
        record["recipients"] = .array(recipients)
        record["app_id"] = .string(configuration.appId)
        record["sent_at"] = .string(GQLDate.string(from: now))
        do {
            try inbox.record(record, id: id, at: now)
        } catch {
            throw OneSignalError(
                "The emulator could not keep the notification", status: .internalServerError, code: "internal")
        }
        return id
    }

    /// The content a channel needs: an email's `email_subject` and `email_body`, or `contents` with English text.
    static func checkContent(_ body: GQLValues, channel: String) throws {
        if channel == "email" {
            guard body["email_subject"]?.stringValue != nil, body["email_body"]?.stringValue != nil else {
                throw OneSignalError("An email needs email_subject and email_body")
            }
        } else {
            guard case .object(let contents)? = body["contents"], contents["en"]?.stringValue != nil else {
                throw OneSignalError("contents needs an English (en) string")
            }
            guard contents.values.allSatisfy({ $0.stringValue != nil }) else {
                throw OneSignalError("Notification contents for each language must be a string")
            }
        }
        if let data = body["data"], !data.isNull, data.objectValue == nil {
            throw OneSignalError("data must be a JSON object")
        }
        if let headings = body["headings"], !headings.isNull, headings.objectValue == nil {
            throw OneSignalError("headings must be an object of language codes to strings")
        }
    }

    /// What the inbox keeps of a notification's content.
    static func content(_ body: GQLValues, channel: String) -> GQLValues {
        var record: GQLValues = ["channel": .string(channel)]
        for field in ["contents", "headings", "data", "email_subject", "email_body", "name", "external_id"] {
            if let value = body[field], !value.isNull { record[field] = value }
        }
        return record
    }

    /// The subscriptions `mode` reaches among the enabled ones of `types`, as inbox entries, and the aliases that
    /// reach none.
    static func audience(_ mode: String, _ target: GQLValue, types: Set<String>, _ directory: PushDirectory) throws
        -> ([GQLValue], [String])
    {
        let reachable = directory.subscriptions.filter { types.contains($0.value.type) && $0.value.enabled }
        var chosen: [String] = []
        var invalid: [String] = []
        switch mode {
        case "include_aliases":
            guard case .object(let byLabel) = target, !byLabel.isEmpty,
                byLabel.values.allSatisfy({ list in
                    guard let ids = list.arrayValue, !ids.isEmpty else { return false }
                    return ids.allSatisfy { $0.stringValue != nil }
                })
            else { throw OneSignalError("include_aliases maps an alias label to a non-empty array of ids") }
            guard byLabel.values.reduce(0, { $0 + ($1.arrayValue?.count ?? 0) }) <= maxAliases else {
                throw OneSignalError("include_aliases is limited to \(maxAliases) entries per request")
            }
            for (label, list) in byLabel {
                for id in (list.arrayValue ?? []).compactMap(\.stringValue) {
                    let owner = directory.user(label, id)
                    let owned = reachable.filter { owner != nil && $0.value.owner == owner }.keys.sorted()
                    if owned.isEmpty { invalid.append(id) } else { chosen += owned }
                }
            }
        case "include_subscription_ids":
            guard let ids = target.arrayValue, !ids.isEmpty, ids.allSatisfy({ $0.stringValue != nil }) else {
                throw OneSignalError("include_subscription_ids must be a non-empty array of ids")
            }
            chosen = ids.compactMap(\.stringValue).filter { reachable[$0] != nil }
        case "included_segments":
            guard let names = target.arrayValue, !names.isEmpty, names.allSatisfy({ $0.stringValue != nil }) else {
                throw OneSignalError("included_segments must be a non-empty array of segment names")
            }
            // The emulator's every segment holds every subscription.
            chosen = reachable.keys.sorted()
        default:
            guard let filters = target.arrayValue, !filters.isEmpty,
                filters.allSatisfy({ $0["field"] != nil || $0["operator"] != nil })
            else {
                throw OneSignalError("filters must be a non-empty array of filter objects (field …) and operators")
            }
            // Filters are not evaluated: every subscription of the channel matches.
            chosen = reachable.keys.sorted()
        }
        var seen = Set<String>()
        let recipients = chosen.filter { seen.insert($0).inserted }.compactMap { id -> GQLValue? in
            guard let subscription = directory.subscriptions[id] else { return nil }
            var entry: GQLValues = [
                "subscription_id": .string(id), "type": .string(subscription.type),
                "onesignal_id": .string(subscription.owner),
            ]
            if let token = subscription.token { entry["token"] = .string(token) }
            if let external = directory.users[subscription.owner]?.aliases["external_id"] {
                entry["external_id"] = .string(external)
            }
            return .object(entry)
        }
        return (recipients, invalid)
    }
}

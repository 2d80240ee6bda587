import Foundation
import GQLCore

/// Every notification the OneSignal emulator accepted, one JSON file each in the data folder's `notifications/`
/// (written atomically, named so they sort in the order they were sent), for `GET /_emulator/notifications` and
/// `gql-cli push inbox`: what an app's tests assert on instead of a phone.
struct PushInbox: Sendable {
    let folder: GQLDataFolder
    /// Orders files sent within one millisecond.
    private let sequence = GQLLocked<Int>(0)

    static let subfolder = "notifications"

    init(folder: GQLDataFolder) throws {
        self.folder = try folder.subfolder(Self.subfolder)
    }

    /// Keeps `record` (it has an `id`) stamped at `now`.
    func record(_ record: GQLValues, id: String, at now: Date) throws {
        let serial = sequence.withLock { value -> Int in
            value = (value + 1) % 1_000_000
            return value
        }
        let millis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        func padded(_ number: Int64, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let safe = id.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        let name = padded(millis, 15) + "-" + padded(Int64(serial), 6) + "-" + safe + ".json"
        try folder.write(try GQLValue.object(record).jsonData(sortedKeys: true), to: name)
    }

    /// The notifications kept, oldest first; `externalId` keeps those that reached that user, `limit` the last
    /// ones.
    func notifications(externalId: String? = nil, limit: Int? = nil) throws -> [GQLValue] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
                .filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw GQLError(.io, "The push emulator's notifications could not be listed: \(error.localizedDescription)")
        }
        var found: [GQLValue] = []
        for name in names {
            guard let data = try folder.read(name), let value = try? GQLValue(json: data) else { continue }
            if let externalId {
                let reached = value["recipients"]?.arrayValue ?? []
                guard reached.contains(where: { $0["external_id"]?.stringValue == externalId }) else { continue }
            }
            found.append(value)
        }
        if let limit, limit >= 0, found.count > limit { found.removeFirst(found.count - limit) }
        return found
    }
}

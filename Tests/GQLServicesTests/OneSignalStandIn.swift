import Foundation
import GQLCore
import GQLTestSupport

@testable import GQLServices

/// The OneSignal stand-in (Tests/Interop/onesignal_peer.py: today's API, or v1 with `--v1`) and clients for it,
/// shared by PushTests and PushLegacyTests.
enum OneSignalStandIn {
    static let appId = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
    /// An App API key in the form OneSignal issues today (made up).
    static let appKey = "os_v2_app_lw2ug7vulajrhlbraaggfeheuxt4kcevcenvgbmuzbs3yyjolesvtqg2fzl4vhn3qoqygqrhn7jemq"
    /// A legacy REST API key, in the form of OneSignal's own v1 examples.
    static let legacyKey = "NGEwMGZmMjItY2NkNy0xMWUzLTk5ZDUtMDAwYzI5NDBlNjJj"
    static let deviceToken = Data([0xA1, 0xB2, 0x00, 0xFF, 0x10])

    /// Runs `body` with the stand-in's URL and a reader of the requests it recorded.
    static func withPeer(
        key: String, _ flags: [String] = [],
        _ body: (_ baseURL: String, _ requests: () async throws -> [GQLValue]) async throws -> Void
    ) async throws {
        try await PythonPeer.with("onesignal_peer.py", [appId, key] + flags) { peer in
            let inspector = GQLREST(baseURL: peer.ready)
            do {
                try await body(peer.ready) { try await inspector.invoke(.get, "_requests").arrayValue ?? [] }
                try await inspector.shutdown()
            } catch {
                try? await inspector.shutdown()
                throw error
            }
        }
    }

    /// Runs `body` with a client of the stand-in, shut down afterwards.
    static func withPush(
        _ baseURL: String, key: String, keyKind: GQLPush.KeyKind? = nil, _ body: (GQLPush) async throws -> Void
    ) async throws {
        let push = GQLPush(appId: appId, restKey: key, keyKind: keyKind, baseURL: baseURL)
        do {
            try await body(push)
            try await push.shutdown()
        } catch {
            try? await push.shutdown()
            throw error
        }
    }
}

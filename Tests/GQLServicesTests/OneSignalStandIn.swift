import Foundation
import GQLCore
import GQLEmulators
import GQLTestSupport
import Testing

@testable import GQLServices

/// The OneSignal-shaped servers GQLPush's suites run against: the stand-in of Tests/Interop/onesignal_peer.py
/// (today's API, or v1 with `--v1`), and GQLEmulators' OneSignal emulator (what `gql-cli serve --push` runs; it
/// serves both APIs at once).
enum PushServer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case standIn
    case emulator

    var testDescription: String { self == .standIn ? "onesignal_peer.py" : "GQLPushEmulator" }
}

/// A OneSignal-shaped server started for one test. The stand-in records every request (the wire shapes GQLPush
/// sends); the emulator keeps what it accepted in its inbox. What both can tell, ``lastNotification()``, is asked
/// of both alike.
struct PushPeer {
    let server: PushServer
    /// Where the server listens.
    let url: String
    fileprivate let inspector: GQLREST

    /// Every request the stand-in received, in order (`method`, `path`, `query`, `headers`, `body`); nil from the
    /// emulator, which keeps no such record.
    func requests() async throws -> [GQLValue]? {
        guard server == .standIn else { return nil }
        return try await inspector.invoke(.get, "_requests").arrayValue ?? []
    }

    /// The last notification the server took, as what was asked for: `channel` (push, email or sms), the
    /// targeting field the request used (`include_aliases`, `included_segments`, `include_external_user_ids` …)
    /// with `excluded_segments`, and the content (`contents`, `headings`, `data`, `email_subject`,
    /// `email_body`). The stand-in's from the last notification request it received; the emulator's from its
    /// inbox (only notifications that reached someone are kept there).
    func lastNotification() async throws -> GQLValue? {
        let content = ["contents", "headings", "data", "email_subject", "email_body"]
        switch server {
        case .standIn:
            let sent = try await requests()?.last { ($0["path"]?.stringValue ?? "").hasSuffix("/notifications") }
            guard let sent, case .object(let body)? = sent["body"] else { return nil }
            let query = sent["query"]?.stringValue ?? ""
            let channel =
                body["target_channel"] ?? body["channel_for_external_user_ids"]
                ?? (query.hasPrefix("c=") ? .string(String(query.dropFirst(2))) : "push")
            var what: GQLValues = ["channel": channel]
            let targeting = [
                "include_aliases", "include_subscription_ids", "included_segments", "excluded_segments", "filters",
                "include_external_user_ids", "include_player_ids",
            ]
            for field in content + targeting { what[field] = body[field] }
            return .object(what)
        case .emulator:
            let inbox = try await inspector.invoke(.get, "_emulator/notifications")
            guard case .object(let record)? = inbox["notifications"]?.arrayValue?.last else { return nil }
            var what: GQLValues = ["channel": record["channel"] ?? .null]
            for field in content { what[field] = record[field] }
            for (mode, value) in record["targeting"]?.objectValue ?? [:] { what[mode] = value }
            return .object(what)
        }
    }
}

/// Constants and runners shared by PushTests and PushLegacyTests.
enum OneSignalStandIn {
    static let appId = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
    /// An App API key in the form OneSignal issues today (made up).
    static let appKey = "os_v2_app_lw2ug7vulajrhlbraaggfeheuxt4kcevcenvgbmuzbs3yyjolesvtqg2fzl4vhn3qoqygqrhn7jemq"
    /// A legacy REST API key, in the form of OneSignal's own v1 examples.
    static let legacyKey = "NGEwMGZmMjItY2NkNy0xMWUzLTk5ZDUtMDAwYzI5NDBlNjJj"
    static let deviceToken = Data([0xA1, 0xB2, 0x00, 0xFF, 0x10])

    /// Runs `body` against `server` for the app with `key`. `flags` are the stand-in's (`--v1`,
    /// `--identity-verification[=PEM file]`); the emulator takes the same meaning from them (v1's hash check, or
    /// the public key of today's identity tokens).
    static func withPeer(
        _ server: PushServer = .standIn, key: String, _ flags: [String] = [], _ body: (PushPeer) async throws -> Void
    ) async throws {
        switch server {
        case .standIn:
            try await PythonPeer.with("onesignal_peer.py", [appId, key] + flags) { peer in
                try await run(PushPeer(server: server, url: peer.ready, inspector: GQLREST(baseURL: peer.ready)), body)
            }
        case .emulator:
            var configuration = GQLPushEmulator.Configuration()
            configuration.port = 0
            configuration.appId = appId
            configuration.restKey = key
            for flag in flags where flag.hasPrefix("--identity-verification") {
                if let path = flag.split(separator: "=", maxSplits: 1).dropFirst().first {
                    configuration.identityVerificationKey = try String(contentsOfFile: String(path), encoding: .utf8)
                } else {
                    configuration.legacyIdentityVerification = true
                }
            }
            let started = try await GQLPushEmulator(configuration: configuration).start()
            do {
                try await run(
                    PushPeer(server: server, url: started.url, inspector: GQLREST(baseURL: started.url)), body)
            } catch {
                await started.shutdown()
                throw error
            }
            await started.shutdown()
        }
    }

    private static func run(_ peer: PushPeer, _ body: (PushPeer) async throws -> Void) async throws {
        do {
            try await body(peer)
            try await peer.inspector.shutdown()
        } catch {
            try? await peer.inspector.shutdown()
            throw error
        }
    }

    /// Runs `body` with a client of the server, shut down afterwards.
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

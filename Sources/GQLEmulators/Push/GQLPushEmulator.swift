import Foundation
import GQLCore
import GQLDevServer
import Hummingbird
import Logging
import NIOHTTP1

/// A local emulator of a OneSignal app on 127.0.0.1: users, subscriptions and v1 players, and notifications that
/// are checked as OneSignal checks them and then kept instead of sent, so ``GQLPush`` (with an App API key or a
/// legacy one) works against it unchanged and an app's tests can read what would have gone out.
///
/// ```swift
/// var configuration = GQLPushEmulator.Configuration()
/// configuration.port = 0
/// let started = try await GQLPushEmulator(configuration: configuration).start()
/// let push = GQLPush(appId: configuration.appId, restKey: configuration.restKey, keyKind: .app, baseURL: started.url)
/// try await push.send(chatId: "c1", userIds: ["user-2"], text: "Hello")
/// // GET started.url + "/_emulator/notifications" lists it; so does `gql-cli push inbox`.
/// ```
///
/// Today's API (`Authorization: Key <key>`): `POST /apps/{app_id}/users`, `GET /apps/{app_id}/users/by/{label}/{id}`,
/// `POST /apps/{app_id}/users/by/{label}/{id}/subscriptions`, `PATCH` and `DELETE /apps/{app_id}/subscriptions/{id}`,
/// `PATCH /apps/{app_id}/subscriptions/{id}/owner`, `POST /notifications` (`include_aliases` with `target_channel`,
/// `include_subscription_ids`, `included_segments`, `filters`). v1 (`Authorization: Basic <key>`):
/// `POST /api/v1/players`, `PUT /api/v1/players/{id}`, `POST /api/v1/notifications` (`include_external_user_ids`).
/// Segments and filters are not evaluated: they reach every enabled subscription of the channel.
public final class GQLPushEmulator: GQLEmulator {
    /// The configuration the emulator was made with.
    public let configuration: Configuration
    /// The folder users, subscriptions and notifications are kept in.
    public let dataFolder: GQLDataFolder
    let app: PushApp
    let server: EmulatorServer

    /// Makes an emulator and reads its users and subscriptions; nothing listens until ``run()`` (or
    /// ``GQLEmulator/start()``).
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for an empty app id or key, or an identity verification key that
    ///   is not a P-256 public key; `.io` for a data folder that cannot be made; `.decoding` for an `app.json` there
    ///   that is not the emulator's.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
        guard !configuration.appId.isEmpty, !configuration.restKey.isEmpty else {
            throw GQLError(.invalidArgument, "The push emulator's app id and REST API key must not be empty.")
        }
        self.configuration = configuration
        let folder = try configuration.dataFolder ?? GQLDataFolder.temporary(prefix: "gql-push")
        dataFolder = folder
        let app = try PushApp(configuration: configuration, folder: folder)
        self.app = app
        let routes = PushRoutes(app: app, bodyTimeout: configuration.limits.bodyTimeout)
        server = EmulatorServer(
            name: "GQLPushEmulator", host: configuration.host, port: configuration.port,
            limits: configuration.limits, logger: logger, refusalBody: Self.refusalBody
        ) { request, _ in
            await routes.respond(request)
        }
    }

    public func run() async throws { try await server.run() }

    public func endpoint() async throws -> String { try await server.baseURL() }

    public func shutdown() async { await server.shutdown() }

    /// The notifications accepted so far, oldest first (what `GET /_emulator/notifications` answers):
    /// `externalId` keeps those that reached that user.
    ///
    /// ```swift
    /// let sent = try emulator.notifications(externalId: "user-2")
    /// #expect(sent.last?["contents"]?["en"] == "Hello")
    /// ```
    public func notifications(externalId: String? = nil) throws -> [GQLValue] {
        try app.inbox.notifications(externalId: externalId)
    }

    /// What the connection guard answers itself, in OneSignal's error shape.
    static let refusalBody: @Sendable (HTTPResponseStatus, String) -> (contentType: String, body: String) = {
        _, message in
        let body = (try? OneSignalError(message).body(legacy: false).jsonString()) ?? "{}"
        return ("application/json; charset=utf-8", body)
    }
}

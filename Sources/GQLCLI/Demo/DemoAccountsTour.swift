import Foundation
import GQLCore
import GQLDevServer
import GQLEmulators
import GQLNet
import GQLServices
import Logging

/// The accounts-and-notifications step of `gql-cli demo`: the Auth0 and OneSignal emulators `gql-cli serve --all`
/// runs, in-process. GQLAuth signs a user up and in, the GraphQL API (OpenID Connect wired to the emulator) keeps a
/// note that only its owner sees, and GQLPush registers the device and sends a notification that the emulator's
/// inbox then shows.
struct DemoAccountsTour: DemoStep {
    static let schema = "type Note @model @auth(rules: [{ allow: owner }]) { id: ID! text: String }"

    func run() async throws {
        heading("14. Sign-up, owner-scoped data and a push (the Auth0 and OneSignal emulators)")
        let folder = try GQLDataFolder.temporary(prefix: "gql-cli-demo-accounts")
        defer { try? FileManager.default.removeItem(at: folder.url) }
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        var authConfiguration = GQLAuthEmulator.Configuration()
        authConfiguration.port = 0
        authConfiguration.dataFolder = try folder.subfolder("auth")
        let authEmulator = try GQLAuthEmulator(configuration: authConfiguration, logger: quiet)
        let authStarted = try await authEmulator.start()
        var pushConfiguration = GQLPushEmulator.Configuration()
        pushConfiguration.port = 0
        pushConfiguration.dataFolder = try folder.subfolder("push")
        let pushEmulator = try GQLPushEmulator(configuration: pushConfiguration, logger: quiet)
        let pushStarted = try await pushEmulator.start()
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.schema = Self.schema
        configuration.openIDConnect = .init(keys: .jwks(authEmulator.jwks), issuer: authEmulator.issuer)
        let server = try GQLDevServer(configuration: configuration, logger: quiet)
        let task = Task { try await server.run() }
        defer { task.cancel() }
        let url = try await server.endpoints().http
        say("Auth0 emulator at \(authStarted.url) (issuer \(authEmulator.issuer)), OneSignal emulator at \(pushStarted.url)")

        let auth = GQLAuth(
            domain: authEmulator.domain, clientId: authConfiguration.clientId, baseURL: authStarted.url)
        try await auth.signUp(email: "ann@example.com", password: "correct horse battery")
        let userId = auth.userId() ?? "?"
        say("GQLAuth signed ann@example.com up and in: user \(userId), RS256 tokens checked against the JWKS")
        let client = GQLServer(HTTP: url, authorization: auth.authorization)
        let created = try await client.mutation(
            "mutation($input: CreateNoteInput!) { createNote(input: $input) { id owner } }",
            ["input": ["text": "only mine"]])
        say("createNote with ann's token -> owner \(created.data?["createNote"]?["owner"]?.stringValue ?? "?")")
        let other = GQLAuth(domain: authEmulator.domain, clientId: authConfiguration.clientId, baseURL: authStarted.url)
        try await other.signUp(email: "bob@example.com", password: "another good one")
        let bobs = GQLServer(HTTP: url, authorization: other.authorization)
        let listed = try await bobs.query("{ listNotes { items { id } } }")
        say("listNotes with bob's token -> \(listed.data?["listNotes"]?["items"]?.arrayValue?.count ?? -1) notes")

        let push = GQLPush(
            appId: pushConfiguration.appId, restKey: pushConfiguration.restKey, keyKind: .app,
            baseURL: pushStarted.url)
        try await push.token(Data([0xA1, 0xB2, 0xC3, 0xD4]))
        try await push.register(userId)
        let sent = try await push.send(chatId: "demo", userIds: [userId], text: "Hello from the demo")
        say("GQLPush registered the device to \(userId) and sent notification \(sent.id)")
        for notification in try pushEmulator.notifications(externalId: userId) {
            let text = notification["contents"]?["en"]?.stringValue ?? ""
            say("inbox (gql-cli push inbox): \"\(text)\" to \(notification["recipients"]?[0]?["token"]?.stringValue ?? "?")")
        }
        await auth.signOut()
        say("signed out: the refresh token is revoked at the emulator")
        for closable in [client, bobs] { try await closable.shutdown() }
        try await auth.shutdown()
        try await other.shutdown()
        try await push.shutdown()
        await server.shutdown()
        _ = try? await task.value
        await pushStarted.shutdown()
        await authStarted.shutdown()
    }
}

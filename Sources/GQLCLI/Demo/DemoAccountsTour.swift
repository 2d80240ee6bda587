import Foundation
import GQLCore
import GQLEmulators
import GQLNet
import GQLServices

/// The accounts-and-notifications step of `gql-cli demo`: the Auth0 and OneSignal emulators of the demo's
/// `gql-cli serve --all` (``DemoServices``). GQLAuth signs a user up and in, the composition's GraphQL API (OpenID
/// Connect wired to the emulator, as `serve --all` wires it) keeps a note that only its owner sees, and GQLPush
/// registers the device and sends a notification that the emulator's inbox then shows.
struct DemoAccountsTour: DemoStep {
    /// The running `serve --all`.
    let services: DemoServices

    func run() async throws {
        heading("14. Sign-up, owner-scoped data and a push (the Auth0 and OneSignal emulators of gql-cli serve --all)")
        let endpoints = services.endpoints
        guard let authEmulator = services.suite.auth, let pushEmulator = services.suite.push,
            let url = endpoints.graphql, let authURL = endpoints.auth, let pushURL = endpoints.push,
            let clientId = endpoints.authClientId, let appId = endpoints.pushAppId, let restKey = endpoints.pushRestKey
        else { throw CLIError("the demo's gql-cli serve --all runs no GraphQL API, auth or push emulator") }
        say("Auth0 emulator at \(authURL) (issuer \(authEmulator.issuer)), OneSignal emulator at \(pushURL)")
        say("GraphQL API at \(url), checking the Auth0 emulator's tokens")

        let auth = GQLAuth(domain: authEmulator.domain, clientId: clientId, baseURL: authURL)
        try await auth.signUp(email: "ann@example.com", password: "correct horse battery")
        let userId = auth.userId() ?? "?"
        say("GQLAuth signed ann@example.com up and in: user \(userId), RS256 tokens checked against the JWKS")
        let client = GQLServer(HTTP: url, authorization: auth.authorization)
        let created = try await client.mutation(
            "mutation($input: CreateNoteInput!) { createNote(input: $input) { id owner } }",
            ["input": ["text": "only mine"]])
        say("createNote with ann's token -> owner \(created.data?["createNote"]?["owner"]?.stringValue ?? "?")")
        let other = GQLAuth(domain: authEmulator.domain, clientId: clientId, baseURL: authURL)
        try await other.signUp(email: "bob@example.com", password: "another good one")
        let bobs = GQLServer(HTTP: url, authorization: other.authorization)
        let listed = try await bobs.query("{ listNotes { items { id } } }")
        say("listNotes with bob's token -> \(listed.data?["listNotes"]?["items"]?.arrayValue?.count ?? -1) notes")

        let push = GQLPush(appId: appId, restKey: restKey, keyKind: .app, baseURL: pushURL)
        try await push.token(Data([0xA1, 0xB2, 0xC3, 0xD4]))
        try await push.register(userId)
        let sent = try await push.send(chatId: "demo", userIds: [userId], text: "Hello from the demo")
        say("GQLPush registered the device to \(userId) and sent notification \(sent.id)")
        for notification in try pushEmulator.notifications(externalId: userId) {
            let text = notification["contents"]?["en"]?.stringValue ?? ""
            say(
                "inbox (gql-cli push inbox): \"\(text)\" to \(notification["recipients"]?[0]?["token"]?.stringValue ?? "?")"
            )
        }
        await auth.signOut()
        say("signed out: the refresh token is revoked at the emulator")
        for closable in [client, bobs] { try await closable.shutdown() }
        try await auth.shutdown()
        try await other.shutdown()
        try await push.shutdown()
    }
}

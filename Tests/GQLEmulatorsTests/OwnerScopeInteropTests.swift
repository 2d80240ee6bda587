import Foundation
import GQLCore
import GQLDevServer
import GQLTestSupport
import Testing

@testable import GQLEmulators

/// Independent clients of the Auth0 emulator and of a GraphQL API in OpenID Connect mode wired to it
/// (Tests/Interop/auth_emulator_client.py): PyJWT verifies the issued tokens from the JWKS, and the Python gql
/// client calls an owner-scoped model with them.
@Suite("Auth0 emulator with independent clients", .timeLimit(.minutes(1)))
struct OwnerScopeInteropTests {
    @Test func pyJWTAndTheGQLClientAcceptTheIssuedTokens() async throws {
        try await AuthEmulatorFixture.with { fixture in
            var configuration = GQLDevServer.Configuration()
            configuration.port = 0
            configuration.schema = "type Note @model @auth(rules: [{ allow: owner }]) { id: ID! text: String }"
            configuration.openIDConnect = .init(
                keys: .jwks(fixture.emulator.jwks), issuer: fixture.emulator.issuer)
            let server = try GQLDevServer(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                let graphQL = try await server.endpoints().http
                let output = try await PythonPeer.run(
                    "auth_emulator_client.py",
                    [
                        "--auth", fixture.started.url, "--client-id", fixture.emulator.configuration.clientId,
                        "--graphql", graphQL,
                    ], input: Data())
                let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
                #expect(lines.count == 10, "\(lines)")
                #expect(lines.allSatisfy { $0.hasPrefix("ok ") })
                #expect(lines.contains("ok gql listNotes as py-bob@example.com sees its own note only"))
                await server.shutdown()
            }
        }
    }
}

import Foundation
import GQLCore
import GQLDevServer
import Hummingbird
import Logging
import NIOHTTP1

/// A local emulator of an Auth0 tenant on 127.0.0.1: database-connection users with salted scrypt password hashes,
/// RS256 tokens with Auth0's claims under a key kept in the data folder, and Auth0's Authentication API shapes, so
/// ``GQLAuth``, PyJWT and any OpenID Connect client work against it unchanged.
///
/// ```swift
/// var configuration = GQLAuthEmulator.Configuration()
/// configuration.port = 0
/// let emulator = try GQLAuthEmulator(configuration: configuration)
/// let started = try await emulator.start()
/// let auth = GQLAuth(domain: emulator.domain, clientId: configuration.clientId, baseURL: started.url)
/// try await auth.signUp(email: "ann@example.com", password: "correct horse")
/// ```
///
/// Paths: `POST /dbconnections/signup`, `POST /dbconnections/change_password`, `POST /oauth/token` (grants
/// `http://auth0.com/oauth/grant-type/password-realm`, `password`, `refresh_token`, `client_credentials` for the
/// Management API), `POST /oauth/revoke`, `GET /userinfo`, `GET /.well-known/jwks.json`,
/// `GET /.well-known/openid-configuration`, `PATCH /api/v2/users/{id}` (a new password; `blocked`, an
/// administrator's block), and the emulator's own `GET /_emulator/reset-emails` (the change-password requests,
/// which Auth0 would answer with an e-mail).
public final class GQLAuthEmulator: GQLEmulator {
    /// The configuration the emulator was made with.
    public let configuration: Configuration
    /// The folder users, refresh tokens and the signing key are kept in.
    public let dataFolder: GQLDataFolder
    let tenant: AuthTenant
    let server: EmulatorServer

    /// Makes an emulator and reads (or makes) its signing key and users; nothing listens until ``run()`` (or
    /// ``GQLEmulator/start()``).
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for an empty client id, secret or connection; `.io` for a data
    ///   folder that cannot be made; `.decoding` or `.crypto` for a `tenant.json` or `signing-key.pem` there that is
    ///   not the emulator's.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
        guard !configuration.clientId.isEmpty, !configuration.clientSecret.isEmpty, !configuration.connection.isEmpty
        else {
            throw GQLError(
                .invalidArgument, "The auth emulator's client id, client secret and connection must not be empty.")
        }
        guard configuration.maxFailedAttempts > 0 else {
            throw GQLError(.invalidArgument, "The auth emulator's maxFailedAttempts must be 1 or more.")
        }
        self.configuration = configuration
        let folder = try configuration.dataFolder ?? GQLDataFolder.temporary(prefix: "gql-auth")
        dataFolder = folder
        let tenant = try AuthTenant(configuration: configuration, folder: folder)
        self.tenant = tenant
        let routes = AuthRoutes(tenant: tenant, bodyTimeout: configuration.limits.bodyTimeout)
        server = EmulatorServer(
            name: "GQLAuthEmulator", host: configuration.host, port: configuration.port,
            limits: configuration.limits, logger: logger, refusalBody: Self.refusalBody
        ) { request, _ in
            await routes.respond(request)
        }
    }

    public func run() async throws {
        let (server, tenant, host) = (server, tenant, configuration.host)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            group.addTask {
                // The domain (and so the issuer) is HOST:PORT unless configured: known once the port is.
                if let port = try? await server.port() { tenant.listening(host: host, port: port) }
            }
            try await group.waitForAll()
        }
    }

    public func endpoint() async throws -> String {
        let url = try await server.baseURL()
        tenant.listening(host: configuration.host, port: try await server.port())
        return url
    }

    public func shutdown() async { await server.shutdown() }

    /// The tenant's domain: the configured one, or `HOST:PORT` once the emulator listens. ``GQLAuth`` takes it as
    /// its `domain` (with the emulator's URL as `baseURL`).
    public var domain: String { tenant.domain }

    /// The issuer of every token, `https://<domain>/`.
    public var issuer: String { tenant.issuer }

    /// The JSON Web Key Set the tokens verify with (what `/.well-known/jwks.json` serves).
    public var jwks: Data { Data(tenant.key.jwks.utf8) }

    /// What the connection guard answers itself (a header timeout, a malformed request, headers too large), in
    /// Auth0's `/oauth` error shape.
    static let refusalBody: @Sendable (HTTPResponseStatus, String) -> (contentType: String, body: String) = {
        _, message in
        let body =
            (try? GQLValue.object(["error": "invalid_request", "error_description": .string(message)]).jsonString())
            ?? "{}"
        return ("application/json; charset=utf-8", body)
    }
}

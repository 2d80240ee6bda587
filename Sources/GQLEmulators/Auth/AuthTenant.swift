import Foundation
import GQLCore
import GQLCrypto

/// The Auth0 emulator's tenant: one application, one database connection, and the key it signs with. Its users
/// store is ``users`` (``AuthUsers``) and its token grants ``grants`` (``AuthGrants``); it knows where the emulator
/// listens and so the tenant's domain and issuer. Every operation answers what Auth0's Authentication API answers,
/// or throws the ``Auth0Error`` Auth0 would send. Transport-free: ``AuthRoutes`` maps HTTP onto it.
final class AuthTenant: Sendable {
    let configuration: GQLAuthEmulator.Configuration
    let folder: GQLDataFolder
    let key: AuthSigningKey
    let users: AuthUsers
    /// The domain once known (the configured one, or `HOST:PORT` when the emulator listens).
    private let domainName: GQLLocked<String?>
    /// Where the emulator listens, `http://HOST:PORT`, once it does.
    private let listenURL = GQLLocked<String?>(nil)

    init(configuration: GQLAuthEmulator.Configuration, folder: GQLDataFolder) throws {
        self.configuration = configuration
        self.folder = folder
        key = try AuthSigningKey.loadOrCreate(in: folder)
        users = try AuthUsers(configuration: configuration, folder: folder)
        domainName = GQLLocked(configuration.domain)
    }

    /// The token grants, for the domain known now.
    var grants: AuthGrants { AuthGrants(configuration: configuration, users: users, key: key, domain: domain) }

    /// Records where the emulator listens; the domain becomes `host:port` unless one was configured.
    func listening(host: String, port: Int) {
        let host = host.contains(":") ? "[\(host)]" : host
        domainName.withLock { domain in
            if domain == nil { domain = "\(host):\(port)" }
        }
        listenURL.withLock { $0 = "http://\(host):\(port)" }
    }

    /// `http://HOST:PORT` of the running emulator (the configured port before it listens).
    var baseURL: String { listenURL.withLock { $0 } ?? "http://\(configuration.host):\(configuration.port)" }

    /// The tenant's domain (`HOST:PORT` of the emulator unless configured).
    var domain: String { domainName.withLock { $0 } ?? "\(configuration.host):\(configuration.port)" }

    /// `https://<domain>/`, every token's `iss`.
    var issuer: String { "https://\(domain)/" }

    /// The audience of the Management API's tokens.
    var managementAudience: String { "https://\(domain)/api/v2/" }

    // MARK: - Clients

    /// Checks the application's credentials: the client id always, the secret when given (`client_secret` in the
    /// body or HTTP Basic) or `secretRequired`.
    func authenticateClient(id: String?, secret: String?, secretRequired: Bool = false) throws {
        guard let id, GQLEmulatorCredentials.same(id, configuration.clientId) else {
            throw Auth0Error.unauthorizedClient
        }
        if secret != nil || secretRequired {
            guard let secret, GQLEmulatorCredentials.same(secret, configuration.clientSecret) else {
                throw Auth0Error.unauthorizedClient
            }
        }
    }

    // MARK: - Helpers

    static let serverError = Auth0Error.oauth(.internalServerError, "server_error", "The emulator could not do that.")

    /// Scopes in order, each once.
    static func scopes(_ text: String) -> [String] {
        var seen = Set<String>()
        return text.split(separator: " ").map(String.init).filter { seen.insert($0).inserted }
    }
}

import ArgumentParser
import Foundation
import GQLServices
import GQLStore

/// Which Auth0 tenant and application `gql-cli auth` talks to, and where it keeps the tokens: flags first, then
/// `GQL_AUTH_*` environment variables, then what the last `signin` or `signup` remembered beside the token file.
struct AuthOptions: ParsableArguments {
    @Option(help: "The Auth0 tenant, e.g. example.eu.auth0.com (default: GQL_AUTH_DOMAIN, or the last sign-in's).")
    var domain: String?

    @Option(help: "The application's client id (default: GQL_AUTH_CLIENT_ID, or the last sign-in's).")
    var clientId: String?

    @Option(
        help: ArgumentHelp(
            "The client secret, for HS256 ID tokens and Management API password changes (default: "
                + "GQL_AUTH_CLIENT_SECRET; prefer the variable, flags show in ps). Never remembered.",
            valueName: "secret"))
    var clientSecret: String?

    @Option(help: "The database connection (default: Username-Password-Authentication).")
    var connection: String?

    @Option(
        help: ArgumentHelp(
            "The API the access tokens are for (Auth0's audience; default: GQL_AUTH_AUDIENCE, or the last sign-in's).",
            valueName: "url"))
    var audience: String?

    @Option(help: "Send requests here instead of https://<domain> (a local test tenant; default: GQL_AUTH_BASE_URL).")
    var baseURL: String?

    @Option(
        help: ArgumentHelp(
            "The token file (default: GQL_AUTH_TOKEN_FILE, or auth-tokens.json in gql-cli's data directory).",
            valueName: "path"))
    var tokenFile: String?

    /// What a sign-in remembers for the next commands (never a secret).
    struct Tenant: Codable, Equatable {
        var domain: String
        var clientId: String
        var connection: String
        var baseURL: String?
        var audience: String?
    }

    /// The token file these options name.
    func tokenPath(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let tokenFile = Self.value(tokenFile, "GQL_AUTH_TOKEN_FILE", environment) { return tokenFile }
        let directory = try CLIError.guarding("cannot find gql-cli's data directory") {
            try GQLDatabase.defaultDirectory()
        }
        return directory.appendingPathComponent("auth-tokens.json").path
    }

    /// The client these options describe, and the tenant settings it was made from.
    func auth(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (GQLAuth, Tenant) {
        let path = try tokenPath(environment: environment)
        let remembered = try? JSONDecoder().decode(
            Tenant.self, from: Data(contentsOf: URL(fileURLWithPath: path + ".tenant")))
        guard let domain = Self.value(domain, "GQL_AUTH_DOMAIN", environment) ?? remembered?.domain else {
            throw ValidationError("no Auth0 tenant: pass --domain or set GQL_AUTH_DOMAIN")
        }
        guard let clientId = Self.value(clientId, "GQL_AUTH_CLIENT_ID", environment) ?? remembered?.clientId else {
            throw ValidationError("no client id: pass --client-id or set GQL_AUTH_CLIENT_ID")
        }
        let tenant = Tenant(
            domain: domain, clientId: clientId,
            connection: connection ?? remembered?.connection ?? "Username-Password-Authentication",
            baseURL: Self.value(baseURL, "GQL_AUTH_BASE_URL", environment) ?? remembered?.baseURL,
            audience: Self.value(audience, "GQL_AUTH_AUDIENCE", environment) ?? remembered?.audience)
        let secret = Self.value(clientSecret, "GQL_AUTH_CLIENT_SECRET", environment)
        if let secret, secret.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            throw ValidationError("the client secret contains control characters")
        }
        var configuration = GQLAuth.Configuration()
        configuration.audience = tenant.audience
        let auth = GQLAuth(
            domain: tenant.domain, clientId: tenant.clientId, clientSecret: secret, connection: tenant.connection,
            tokens: .file(path), baseURL: tenant.baseURL, configuration: configuration)
        return (auth, tenant)
    }

    /// Keeps `tenant` beside the token file (0600), so later commands need no flags.
    func remember(_ tenant: Tenant) throws {
        let path = try tokenPath() + ".tenant"
        let data = try JSONEncoder().encode(tenant)
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError("cannot write \(path)")
        }
    }

    private static func value(_ flag: String?, _ name: String, _ environment: [String: String]) -> String? {
        if let flag, !flag.isEmpty { return flag }
        return environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Where a command's password comes from: `--password` (shows in ps), `--password-stdin`, or
/// `GQL_AUTH_PASSWORD`.
struct PasswordOptions: ParsableArguments {
    @Option(help: "The password (prefer --password-stdin or GQL_AUTH_PASSWORD: flags show in ps).")
    var password: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func validate() throws {
        if password != nil && passwordStdin { throw ValidationError("give --password or --password-stdin, not both") }
    }

    func read(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if passwordStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw ValidationError("--password-stdin: standard input holds no password")
            }
            return line
        }
        if let password, !password.isEmpty { return password }
        if let password = environment["GQL_AUTH_PASSWORD"], !password.isEmpty { return password }
        throw ValidationError("no password: pass --password-stdin, set GQL_AUTH_PASSWORD or pass --password")
    }
}

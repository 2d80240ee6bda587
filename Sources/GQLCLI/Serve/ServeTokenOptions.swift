import ArgumentParser
import Foundation
import GQLDevServer

/// `gql-cli serve`'s OpenID Connect mode (AppSync's `OPENID_CONNECT`): bearer tokens checked with a shared secret
/// (HS256) or a JSON Web Key Set (RS256), their issuer and audience.
struct ServeTokenOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Require a JWT signed with HS256 under this secret (Authorization header, connection_init payload, "
                + "AppSync header).", valueName: "secret"))
    var jwtSecret: String?

    @Option(
        help: ArgumentHelp(
            "Require a JWT signed with RS256 by a key of this JSON Web Key Set (a jwks.json file).",
            valueName: "file"))
    var jwks: String?

    @Option(help: ArgumentHelp("The issuer (iss) tokens must carry.", valueName: "url"))
    var issuer: String?

    @Option(help: ArgumentHelp("The audience (aud, the client id) tokens must be meant for.", valueName: "id"))
    var audience: String?

    @Option(help: ArgumentHelp("Seconds of clock skew tolerated on exp, nbf and iat. Default 0.", valueName: "s"))
    var jwtLeeway = 0

    func validate() throws {
        if jwtSecret != nil, jwks != nil { throw ValidationError("give --jwt-secret or --jwks, not both") }
        if jwtSecret?.isEmpty == true { throw ValidationError("--jwt-secret must not be empty") }
        if jwtSecret == nil, jwks == nil {
            for (name, value) in [("--issuer", issuer), ("--audience", audience)] where value != nil {
                throw ValidationError("\(name) needs --jwt-secret or --jwks")
            }
        }
        guard jwtLeeway >= 0 else { throw ValidationError("--jwt-leeway must not be negative") }
        if let jwks, !FileManager.default.fileExists(atPath: jwks) {
            throw ValidationError("no JSON Web Key Set file at \(jwks)")
        }
    }

    /// The server's settings, or `nil` when no token is required.
    func openIDConnect() throws -> GQLDevServer.OpenIDConnect? {
        let keys: GQLDevServer.OpenIDConnect.Keys
        if let jwtSecret {
            keys = .sharedSecret(jwtSecret)
        } else if let jwks {
            let data = try CLIError.guarding("cannot read \(jwks)") { try Data(contentsOf: URL(fileURLWithPath: jwks)) }
            keys = .jwks(data)
        } else {
            return nil
        }
        var settings = GQLDevServer.OpenIDConnect(keys: keys, issuer: issuer, audience: audience)
        settings.leeway = .seconds(jwtLeeway)
        return settings
    }
}

import Foundation
import GQLCore
import HTTPTypes
import Hummingbird

/// Maps HTTP onto the ``AuthTenant``: Auth0's Authentication API paths, the two Management API calls GQLAuth
/// makes, and the emulator's own `/_emulator/reset-emails`. Bodies are JSON or forms, at most 64 KiB, read within
/// the limits' body timeout; every refusal is in Auth0's shape for the path.
struct AuthRoutes: Sendable {
    let tenant: AuthTenant
    let bodyTimeout: Duration

    static let maxBodyBytes = 64 << 10
    static let passwordRealm = "http://auth0.com/oauth/grant-type/password-realm"

    /// Token answers are never cached (RFC 6749 §5.1).
    static let noStore: HTTPFields = {
        var fields: HTTPFields = [.cacheControl: "no-store"]
        if let pragma = HTTPField.Name("Pragma") { fields[pragma] = "no-cache" }
        return fields
    }()

    func respond(_ request: Request) async -> Response {
        let path = request.uri.path
        let method = request.method
        do {
            switch (method, path) {
            case (.get, "/.well-known/jwks.json"):
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                    body: .init(byteBuffer: .init(string: tenant.key.jwks)))
            case (.get, "/.well-known/openid-configuration"):
                return EmulatorJSON.response(.ok, .object(discovery()))
            case (.post, "/oauth/token"):
                let fields = try await fields(request, oauth: true)
                return EmulatorJSON.response(.ok, .object(try token(fields, request: request)), extra: Self.noStore)
            case (.post, "/oauth/revoke"):
                let fields = try await fields(request, oauth: true)
                let (id, secret) = clientCredentials(fields, request: request)
                try tenant.authenticateClient(id: id, secret: secret)
                try tenant.users.revoke(token: fields["token"]?.stringValue)
                return Response(status: .ok, headers: [.contentLength: "0"])
            case (.post, "/dbconnections/signup"):
                let fields = try await fields(request, oauth: false)
                try checkClientForDatabase(fields)
                let answer = try tenant.users.signUp(
                    email: fields["email"]?.stringValue, password: fields["password"]?.stringValue,
                    connection: fields["connection"]?.stringValue)
                return EmulatorJSON.response(.ok, .object(answer))
            case (.post, "/dbconnections/change_password"):
                let fields = try await fields(request, oauth: false)
                try checkClientForDatabase(fields)
                try tenant.users.changePassword(
                    email: fields["email"]?.stringValue, connection: fields["connection"]?.stringValue)
                return EmulatorJSON.text(.ok, "We've just sent you an email to reset your password.")
            case (.get, "/userinfo"):
                guard let token = Self.bearer(request.headers[.authorization]) else {
                    return Self.unauthorized
                }
                do {
                    return EmulatorJSON.response(.ok, .object(try tenant.grants.userInfo(accessToken: token)))
                } catch is Auth0Error {
                    return Self.unauthorized
                }
            case (.patch, _) where path.hasPrefix("/api/v2/users/"):
                return try await updateUser(request, id: String(path.dropFirst("/api/v2/users/".count)))
            case (.get, "/_emulator/reset-emails"):
                let emails = tenant.users.resetEmails.map { entry -> GQLValue in
                    ["email": .string(entry.email), "connection": .string(entry.connection), "at": .string(entry.at)]
                }
                return EmulatorJSON.response(.ok, .array(emails))
            default:
                return EmulatorJSON.response(
                    .notFound, ["statusCode": 404, "error": "Not Found", "message": .string("Not Found")])
            }
        } catch let error as Auth0Error {
            let extra = path.hasPrefix("/oauth/") ? Self.noStore : [:]
            return EmulatorJSON.response(error.status, .object(error.body), extra: extra)
        } catch {
            return EmulatorJSON.response(.internalServerError, .object(AuthTenant.serverError.body))
        }
    }

    // MARK: - /oauth/token

    private func token(_ fields: GQLValues, request: Request) throws -> GQLValues {
        let (id, secret) = clientCredentials(fields, request: request)
        let grant = fields["grant_type"]?.stringValue
        switch grant {
        case Self.passwordRealm?, "password"?:
            try tenant.authenticateClient(id: id, secret: secret)
            return try tenant.grants.passwordGrant(
                username: fields["username"]?.stringValue, password: fields["password"]?.stringValue,
                realm: grant == "password" ? nil : fields["realm"]?.stringValue ?? "",
                scope: fields["scope"]?.stringValue, audience: fields["audience"]?.stringValue)
        case "refresh_token"?:
            try tenant.authenticateClient(id: id, secret: secret)
            return try tenant.grants.refreshGrant(
                token: fields["refresh_token"]?.stringValue, scope: fields["scope"]?.stringValue)
        case "client_credentials"?:
            try tenant.authenticateClient(id: id, secret: secret, secretRequired: true)
            return try tenant.grants.clientCredentials(audience: fields["audience"]?.stringValue)
        case nil:
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: grant_type")
        case let other?:
            throw Auth0Error.oauth(
                .forbidden, "unauthorized_client",
                "Grant type '\(String(other.prefix(100)))' not allowed for the client.")
        }
    }

    /// The client id and secret from the body, or from HTTP Basic (`client_secret_basic`).
    private func clientCredentials(_ fields: GQLValues, request: Request) -> (String?, String?) {
        var id = fields["client_id"]?.stringValue
        var secret = fields["client_secret"]?.stringValue
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        {
            let basicId = String(text[..<colon]).removingPercentEncoding
            let basicSecret = String(text[text.index(after: colon)...]).removingPercentEncoding
            id = id ?? basicId
            secret = secret ?? basicSecret
        }
        return (id, secret)
    }

    /// `/dbconnections/*` need this application's client id (no secret).
    private func checkClientForDatabase(_ fields: GQLValues) throws {
        guard let id = fields["client_id"]?.stringValue,
            GQLEmulatorCredentials.same(id, tenant.configuration.clientId)
        else {
            throw Auth0Error.database("invalid_request", "client_id is required and must be this tenant's application")
        }
    }

    // MARK: - Management API

    private func updateUser(_ request: Request, id encoded: String) async throws -> Response {
        guard let token = Self.bearer(request.headers[.authorization]) else {
            throw Auth0Error.management(.unauthorized, "Missing authentication", errorCode: "unauthorized")
        }
        let claims: GQLValues
        do {
            claims = try tenant.grants.verify(token, audience: tenant.managementAudience)
        } catch {
            throw Auth0Error.management(.unauthorized, "Invalid token", errorCode: "invalid_token")
        }
        // Only the application's own token (client_credentials) manages users; a user's token never does.
        guard claims["gty"]?.stringValue == "client-credentials",
            AuthTenant.scopes(claims["scope"]?.stringValue ?? "").contains("update:users")
        else {
            throw Auth0Error.management(
                .forbidden, "Insufficient scope, expected any of: update:users", errorCode: "insufficient_scope")
        }
        let body: GQLValues
        do {
            body = try EmulatorJSON.fields(
                try await EmulatorJSON.body(request, limit: Self.maxBodyBytes, timeout: bodyTimeout),
                contentType: request.headers[.contentType])
        } catch {
            throw Auth0Error.management(
                .badRequest, "Payload validation error: 'Invalid JSON'.", errorCode: "invalid_body")
        }
        if let password = body["password"], !password.isNull, password.stringValue == nil {
            throw Auth0Error.management(
                .badRequest, "Payload validation error: 'Expected type string' on property password.",
                errorCode: "invalid_body")
        }
        if let blocked = body["blocked"], !blocked.isNull, blocked.boolValue == nil {
            throw Auth0Error.management(
                .badRequest, "Payload validation error: 'Expected type boolean' on property blocked.",
                errorCode: "invalid_body")
        }
        let id = encoded.removingPercentEncoding ?? encoded
        return EmulatorJSON.response(
            .ok,
            .object(
                try tenant.users.updateUser(
                    userId: id, password: body["password"]?.stringValue, blocked: body["blocked"]?.boolValue)))
    }

    // MARK: - Helpers

    /// The body's fields; a body that is too large, too slow or malformed is refused in the path's shape.
    private func fields(_ request: Request, oauth: Bool) async throws -> GQLValues {
        do throws(EmulatorJSON.BodyFailure) {
            let bytes = try await EmulatorJSON.body(request, limit: Self.maxBodyBytes, timeout: bodyTimeout)
            return try EmulatorJSON.fields(bytes, contentType: request.headers[.contentType])
        } catch {
            let reason =
                switch error {
                case .tooLarge: "The request body is too large (at most 64 KiB)."
                case .timedOut: "The request body did not arrive in time."
                case .unreadable: "The request body could not be read."
                case .malformed(let why): "Invalid request body: \(why)."
                }
            let status: HTTPResponse.Status =
                switch error {
                case .tooLarge: .contentTooLarge
                case .timedOut: .requestTimeout
                default: .badRequest
                }
            throw oauth
                ? Auth0Error.oauth(status, "invalid_request", reason)
                : Auth0Error.database("invalid_body", reason, status: status)
        }
    }

    /// The token of an `Authorization: Bearer …` value.
    static func bearer(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// `/userinfo`'s refusal: 401 with a `WWW-Authenticate` challenge (RFC 6750 §3).
    static var unauthorized: Response {
        EmulatorJSON.text(
            .unauthorized, "Unauthorized", extra: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
    }

    /// `/.well-known/openid-configuration`: the OpenID Provider Metadata of the tenant (the endpoints the
    /// emulator serves; `authorize` is listed, as every provider must, but the emulator has no login page).
    private func discovery() -> GQLValues {
        let base = tenant.baseURL
        func strings(_ values: [String]) -> GQLValue { .array(values.map { .string($0) }) }
        return [
            "issuer": .string(tenant.issuer),
            "authorization_endpoint": .string(base + "/authorize"),
            "token_endpoint": .string(base + "/oauth/token"),
            "userinfo_endpoint": .string(base + "/userinfo"),
            "jwks_uri": .string(base + "/.well-known/jwks.json"),
            "revocation_endpoint": .string(base + "/oauth/revoke"),
            "scopes_supported": strings(["openid", "profile", "email", "offline_access"]),
            "response_types_supported": strings(["code"]),
            "grant_types_supported": strings([
                "password", Self.passwordRealm, "refresh_token", "client_credentials",
            ]),
            "subject_types_supported": strings(["public"]),
            "id_token_signing_alg_values_supported": strings(["RS256"]),
            "token_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post", "none"]),
            "claims_supported": strings([
                "aud", "email", "email_verified", "exp", "iat", "iss", "name", "nickname", "sub", "updated_at",
            ]),
        ]
    }
}

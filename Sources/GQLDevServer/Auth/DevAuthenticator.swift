import Foundation
import GQLCore
import Hummingbird

/// Checks the credentials a request or connection carries against the configured API key, admin secret and
/// OpenID Connect tokens.
///
/// With none configured, everything is allowed. Otherwise a request needs one good credential: `x-api-key` equal
/// to the API key, `x-hasura-admin-secret` equal to the admin secret, or an `Authorization` JWT that
/// ``DevTokenCheck`` accepts. Keys are compared in constant time; no credential is ever logged or quoted.
struct DevAuthenticator: Sendable {
    /// Credentials found in headers, a `connection_init` payload or an AppSync `header`.
    struct Credentials: Sendable, Equatable {
        var apiKey: String?
        var adminSecret: String?
        /// An `Authorization` value: `Bearer <jwt>` or the bare JWT.
        var authorization: String?

        init(apiKey: String? = nil, adminSecret: String? = nil, authorization: String? = nil) {
            self.apiKey = apiKey
            self.adminSecret = adminSecret
            self.authorization = authorization
        }

        /// From HTTP headers (`x-api-key`, `x-hasura-admin-secret`; names are case-insensitive).
        init(headers: HTTPFields) {
            for field in headers {
                switch field.name.canonicalName {
                case "x-api-key": apiKey = field.value
                case "x-hasura-admin-secret": adminSecret = field.value
                case "authorization": authorization = field.value
                default: break
                }
            }
        }

        /// From a JSON object: its own members or those of a nested `headers` object, as clients put them in
        /// `connection_init` payloads, AppSync headers and `extensions.authorization`.
        init(json: GQLValue?) {
            guard let object = json?.objectValue else { return }
            for (name, value) in object {
                switch name.lowercased() {
                case "x-api-key", "apikey", "api_key": apiKey = value.stringValue ?? apiKey
                case "x-hasura-admin-secret": adminSecret = value.stringValue ?? adminSecret
                case "authorization": authorization = value.stringValue ?? authorization
                case "headers":
                    let nested = Credentials(json: value)
                    apiKey = nested.apiKey ?? apiKey
                    adminSecret = nested.adminSecret ?? adminSecret
                    authorization = nested.authorization ?? authorization
                default: break
                }
            }
        }

        /// Whether any credential is present.
        var isEmpty: Bool { apiKey == nil && adminSecret == nil && authorization == nil }

        /// These credentials, with those of `other` filling the gaps.
        func merging(_ other: Credentials) -> Credentials {
            Credentials(
                apiKey: apiKey ?? other.apiKey, adminSecret: adminSecret ?? other.adminSecret,
                authorization: authorization ?? other.authorization)
        }
    }

    /// Why credentials were refused, in words a client may see (never the credential itself).
    struct Refusal: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    let apiKey: String?
    let adminSecret: String?
    /// OpenID Connect tokens, when configured.
    let tokens: DevTokenCheck?

    init(apiKey: String?, adminSecret: String?, tokens: DevTokenCheck? = nil) {
        self.apiKey = apiKey
        self.adminSecret = adminSecret
        self.tokens = tokens
    }

    /// Whether any credential is required at all.
    var isRequired: Bool { apiKey != nil || adminSecret != nil || tokens != nil }

    /// The WebSocket close code for refused connection credentials: 4401 Unauthorized where tokens are checked
    /// (a client refreshes its token and retries), 4403 Forbidden for keys, as before.
    var refusalCloseCode: Int { tokens != nil ? 4401 : 4403 }

    /// Whether `credentials` satisfy the configuration, and until when: a token's expiry, `nil` for keys, which
    /// do not expire.
    func check(_ credentials: Credentials) -> Result<Date?, Refusal> {
        guard isRequired else { return .success(nil) }
        if let apiKey, let offered = credentials.apiKey, Self.constantTimeEqual(apiKey, offered) {
            return .success(nil)
        }
        if let adminSecret, let offered = credentials.adminSecret, Self.constantTimeEqual(adminSecret, offered) {
            return .success(nil)
        }
        if let tokens {
            guard let authorization = credentials.authorization else {
                return .failure(Refusal("no Authorization token"))
            }
            return tokens.check(authorization).map { Optional($0) }
        }
        return .failure(Refusal("missing or invalid x-api-key or x-hasura-admin-secret."))
    }

    /// The caller's identity in `credentials`: the `sub` of a token that passes the checks, nil without one (keys
    /// carry no identity). Owner-scoped models (`@auth(rules: [{ allow: owner }])`) scope their items to it.
    func owner(_ credentials: Credentials) -> String? {
        guard let tokens, let authorization = credentials.authorization else { return nil }
        return tokens.subject(authorization)
    }

    /// Whether `credentials` satisfy the configuration now.
    func authorizes(_ credentials: Credentials) -> Bool {
        if case .success = check(credentials) { return true }
        return false
    }

    /// Whether credentials good until `deadline` (`nil`: for ever) have expired since they were checked.
    func hasExpired(_ deadline: Date?) -> Bool {
        guard let deadline, let tokens else { return false }
        return tokens.hasExpired(deadline)
    }

    /// Compares without stopping at the first difference, so timing does not reveal a matching prefix.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

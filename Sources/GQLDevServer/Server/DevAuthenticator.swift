import GQLCore
import Hummingbird

/// Checks the credentials a request or connection carries against the configured API key and admin secret.
///
/// With neither configured, everything is allowed. With one or both, a request needs one matching
/// credential: `x-api-key` equal to the API key, or `x-hasura-admin-secret` equal to the admin secret.
/// Credentials are compared in constant time and never logged.
struct DevAuthenticator: Sendable {
    /// Credentials found in headers, a `connection_init` payload or an AppSync `header`.
    struct Credentials: Sendable, Equatable {
        var apiKey: String?
        var adminSecret: String?

        init(apiKey: String? = nil, adminSecret: String? = nil) {
            self.apiKey = apiKey
            self.adminSecret = adminSecret
        }

        /// From HTTP headers (`x-api-key`, `x-hasura-admin-secret`; names are case-insensitive).
        init(headers: HTTPFields) {
            for field in headers {
                switch field.name.canonicalName {
                case "x-api-key": apiKey = field.value
                case "x-hasura-admin-secret": adminSecret = field.value
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
                case "headers":
                    let nested = Credentials(json: value)
                    apiKey = nested.apiKey ?? apiKey
                    adminSecret = nested.adminSecret ?? adminSecret
                default: break
                }
            }
        }

        /// Whether any credential is present.
        var isEmpty: Bool { apiKey == nil && adminSecret == nil }

        /// These credentials, with those of `other` filling the gaps.
        func merging(_ other: Credentials) -> Credentials {
            Credentials(apiKey: apiKey ?? other.apiKey, adminSecret: adminSecret ?? other.adminSecret)
        }
    }

    let apiKey: String?
    let adminSecret: String?

    /// Whether any credential is required at all.
    var isRequired: Bool { apiKey != nil || adminSecret != nil }

    /// Whether `credentials` satisfy the configuration.
    func authorizes(_ credentials: Credentials) -> Bool {
        guard isRequired else { return true }
        if let apiKey, let offered = credentials.apiKey, Self.constantTimeEqual(apiKey, offered) { return true }
        if let adminSecret, let offered = credentials.adminSecret, Self.constantTimeEqual(adminSecret, offered) {
            return true
        }
        return false
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

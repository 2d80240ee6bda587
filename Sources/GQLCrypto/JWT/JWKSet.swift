import Foundation
import GQLCore

/// A JSON Web Key Set (RFC 7517 §5), as an OpenID provider publishes it at `/.well-known/jwks.json`: the RSA
/// signing keys, each by its `kid`.
///
/// ```swift
/// let keys = try JWKSet(json: data)
/// if let key = keys[kid] { … }                   // JWTKey.rsa
/// try verifier.verify(token, keys: keys, now: Date())
/// ```
///
/// Keys the toolkit cannot use for RS256 (another `kty` such as EC, `use: "enc"`, an `alg` other than RS256) are
/// skipped, not errors, so a provider may publish more; a malformed RSA key is an error that names it.
package struct JWKSet: Sendable {
    /// One usable key.
    package struct Key: Sendable {
        package let id: String?
        package let key: RSAPublicKey

        package init(id: String?, key: RSAPublicKey) {
            self.id = id
            self.key = key
        }
    }

    /// The usable keys, in the set's order.
    package let keys: [Key]

    package init(keys: [Key]) { self.keys = keys }

    /// Parses a JWKS document.
    /// - Throws: ``GQLCore/GQLError`` `.invalidJSON` for text that is not JSON, `.crypto` for a set or RSA key that
    ///   is malformed (naming its position and kid).
    package init(json: Data) throws {
        guard case .object(let document) = try GQLValue(json: json), case .array(let entries)? = document["keys"] else {
            throw GQLError(.crypto, "a JWKS is a JSON object with a \"keys\" array")
        }
        var keys = [Key]()
        for (index, entry) in entries.enumerated() {
            guard case .object(let jwk) = entry else { throw GQLError(.crypto, "JWKS key \(index) is not an object") }
            let id = jwk["kid"]?.stringValue
            let name = "JWKS key \(index)" + (id.map { " (kid \"\($0)\")" } ?? "")
            guard jwk["kty"]?.stringValue == "RSA" else { continue }
            if let use = jwk["use"], use.stringValue != "sig" { continue }
            if let algorithm = jwk["alg"], algorithm.stringValue != "RS256" { continue }
            guard let n = jwk["n"]?.stringValue.flatMap({ Base64URL.decode($0) }),
                let e = jwk["e"]?.stringValue.flatMap({ Base64URL.decode($0) })
            else { throw GQLError(.crypto, "\(name) lacks base64url \"n\" and \"e\"") }
            do {
                keys.append(Key(id: id, key: try RSAPublicKey(modulus: n, exponent: e)))
            } catch let error as GQLError {
                throw GQLError(.crypto, "\(name): \(error.message)")
            }
        }
        self.keys = keys
    }

    /// The key with id `kid`, as a ``JWTKey``.
    package subscript(kid: String) -> JWTKey? {
        keys.first { $0.id == kid }.map { .rsa($0.key) }
    }

    /// The key a token's header names, or the set's only key when it names none.
    /// - Throws: ``GQLCore/GQLError`` `.invalidToken` when the set has no such key.
    package func key(for jwt: JWT) throws -> JWTKey {
        if let kid = jwt.keyId {
            guard let key = self[kid] else { throw JWT.invalid("no key in the JWKS has the token's kid") }
            return key
        }
        guard keys.count == 1 else {
            throw JWT.invalid("the token names no key (kid) and the JWKS holds \(keys.count) keys")
        }
        return .rsa(keys[0].key)
    }

    /// The set as JWKS JSON (RS256 signing keys), as a provider serves it.
    package func json() throws -> String {
        let entries: [GQLValue] = keys.map { entry in
            let (n, e) = entry.key.components
            var jwk: GQLValues = [
                "kty": "RSA", "use": "sig", "alg": "RS256", "n": .string(Base64URL.encode(n)),
                "e": .string(Base64URL.encode(e)),
            ]
            if let id = entry.id { jwk["kid"] = .string(id) }
            return .object(jwk)
        }
        return try GQLValue.object(["keys": .array(entries)]).jsonString()
    }
}

import GQLCore

/// Makes signed JWTs (compact serialization), for the dev server, test peers, tests and a server that mints tokens
/// for another service (OneSignal's identity verification); an app verifies tokens, it does not mint them.
///
/// ```swift
/// let token = try JWTSigner.hs256(["sub": "auth0|1", "exp": 1_900_000_000], secret: "client-secret")
/// let token = try JWTSigner.rs256(claims, key: privateKey, keyId: "k1")
/// let token = try JWTSigner.es256(claims, key: p256Key)     // OneSignal's identity-verification tokens
/// ```
package enum JWTSigner {
    /// A token signed with HMAC-SHA256 under `secret`'s UTF-8 bytes.
    package static func hs256(_ claims: GQLValues, secret: String, keyId: String? = nil) throws -> String {
        let key = try HMACSHA256.Key(Array(secret.utf8))
        return try sign(claims, algorithm: "HS256", keyId: keyId) { try key.authenticate($0) }
    }

    /// A token signed with RS256 under `key`.
    package static func rs256(_ claims: GQLValues, key: RSAPrivateKey, keyId: String? = nil) throws -> String {
        try sign(claims, algorithm: "RS256", keyId: keyId) { try key.sign($0) }
    }

    /// A token signed with ES256 (ECDSA on P-256 with SHA-256) under `key`.
    package static func es256(_ claims: GQLValues, key: P256PrivateKey, keyId: String? = nil) throws -> String {
        try sign(claims, algorithm: "ES256", keyId: keyId) { try key.sign($0) }
    }

    /// A token whose header and claims are given as they are, signed by `signature` over `header.payload`:
    /// tests use it to build tokens a verifier must refuse.
    package static func sign(
        header: GQLValues, claims: GQLValues, signature: ([UInt8]) throws -> [UInt8]
    ) throws -> String {
        let input =
            Base64URL.encode(Array(try GQLValue.object(header).jsonString().utf8)) + "."
            + Base64URL.encode(Array(try GQLValue.object(claims).jsonString().utf8))
        return input + "." + Base64URL.encode(try signature(Array(input.utf8)))
    }

    private static func sign(
        _ claims: GQLValues, algorithm: String, keyId: String?, _ signature: ([UInt8]) throws -> [UInt8]
    ) throws -> String {
        var header: GQLValues = ["alg": .string(algorithm), "typ": "JWT"]
        if let keyId { header["kid"] = .string(keyId) }
        return try sign(header: header, claims: claims, signature: signature)
    }
}

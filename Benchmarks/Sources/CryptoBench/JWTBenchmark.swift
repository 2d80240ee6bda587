import Foundation
import GQLCrypto
import GQLServices

/// GQLCrypto's JWT layer as CryptoBench drives it: the signer, the verifier and the signature check that GQLAuth and
/// GQLDevServer use, all `package` API. This target is compiled as a member of GraphQLite's package (its
/// `-package-name`, see Benchmarks/Package.swift), so none of it is part of the product's surface.
///
/// ```swift
/// let bench = try JWTBenchmark(algorithm: "RS256", issuer: "https://tenant.test/", audience: "client")
/// let token = try bench.sign(["sub": "user-1", "exp": 4_102_444_800])
/// bench.verify(token, now: Date())            // "user-1": the full check (parse, signature, claims)
/// let input = try bench.prepare(token)
/// bench.verifySignature(input)                // the signature alone: the libcrypto floor
/// ```
struct JWTBenchmark: Sendable {
    /// A token split once, for the signature-only floor.
    struct Prepared: Sendable {
        let jwt: JWT
    }

    private let key: JWTKey
    private let privateKey: RSAPrivateKey?
    private let secret: String?
    private let verifier: JWTVerifier
    /// The verification key as a JWKS document (RS256), or nil (HS256: the secret).
    let jwks: String?

    /// HS256 under `secret`, or RS256 under a newly generated 2,048-bit key.
    init(algorithm: String, secret: String = "", issuer: String, audience: String) throws {
        verifier = JWTVerifier(issuer: issuer, audience: audience)
        switch algorithm {
        case "HS256":
            key = try .secret(secret)
            self.secret = secret
            privateKey = nil
            jwks = nil
        case "RS256":
            let generated = try RSAPrivateKey.generate()
            privateKey = generated
            self.secret = nil
            key = .rsa(try generated.publicKey)
            jwks = try JWKSet(keys: [.init(id: "bench", key: try generated.publicKey)]).json()
        default:
            throw GQLError(.invalidArgument, "JWTBenchmark knows HS256 and RS256, not \(algorithm)")
        }
    }

    /// A token with `claims`, signed with this benchmark's key.
    func sign(_ claims: GQLValues) throws -> String {
        if let privateKey { return try JWTSigner.rs256(claims, key: privateKey, keyId: "bench") }
        return try JWTSigner.hs256(claims, secret: secret ?? "")
    }

    /// The token's `sub` when it passes every check at `now`, nil when it is refused.
    func verify(_ token: String, now: Date) -> String? {
        guard let jwt = try? verifier.verify(token, key: key, now: now) else { return nil }
        return jwt.claims["sub"]?.stringValue
    }

    /// The token parsed, for ``verifySignature(_:)``.
    func prepare(_ token: String) throws -> Prepared { Prepared(jwt: try JWT(compact: token)) }

    /// Whether the prepared token's signature holds: HMAC or RSA alone, no parsing and no claims.
    func verifySignature(_ prepared: Prepared) -> Bool {
        (try? verifier.checkSignature(prepared.jwt, key: key)) != nil
    }
}

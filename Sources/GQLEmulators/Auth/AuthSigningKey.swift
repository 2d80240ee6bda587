import Foundation
import GQLCore
import GQLCrypto

/// The RS256 key the Auth0 emulator signs tokens with: made at first start and kept in the data folder
/// (`signing-key.pem`, PKCS#8, owner-only), so tokens issued before a restart still verify after it. Its `kid` is
/// derived from the public key, and the JWKS publishes it.
struct AuthSigningKey: Sendable {
    let privateKey: RSAPrivateKey
    let keyId: String
    /// The JWKS document, `{"keys": [{kty, use, alg, kid, n, e}]}`.
    let jwks: String

    static let fileName = "signing-key.pem"

    /// The key kept in `folder`, or a new one saved there.
    /// - Throws: ``GQLCore/GQLError`` `.crypto` for a key file that holds no usable RSA key; `.io` when the folder
    ///   cannot be written.
    static func loadOrCreate(in folder: GQLDataFolder) throws -> AuthSigningKey {
        let key: RSAPrivateKey
        if let pem = try folder.read(fileName) {
            do {
                key = try RSAPrivateKey(pem: String(decoding: pem, as: UTF8.self))
            } catch let error as GQLError {
                throw GQLError(.crypto, "\(fileName) in the auth emulator's data folder: \(error.message)")
            }
        } else {
            key = try RSAPrivateKey.generate(bits: 2048)
            try folder.write(Data(try key.pem().utf8), to: fileName)
            _ = chmod(try folder.resolve(fileName).path, 0o600)
        }
        return try AuthSigningKey(key)
    }

    init(_ key: RSAPrivateKey) throws {
        privateKey = key
        let publicKey = try key.publicKey
        keyId = Base64URL.encode(SHA256.hash(publicKey.components.modulus).prefix(12))
        jwks = try JWKSet(keys: [JWKSet.Key(id: keyId, key: publicKey)]).json()
    }

    /// `claims` signed, with this key's `kid` in the header.
    func sign(_ claims: GQLValues) throws -> String {
        try JWTSigner.rs256(claims, key: privateKey, keyId: keyId)
    }
}

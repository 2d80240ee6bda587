import Foundation
import GQLCore

extension GQLError.Code {
    /// A JSON Web Token that is malformed, badly signed, expired, not yet valid, or issued by or for someone
    /// else; the message says which.
    public static let invalidToken = GQLError.Code("invalidToken")
}

/// A JSON Web Token in JWS compact serialization (RFC 7519, RFC 7515 §7.1), parsed but not yet trusted: pass it
/// to ``JWTVerifier`` before believing a claim.
///
/// ```swift
/// let jwt = try JWT(compact: token)
/// jwt.algorithm                      // "RS256"
/// jwt.keyId                          // the header's "kid", to pick a key from a JWKS
/// let user = try verifier.verify(jwt, key: key, now: Date()).claims["sub"]?.stringValue
/// ```
package struct JWT: Sendable {
    /// The longest token accepted, in bytes; ID and access tokens are a few kilobytes at most.
    package static let maximumLength = 64 * 1024

    /// The JOSE header.
    package let header: GQLValues
    /// The claims set.
    package let claims: GQLValues
    /// The header's `alg`.
    package let algorithm: String
    /// The header's `kid`, if any.
    package let keyId: String?
    /// The bytes the signature covers: the ASCII text `header.payload`.
    package let signingInput: [UInt8]
    /// The signature bytes.
    package let signature: [UInt8]

    /// Parses `compact` (three base64url parts separated by dots).
    /// - Throws: ``GQLCore/GQLError`` `.invalidToken` naming the part at fault; the token's text is never quoted.
    package init(compact: String) throws {
        let bytes = Array(compact.utf8)
        guard !bytes.isEmpty else { throw Self.invalid("the token is empty") }
        guard bytes.count <= Self.maximumLength else {
            throw Self.invalid("the token is \(bytes.count) bytes long; at most \(Self.maximumLength) are accepted")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count != 5 else {
            throw Self.invalid("the token is encrypted (JWE); only signed tokens are accepted")
        }
        guard parts.count == 3 else {
            throw Self.invalid("the token has \(parts.count) dot-separated parts; a signed JWT has 3")
        }
        let header = try Self.object(parts[0], "header")
        guard case .string(let algorithm)? = header["alg"] else {
            throw Self.invalid("the header has no \"alg\" string")
        }
        if let critical = header["crit"] {
            let names = critical.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? "?"
            throw Self.invalid("the header marks extensions as critical (\(names)); none are supported")
        }
        if let kid = header["kid"], kid.stringValue == nil {
            throw Self.invalid("the header's \"kid\" is not a string")
        }
        self.header = header
        self.algorithm = algorithm
        self.keyId = header["kid"]?.stringValue
        self.claims = try Self.object(parts[1], "payload")
        guard let signature = Base64URL.decode(bytes: parts[2]) else {
            throw Self.invalid("the signature is not base64url")
        }
        self.signature = signature
        self.signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
    }

    private static func object(_ part: ArraySlice<UInt8>, _ name: String) throws -> GQLValues {
        guard !part.isEmpty else { throw invalid("the \(name) is empty") }
        guard let json = Base64URL.decode(bytes: part) else {
            throw invalid("the \(name) is not base64url")
        }
        let value: GQLValue
        do { value = try GQLValue(json: Data(json)) } catch let error as GQLError {
            throw invalid("the \(name) is not JSON: \(error.message)")
        }
        guard case .object(let object) = value else { throw invalid("the \(name) is JSON but not an object") }
        return object
    }

    static func invalid(_ reason: String) -> GQLError { GQLError(.invalidToken, "JWT refused: \(reason)") }
}

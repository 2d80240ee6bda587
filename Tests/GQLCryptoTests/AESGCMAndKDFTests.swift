import Foundation
import GQLCore
import GQLCrypto
import Testing

/// AES-256-GCM (a vector from Python's `cryptography`, round trips, every altered byte refused), HKDF-SHA256 (RFC
/// 5869 test case 1) and PBKDF2-HMAC-SHA512 (a vector from Python's hashlib).
@Suite struct AESGCMAndKDFTests {
    private static func bytes(_ hex: String) -> [UInt8] { Bytes.unhex(hex) ?? [] }
    static let key = Array(UInt8(0)..<32)

    @Test func opensWhatAnotherImplementationSealed() throws {
        // nonce 100…111 ‖ ciphertext ‖ tag of "the tokens in clear", associated data "header" (Python cryptography).
        let sealed = Self.bytes(
            "6465666768696a6b6c6d6e6f3c73bb460d863dfb50117f81b445099127a374087b5ddfd2f6b01dd9d33bef46f9be78")
        let opened = try AESGCM.open(sealed, key: Self.key, associatedData: Array("header".utf8))
        #expect(opened == Array("the tokens in clear".utf8))
        #expect(try AESGCM.open(sealed, key: Self.key, associatedData: Array("Header".utf8)) == nil)
    }

    @Test func sealsAfreshAndRefusesEveryAlteredByte() throws {
        let plaintext = Array("a message of some length".utf8)
        let aad = Array("aad".utf8)
        let one = try AESGCM.seal(plaintext, key: Self.key, associatedData: aad)
        let two = try AESGCM.seal(plaintext, key: Self.key, associatedData: aad)
        #expect(one.count == plaintext.count + AESGCM.overhead)
        #expect(one != two, "a fresh nonce each time")
        #expect(try AESGCM.open(one, key: Self.key, associatedData: aad) == plaintext)
        for index in one.indices {
            var altered = one
            altered[index] ^= 0x80
            #expect(try AESGCM.open(altered, key: Self.key, associatedData: aad) == nil, "byte \(index)")
        }
        #expect(try AESGCM.open(Array(one.dropLast()), key: Self.key, associatedData: aad) == nil)
        #expect(try AESGCM.open(one, key: Array(repeating: 1, count: 32), associatedData: aad) == nil)
        #expect(try AESGCM.open(try AESGCM.seal([], key: Self.key), key: Self.key) == [])
        #expect(throws: GQLError.self) { try AESGCM.seal(plaintext, key: Array(repeating: 0, count: 16)) }
    }

    @Test func hkdfMatchesRFC5869() throws {
        let okm = try HKDFSHA256.derive(
            Array(repeating: 0x0b, count: 22), salt: Array(0..<13), info: Array(0xf0..<0xfa), length: 42)
        #expect(
            Bytes.hex(okm)
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func pbkdf2MatchesAnotherImplementation() throws {
        // hashlib.pbkdf2_hmac("sha512", b"password", b"salt", 2, 32)
        let key = try PBKDF2SHA512.derive(Array("password".utf8), salt: Array("salt".utf8), iterations: 2)
        #expect(Bytes.hex(key) == "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c")
        #expect(throws: GQLError.self) { try PBKDF2SHA512.derive([1], salt: [2], iterations: 0) }
        // Never an empty key (which a comparison would read as a wrong key): a length out of range throws.
        #expect(throws: GQLError.self) { try HKDFSHA256.derive([1], salt: [2], info: [], length: 0) }
        #expect(throws: GQLError.self) { try HKDFSHA256.derive([1], salt: [2], info: [], length: 255 * 32 + 1) }
    }
}

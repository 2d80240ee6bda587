import Foundation
import GQLCrypto
import Testing

/// NIST's SHA-256 examples (FIPS 180-2 appendix B and the CAVP short/long message sets).
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func shortMessages(message: String, digest: String) throws {
        #expect(Bytes.hex(SHA256.hash(Data(message.utf8))) == digest)
        var hasher = try Digest(.sha256)
        for byte in message.utf8 { try hasher.update([byte]) }
        #expect(Bytes.hex(try hasher.finalize()) == digest)
    }

    @Test func oneMillionAs() throws {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(Bytes.hex(SHA256.hash(Data(repeating: UInt8(ascii: "a"), count: 1_000_000))) == expected)
        var hasher = try Digest(.sha256)
        let chunk = Data(repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { try hasher.update(chunk) }
        #expect(Bytes.hex(try hasher.finalize()) == expected)
    }

    @Test func cavpByteMessages() {
        // SHA256ShortMsg.rsp: Len = 8, Msg = d3; Len = 16, Msg = 11af.
        #expect(Bytes.hex(SHA256.hash([0xd3])) == "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1")
        #expect(
            Bytes.hex(SHA256.hash([0x11, 0xaf])) == "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98")
    }
}

/// RFC 1321's MD5 examples (MD5 only checks S3 ETags).
@Suite struct MD5Tests {
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    ])
    func rfc1321(message: String, digest: String) throws {
        #expect(Bytes.hex(MD5.hash(Data(message.utf8))) == digest)
        var streamed = try Digest(.md5)
        try streamed.update(Data(message.utf8))
        #expect(Bytes.hex(try streamed.finalize()) == digest)
    }
}

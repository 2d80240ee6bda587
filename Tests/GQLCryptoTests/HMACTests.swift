import Foundation
import GQLCrypto
import Testing

/// RFC 4231's HMAC-SHA256 test cases.
@Suite struct HMACTests {
    private static func bytes(_ hex: String) -> [UInt8] { Bytes.unhex(hex) ?? [] }

    @Test(arguments: [
        // 1: a 20-byte key
        (
            bytes(String(repeating: "0b", count: 20)), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        // 2: a key shorter than the output
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        // 3: 50 bytes of 0xdd under a 20-byte 0xaa key
        (
            bytes(String(repeating: "aa", count: 20)), bytes(String(repeating: "dd", count: 50)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        // 4: a 25-byte counting key
        (
            bytes("0102030405060708090a0b0c0d0e0f10111213141516171819"), bytes(String(repeating: "cd", count: 50)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // 6: a 131-byte key, hashed first
        (
            bytes(String(repeating: "aa", count: 131)),
            Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        // 7: a 131-byte key and a long message
        (
            bytes(String(repeating: "aa", count: 131)),
            Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. "
                    + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ])
    func rfc4231(key: [UInt8], message: [UInt8], tag: String) {
        #expect(Bytes.hex(HMACSHA256.authenticate(message, key: key)) == tag)
    }

    @Test func truncatedCase5() {
        // RFC 4231 case 5 gives the first 128 bits only.
        let tag = HMACSHA256.authenticate(
            Array("Test With Truncation".utf8), key: Self.bytes(String(repeating: "0c", count: 20)))
        #expect(Bytes.hex(tag.prefix(16)) == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test func emptyKeyAndMessage() {
        #expect(
            Bytes.hex(HMACSHA256.authenticate([UInt8](), key: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func hexRoundTripsAndRefusesOddText() {
        #expect(Bytes.unhex("00ff10Ab") == [0x00, 0xff, 0x10, 0xab])
        #expect(Bytes.unhex("abc") == nil)
        #expect(Bytes.unhex("zz") == nil)
        #expect(Bytes.hex([0x00, 0xff, 0x10, 0xab]) == "00ff10ab")
    }

    @Test func constantTimeComparison() {
        #expect(Bytes.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Bytes.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Bytes.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(Bytes.constantTimeEquals([], []))
    }
}

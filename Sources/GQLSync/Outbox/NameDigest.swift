/// A stable digest of a name for file names the name itself cannot make (too long, or with characters a file
/// name must not hold): `~` and 32 hex digits of two 64-bit FNV-1a hashes of the name's UTF-8 bytes, from two offset
/// bases (the standard one and its bit complement). The same name gives the same digest in every process and
/// version, so a file named with it is found again. It tells apart the names an app gives, not names made to collide.
enum NameDigest {
    static func tilde(_ name: String) -> String {
        var hashes: [UInt64] = [0xcbf2_9ce4_8422_2325, ~0xcbf2_9ce4_8422_2325]
        for byte in name.utf8 {
            for index in hashes.indices { hashes[index] = (hashes[index] ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return hashes.reduce("~") { digest, hash in
            let hex = String(hash, radix: 16)
            return digest + String(repeating: "0", count: 16 - hex.count) + hex
        }
    }
}

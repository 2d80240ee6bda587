/// RFC 9110's `tchar`: the bytes of an HTTP header name or method, for the client's header check and the dev
/// server's request reader.
package enum HTTPToken {
    /// Whether `byte` is a `tchar` (`A-Z a-z 0-9 ! # $ % & ' * + - . ^ _ ` | ~`): one bit of a 128-bit mask, so the
    /// dev server's request reader, which checks every byte of every header name, pays a shift per byte.
    @inlinable
    package static func contains(_ byte: UInt8) -> Bool {
        // Bit n of `low` (n < 64) and bit n - 64 of `high` (64 ≤ n < 128) are set for the tchar bytes.
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        if byte < 64 { return (low >> UInt64(byte)) & 1 == 1 }
        if byte < 128 { return (high >> UInt64(byte - 64)) & 1 == 1 }
        return false
    }
}

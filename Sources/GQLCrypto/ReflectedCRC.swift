/// The arithmetic behind combining two reflected CRCs (zlib's `crc32_combine`, for any width): polynomials over
/// GF(2) modulo the CRC's, held as reflected bit patterns (x⁰ in the top bit); the slicing tables; and the driver
/// that runs a CRC's slicing step over a buffer in three chains. CRC32 and CRC64NVME share it.
enum ReflectedCRC<Word: FixedWidthInteger & UnsignedInteger> {
    /// x⁰: the top bit.
    static var one: Word { 1 << (Word.bitWidth - 1) }

    /// `slices` tables of 256 for slicing-by-`slices`: table `k` (at `k × 256`) maps a byte to the CRC of that byte
    /// followed by `k` zero bytes.
    static func tables(_ polynomial: Word, slices: Int) -> [Word] {
        var tables = [Word](repeating: 0, count: slices * 256)
        for byte in 0..<256 {
            var crc = Word(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<slices {
                crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }

    /// The running (not inverted) CRC of `count` bytes at `pointer` from the running value `crc`, a byte at a time
    /// through the first of `tables` (what is left after the slicing steps).
    @inline(__always)
    static func bytewise(_ pointer: UnsafeRawPointer, _ count: Int, _ crc: Word, _ tables: UnsafeBufferPointer<Word>)
        -> Word
    {
        var crc = crc
        for index in 0..<count {
            crc =
                (crc >> 8)
                ^ tables[
                    Int(truncatingIfNeeded: (crc ^ Word(pointer.load(fromByteOffset: index, as: UInt8.self))) & 0xFF)]
        }
        return crc
    }

    /// The CRC (not inverted, as kept) of the bytes in `buffer` after `value`: `step` takes `width` bytes at a time
    /// (slicing), the rest goes a byte at a time. A buffer of three thirds of at least 4,096 bytes goes as three
    /// chains side by side (independent lookups the processor overlaps), their CRCs then combined by `combine`
    /// (`crcA`, `crcB`, the length of B).
    @inline(__always)
    static func update(
        _ buffer: UnsafeRawBufferPointer, _ value: Word, width: Int, _ tables: UnsafeBufferPointer<Word>,
        combine: (Word, Word, Int64) -> Word, step: (UnsafeRawPointer, Word) -> Word
    ) -> Word {
        guard let base = buffer.baseAddress else { return value }
        let count = buffer.count
        let third = count / 3 / width * width
        @inline(__always) func run(_ pointer: UnsafeRawPointer, _ count: Int, _ crc: Word) -> Word {
            var crc = crc
            var pointer = pointer
            var count = count
            while count >= width {
                crc = step(pointer, crc)
                pointer += width
                count -= width
            }
            return bytewise(pointer, count, crc, tables)
        }
        guard third >= 4096 else { return ~run(base, count, ~value) }
        var (first, second, last) = (Word.max, Word.max, Word.max)
        var pointer = base
        let end = base + third
        while pointer < end {
            first = step(pointer, first)
            second = step(pointer + third, second)
            last = step(pointer + 2 * third, last)
            pointer += width
        }
        let rest = count - 3 * third
        var crc = combine(value, ~first, Int64(third))
        crc = combine(crc, ~second, Int64(third))
        crc = combine(crc, ~last, Int64(third))
        return combine(crc, ~run(base + 3 * third, rest, ~0), Int64(rest))
    }

    /// `a × b` modulo `polynomial` (zlib's `multmodp`).
    static func multiply(_ a: Word, _ b: Word, _ polynomial: Word) -> Word {
        var b = b
        var bit = one
        var product: Word = 0
        while bit != 0, a & (bit &* 2 &- 1) != 0 {
            if a & bit != 0 { product ^= b }
            bit >>= 1
            b = b & 1 == 1 ? (b >> 1) ^ polynomial : b >> 1
        }
        return product
    }

    /// `x^(2^k)` modulo `polynomial` for k = 0 ..< the width (zlib's `x2n_table`).
    static func powers(_ polynomial: Word) -> [Word] {
        var powers = [Word](repeating: 0, count: Word.bitWidth)
        var power = one >> 1  // x¹
        for k in 0..<Word.bitWidth {
            powers[k] = power
            power = multiply(power, power, polynomial)
        }
        return powers
    }

    /// The CRC of `A` followed by `B` from the CRC of `A`, the CRC of `B` and `B`'s length in bytes:
    /// `crcA × x^(8 × lengthB) + crcB`, `powers` being ``powers(_:)`` of `polynomial`.
    static func combine(_ crcA: Word, _ crcB: Word, _ lengthB: Int64, _ polynomial: Word, _ powers: [Word]) -> Word {
        var shift = one  // x⁰
        var bits = lengthB
        var k = 3  // a byte is 2³ bits
        while bits > 0 {
            if bits & 1 == 1 { shift = multiply(powers[k % Word.bitWidth], shift, polynomial) }
            bits >>= 1
            k += 1
        }
        return multiply(shift, crcA, polynomial) ^ crcB
    }
}

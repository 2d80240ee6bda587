/// A small seeded pseudo-random generator (Steele, Lea and Flood's SplitMix64): the same seed gives the same
/// sequence on every run and platform, so injected faults and generated test cases can be replayed from a seed.
///
/// ```swift
/// var random = SplitMix64(seed: 1)
/// let roll = Int.random(in: 1...6, using: &random)
/// let share = random.nextUnitInterval()   // 0 ..< 1
/// ```
///
/// Not for anything secret: use `SystemRandomNumberGenerator` (or libcrypto) for keys, nonces and tokens.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) {
        self.state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in `0 ..< 1` from the top 53 bits of the next value.
    package mutating func nextUnitInterval() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

import Foundation
import GQLCore

/// The seed of a test's random inputs: `GQL_TEST_SEED` when set (to replay a failure), else a fresh one. Either way
/// it is printed with the test's name, so any run can be replayed.
///
/// ```swift
/// var random = SplitMix64(seed: TestSeed.make("crash kills"))   // prints "crash kills: seed 123 (GQL_TEST_SEED=123 replays)"
/// ```
public enum TestSeed {
    /// The seed for `name`, printed to standard error.
    public static func make(_ name: String) -> UInt64 {
        let given = ProcessInfo.processInfo.environment["GQL_TEST_SEED"].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: 0...UInt64.max)
        FileHandle.standardError.write(Data("\(name): seed \(seed) (GQL_TEST_SEED=\(seed) replays)\n".utf8))
        return seed
    }
}

extension TestSeed {
    /// `count` pseudo-random bytes from `seed` (SplitMix64, eight bytes a step, least significant first): the same
    /// seed gives the same bytes.
    public static func bytes(_ count: Int, seed: UInt64) -> Data {
        var rng = SplitMix64(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            var index = 0
            while index < buffer.count {
                var word = rng.next()
                for _ in 0..<8 where index < buffer.count {
                    buffer[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return data
    }
}

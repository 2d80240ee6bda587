import Foundation

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

/// The rows, lookup keys and observer conditions every implementation works on.
///
/// Generated once per process from fixed seeds so that all three implementations insert byte-identical rows,
/// look up the same keys in the same order and see the same number of observer notifications.
public struct BenchData: Sendable {
    /// One row of the benchmark table, in neutral form. Each implementation converts these into its own
    /// record type before the clock starts.
    public struct Row: Sendable, Equatable {
        public var id: Int
        public var name: String
        public var age: Int
        public var score: Double
        public var active: Bool
        public var note: String?

        public init(id: Int, name: String, age: Int, score: Double, active: Bool, note: String?) {
            self.id = id
            self.name = name
            self.age = age
            self.score = score
            self.active = active
            self.note = note
        }
    }

    /// Table name used by the GRDB and raw implementations (GQLStore names the table after its type, `BenchRow`).
    public static let tableName = "BenchRow"

    /// Number of primary-key lookups in the fetchOne workload.
    public static let lookupCount = 10_000

    /// Number of observers in the observed-insert workload.
    public static let observerCount = 10

    /// Number of single-row autocommit inserts in the autocommit workload.
    public static let autocommitCount = 1_000

    public let rows: [Row]
    /// Primary keys looked up by the fetchOne workload (uniform in `1...rows.count`, seed 0xF37C_0DE).
    public let lookupKeys: [Int]
    /// Observer `i` is notified of inserted rows whose `age > observerThresholds[i]`.
    public let observerThresholds: [Int]
    /// Number of notifications the observed-insert workload must deliver, over all observers.
    public let expectedNotifications: Int
    /// Sum of the looked-up rows' ages: a checksum the fetchOne workload must reproduce.
    public let lookupAgeSum: Int
    /// The rows the autocommit workload inserts one statement (one transaction) each, after `rows`: ids
    /// `rows.count + 1 ... rows.count + autocommitCount`.
    public let autocommitRows: [Row]

    public init(rowCount: Int) {
        var rng = SplitMix64(seed: 0x6A1_0BEE)
        var rows: [Row] = []
        rows.reserveCapacity(rowCount)
        for id in 1...max(rowCount, 1) {
            let age = Int(rng.next() % 100)
            let score = Double(rng.next() % 1_000_000) / 100
            let active = rng.next() & 1 == 1
            rows.append(
                Row(
                    id: id, name: "user-\(id)", age: age, score: score, active: active,
                    note: id % 4 == 0 ? nil : "note for row \(id)"))
        }
        self.rows = rows
        autocommitRows = (1...Self.autocommitCount).map { index in
            let id = rows.count + index
            return Row(
                id: id, name: "single-\(id)", age: Int(rng.next() % 100), score: Double(rng.next() % 1_000_000) / 100,
                active: rng.next() & 1 == 1, note: id % 4 == 0 ? nil : "note for row \(id)")
        }

        var keyRng = SplitMix64(seed: 0xF37C_0DE)
        let keys = (0..<Self.lookupCount).map { _ in Int(keyRng.next() % UInt64(rows.count)) + 1 }
        lookupKeys = keys
        lookupAgeSum = keys.reduce(0) { $0 + rows[$1 - 1].age }

        // ages are 0...99: thresholds 0, 10, ..., 90 give observers from ~99 % down to ~9 % of the rows.
        let thresholds = (0..<Self.observerCount).map { $0 * 10 }
        observerThresholds = thresholds
        expectedNotifications = thresholds.reduce(0) { total, threshold in
            total + rows.lazy.filter { $0.age > threshold }.count
        }
    }
}

/// Sebastiano Vigna's SplitMix64: small, fast, and the same sequence on every platform.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

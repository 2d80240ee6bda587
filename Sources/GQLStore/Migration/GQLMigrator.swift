import GQLCore

/// Numbered schema migrations, each in its own transaction, with the version kept in `PRAGMA user_version`.
///
/// Adding a property needs no step: its column is added on open. Steps are for everything else —
/// renames, data rewrites, indexes.
/// ```swift
/// var migrator = GQLMigrator()
/// migrator.step(1, "index users by age") { tx in
///     try tx.execute("CREATE INDEX user_age ON User(age)")
/// }
/// migrator.step(2, "approve adults") { tx in
///     try User.updateAll(tx, ["approved": true], "age >= 18")
/// }
/// try migrator.migrate(db)          // runs the steps the file has not seen yet
/// ```
public struct GQLMigrator: Sendable {
    /// One numbered step.
    public struct Step: Sendable {
        public let version: Int
        public let name: String
        let body: @Sendable (GQLTransaction) throws -> Void
    }

    /// The steps, in the order they were added.
    public private(set) var steps: [Step] = []

    public init() {}

    /// Adds the step that brings the file to `version`. Versions start at 1 and go up by one.
    public mutating func step(
        _ version: Int, _ name: String = "", _ body: @escaping @Sendable (GQLTransaction) throws -> Void
    ) {
        steps.append(Step(version: version, name: name, body: body))
    }

    /// The highest version the steps reach (0 without steps).
    public var latestVersion: Int { steps.map(\.version).max() ?? 0 }

    /// The version of the file (`PRAGMA user_version`).
    public static func version(of db: GQLDatabase) throws -> Int {
        try db.withReader { Int(try $0.scalar("PRAGMA user_version")?.intValue ?? 0) }
    }

    /// Runs, in order, each step whose version is above the file's, each in its own transaction that also
    /// sets the new version. A step that throws rolls back and leaves the file at the previous version.
    ///
    /// - Returns: the versions applied.
    /// - Throws: ``GQLError`` `.downgradeAttempt` when the file is newer than the steps;
    ///   `.migrationFailed` naming the step; `.invalidArgument` for steps not numbered 1, 2, 3…
    @discardableResult
    public func migrate(_ db: GQLDatabase) throws -> [Int] {
        let ordered = steps.sorted { $0.version < $1.version }
        for (index, step) in ordered.enumerated() where step.version != index + 1 {
            throw GQLError(
                .invalidArgument,
                "migration steps must be numbered 1, 2, 3… without gaps or repeats; found \(step.version) at position \(index + 1)",
                operation: "migrate")
        }
        let current = try db.writer.write(transaction: false) {
            Int(try $0.scalar("PRAGMA user_version")?.intValue ?? 0)
        }
        guard current <= latestVersion else {
            throw GQLError(
                .downgradeAttempt,
                "the database is at version \(current) but this code knows versions up to \(latestVersion)",
                operation: "migrate")
        }
        var applied: [Int] = []
        for step in ordered where step.version > current {
            do {
                try db.write { tx in
                    try step.body(tx)
                    try tx.connection.execute("PRAGMA user_version = \(step.version)")
                }
            } catch {
                let reason = (error as? GQLError)?.message ?? "\(error)"
                throw GQLError(
                    .migrationFailed,
                    "migration step \(step.version)\(step.name.isEmpty ? "" : " (\(step.name))") failed: \(reason); the database stays at version \(step.version - 1)",
                    sql: (error as? GQLError)?.sql, operation: "migrate")
            }
            applied.append(step.version)
        }
        return applied
    }
}

import GQLCore

/// Numbered schema migrations, each in its own transaction.
///
/// The app's migrator, `GQLMigrator()`, keeps its version in `PRAGMA user_version`. A module that owns tables
/// of its own (a sync engine's outbox, say) uses a migrator with a namespace, `GQLMigrator(namespace:)`: its
/// steps are numbered 1, 2, 3… independently of the app's, and each applied step is recorded as a row of the
/// `gql_migrations` table (namespace, version, name), so neither numbering disturbs the other.
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
///
/// var outbox = GQLMigrator(namespace: "gqlsync")
/// outbox.step(1, "outbox") { tx in try tx.execute("CREATE TABLE gqlsync_outbox(id INTEGER PRIMARY KEY, body TEXT)") }
/// try outbox.migrate(db)            // user_version is untouched
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

    /// The namespace whose steps this migrator runs, or `nil` for the app's migrator (`PRAGMA user_version`).
    public let namespace: String?

    /// The table that records the steps applied by migrators with a namespace.
    public static let tableName = "gql_migrations"

    /// The app's migrator: its version is the file's `PRAGMA user_version`.
    ///
    /// ```swift
    /// var migrator = GQLMigrator()
    /// ```
    public init() { namespace = nil }

    /// A module's migrator: its steps are numbered on their own and recorded in ``tableName`` under
    /// `namespace`, leaving `PRAGMA user_version` to the app.
    ///
    /// ```swift
    /// var migrator = GQLMigrator(namespace: "gqlsync")
    /// migrator.step(1, "outbox") { tx in try tx.execute("CREATE TABLE gqlsync_outbox(id INTEGER PRIMARY KEY)") }
    /// try migrator.migrate(db)
    /// ```
    /// An empty namespace is refused by ``migrate(_:)``.
    public init(namespace: String) { self.namespace = namespace }

    /// Adds the step that brings the file to `version`. Versions start at 1 and go up by one.
    public mutating func step(
        _ version: Int, _ name: String = "", _ body: @escaping @Sendable (GQLTransaction) throws -> Void
    ) {
        steps.append(Step(version: version, name: name, body: body))
    }

    /// The highest version the steps reach (0 without steps).
    public var latestVersion: Int { steps.map(\.version).max() ?? 0 }

    /// The version of the file (`PRAGMA user_version`), the app migrator's version.
    public static func version(of db: GQLDatabase) throws -> Int {
        try db.withReader { Int(try $0.scalar("PRAGMA user_version")?.intValue ?? 0) }
    }

    /// The highest step of this migrator applied to `db` (0 when none): `PRAGMA user_version` for the app's
    /// migrator, the namespace's rows of ``tableName`` otherwise.
    ///
    /// ```swift
    /// let version = try GQLMigrator(namespace: "gqlsync").appliedVersion(db)
    /// ```
    public func appliedVersion(_ db: GQLDatabase) throws -> Int {
        try checkNamespace()
        return try db.withReader { try appliedVersion($0) }
    }

    private func appliedVersion(_ connection: Connection) throws -> Int {
        guard let namespace else { return Int(try connection.scalar("PRAGMA user_version")?.intValue ?? 0) }
        let exists = try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [Self.tableName])
        guard exists != nil else { return 0 }
        return Int(
            try connection.scalar(
                "SELECT MAX(version) FROM \(Self.tableName.quotedIdentifier) WHERE namespace = ?", [namespace]
            )?.intValue ?? 0)
    }

    /// Records `step` as applied, inside its transaction.
    private func record(_ step: Step, _ connection: Connection) throws {
        guard let namespace else {
            try connection.execute("PRAGMA user_version = \(step.version)")
            return
        }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(Self.tableName.quotedIdentifier) (
                namespace TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
                PRIMARY KEY (namespace, version))
            """)
        try connection.execute(
            "INSERT INTO \(Self.tableName.quotedIdentifier) (namespace, version, name) VALUES (?, ?, ?)",
            [namespace, step.version, step.name])
    }

    private func checkNamespace() throws {
        if let namespace, namespace.isEmpty {
            throw GQLError(.invalidArgument, "a migrator's namespace must not be empty", operation: "migrate")
        }
    }

    private var label: String { namespace.map { "namespace '\($0)'" } ?? "the database" }

    /// Runs, in order, each step whose version is above the applied one, each in its own transaction that
    /// also records the new version. A step that throws rolls back and leaves the previous version.
    /// Each transaction checks the version again, so two `migrate` calls racing on one file apply each step
    /// once.
    ///
    /// - Returns: the versions applied.
    /// - Throws: ``GQLError`` `.downgradeAttempt` when the file is newer than the steps;
    ///   `.migrationFailed` naming the step; `.invalidArgument` for steps not numbered 1, 2, 3…
    @discardableResult
    public func migrate(_ db: GQLDatabase) throws -> [Int] {
        try checkNamespace()
        let ordered = steps.sorted { $0.version < $1.version }
        for (index, step) in ordered.enumerated() where step.version != index + 1 {
            throw GQLError(
                .invalidArgument,
                "migration steps must be numbered 1, 2, 3… without gaps or repeats; found \(step.version) at position \(index + 1)",
                operation: "migrate")
        }
        let current = try db.writer.write(transaction: false) { try appliedVersion($0) }
        guard current <= latestVersion else {
            throw GQLError(
                .downgradeAttempt,
                "\(label) is at version \(current) but this code knows versions up to \(latestVersion)",
                operation: "migrate")
        }
        var applied: [Int] = []
        for step in ordered where step.version > current {
            let ran: Bool
            do {
                ran = try db.write { tx in
                    // Another migrate may have applied the step since `current` was read.
                    guard try appliedVersion(tx.connection) < step.version else { return false }
                    try step.body(tx)
                    try record(step, tx.connection)
                    return true
                }
            } catch {
                let reason = (error as? GQLError)?.message ?? "\(error)"
                throw GQLError(
                    .migrationFailed,
                    "migration step \(step.version)\(step.name.isEmpty ? "" : " (\(step.name))") failed: \(reason); \(label) stays at version \(step.version - 1)",
                    sql: (error as? GQLError)?.sql, operation: "migrate")
            }
            if ran { applied.append(step.version) }
        }
        return applied
    }
}

import Foundation
import GQLCore
import GQLStore

extension GQLSync {
    /// The names of the engines that have an outbox in the database file at `path`, sorted, read without changing
    /// the file (it is opened read-only: no table is made, no migration runs, no journal is opened).
    ///
    /// Tools that only look at an outbox (`gql-cli sync status`, `failed`, `retry`, `drop`, `push`) check the
    /// name they were given against it first, so a mistyped name is an error instead of a new, empty outbox.
    ///
    /// ```swift
    /// let names = try await GQLSync.engineNames(inFile: "/tmp/app.sqlite")   // ["127.0.0.1-4000-graphql"]
    /// ```
    /// - Throws: ``GQLError`` when there is no file at `path` or it is not a database SQLite can read.
    package static func engineNames(inFile path: String) async throws -> [String] {
        try readingOnly(path, engineNames(in:))
    }

    /// What `gql-cli sync status` shows of an engine's outbox: its counts and pull cursors.
    package struct OutboxSummary: Sendable, Hashable {
        package var pendingCount: Int
        /// Set-aside items, and items in a state the engine does not know (it sets them aside when it opens).
        package var failedCount: Int
        package var cursors: [PullCursor]
    }

    /// The counts and pull cursors of `engine`'s outbox in the database file at `path`, read as
    /// ``engineNames(inFile:)`` reads: nothing in or beside the file changes (no migration, no identity row, no
    /// journal). An outbox of an earlier layout is read as it is; one of a later version is refused, as an engine
    /// refuses it. Delivered items that a delivery journal records and the outbox has not deleted yet (a running
    /// engine's last ones, or those of one that was killed) still count as pending: an engine deletes them.
    ///
    /// ```swift
    /// let summary = try await GQLSync.outboxSummary(inFile: "/tmp/app.sqlite", engine: "cli")
    /// ```
    /// - Throws: ``GQLError`` when there is no file at `path`, it is not a database SQLite can read, or its outbox
    ///   is of a later version (`.downgradeAttempt`).
    package static func outboxSummary(inFile path: String, engine: String) async throws -> OutboxSummary {
        try readingOnly(path) { database in
            let migrator = OutboxStore.migrator
            let version = try migrator.appliedVersion(database)
            guard version <= migrator.latestVersion else {
                throw GQLError(
                    .downgradeAttempt,
                    "the outbox (namespace '\(OutboxStore.namespace)') is at version \(version) but this code knows "
                        + "versions up to \(migrator.latestVersion)", operation: "status")
            }
            var summary = OutboxSummary(pendingCount: 0, failedCount: 0, cursors: [])
            let tables = try tableNames(in: database)
            if tables.contains(OutboxStore.table) {
                let counts = try OutboxStore.counts(in: database, engine: engine)
                summary.pendingCount = counts.pending
                summary.failedCount = counts.failed + counts.unknown
            }
            if tables.contains(OutboxStore.cursorTable) {
                let keyed = try database.fetchAll(
                    sql: "SELECT 1 FROM pragma_table_info(?) WHERE name = 'variables'", [OutboxStore.cursorTable])
                summary.cursors = try OutboxStore.cursors(
                    in: database, engine: engine, keyedByVariables: !keyed.isEmpty)
            }
            return summary
        }
    }

    /// Runs `body` on the database file at `path` opened read-only, without making anything beside it.
    static func readingOnly<T>(_ path: String, _ body: (GQLDatabase) throws -> T) throws -> T {
        var configuration = GQLDatabase.Configuration()
        configuration.readOnly = true
        guard FileManager.default.fileExists(atPath: path) else {
            throw GQLError(.io, "there is no database file at \(path)", operation: "open")
        }
        // A read-only connection to a database in WAL mode leaves an empty -wal and -shm beside it. With none
        // there, no connection has the file open and nothing is in a journal: it is read as an immutable file,
        // which makes neither. Otherwise they are there already, and the read goes through them.
        let beside = ["-wal", "-journal"].contains { FileManager.default.fileExists(atPath: path + $0) }
        let database = try GQLDatabase(
            path: beside ? path : "file:\(uriPath(path))?mode=ro&immutable=1", configuration: configuration)
        let result = Result { try body(database) }
        try? database.close()
        return try result.get()
    }

    private static func tableNames(in database: GQLDatabase) throws -> Set<String> {
        Set(
            try database.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                .compactMap { $0["name"]?.stringValue })
    }

    /// `path` as the path of a `file:` URI: absolute, with `%`, `?` and `#` escaped.
    private static func uriPath(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "%?#")
        return absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
    }

    static func engineNames(in database: GQLDatabase) throws -> [String] {
        let tables = try tableNames(in: database)
        var names = Set<String>()
        // An engine writes its identity row at its first open, so an engine with no item or cursor left is found.
        if tables.contains(OutboxStore.sequenceTable) {
            let prefix = OutboxStore.identityPrefix
            for row in try database.fetchAll(
                sql: "SELECT name FROM \(OutboxStore.sequenceTable) WHERE substr(name, 1, ?) = ?",
                [prefix.utf8.count, prefix])
            {
                if let name = row["name"]?.stringValue { names.insert(String(name.dropFirst(prefix.count))) }
            }
        }
        // Layouts before the identity row: the items' and the cursors' engines (a tombstone row has none).
        for table in [OutboxStore.table, OutboxStore.cursorTable] where tables.contains(table) {
            for row in try database.fetchAll(sql: "SELECT DISTINCT engine FROM \(table) WHERE engine <> ''") {
                if let name = row["engine"]?.stringValue { names.insert(name) }
            }
        }
        return names.sorted()
    }
}

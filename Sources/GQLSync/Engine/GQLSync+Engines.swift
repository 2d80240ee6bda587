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
        let names = Result { try engineNames(in: database) }
        try? await database.close()
        return try names.get()
    }

    /// `path` as the path of a `file:` URI: absolute, with `%`, `?` and `#` escaped.
    private static func uriPath(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "%?#")
        return absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
    }

    private static func engineNames(in database: GQLDatabase) throws -> [String] {
        let tables = Set(
            try database.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                .compactMap { $0["name"]?.stringValue })
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

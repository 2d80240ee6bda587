import ArgumentParser
import Foundation
import GQLStore
import GQLSync

extension SyncCommand {
    /// `gql-cli sync pull DB --url URL --table Note`: pulls the server's changes into a table of the file.
    ///
    /// Without --query the delta query is made from the table: `sync<Table>s(limit:nextToken:lastSync:)`
    /// (AppSync's names; --field names another) selecting the table's columns. A file or table that does not exist
    /// yet is created, the table from the server's type of the items (``PullTable``).
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pull the server's changes into a table through an AppSync-style delta query.",
            discussion: """
                A missing file is created, and so is a missing table: from the server's schema (introspection), \
                one column per scalar or enum field of the sync field's items, keyed by the argument of \
                get<Table> (or id, or --key). An existing table needs a single-column primary key. The cursor \
                (startedAt) is kept in the outbox's tables, so the next pull asks only for what changed.
                """)

        @OptionGroup var options: SyncOptions

        @Option(help: "The local table to write into.")
        var table: String

        @Option(help: "The delta query's text (a named query taking $limit, $nextToken and $lastSync).")
        var query: String?

        @Option(help: "The sync field of the generated query (default sync<Table>s, e.g. syncNotes).")
        var field: String?

        @Option(help: "Items per page.")
        var limit: Int?

        @Option(
            help: ArgumentHelp(
                """
                The most pages one pull fetches (default 10,000). A pull that still has a nextToken after them \
                fails; the pages fetched stay written and the cursor stays, so the next pull asks for them again.
                """, valueName: "pages"))
        var pageLimit: Int?

        @Flag(help: "Ask for everything, not only the changes since the last pull.")
        var base = false

        @Option(help: "The key column of a table the pull creates (default: get<Table>'s argument, else id).")
        var key: String?

        func validate() throws {
            if let pageLimit, pageLimit < 1 {
                throw ValidationError(
                    "--page-limit must be at least 1 (the most pages one pull fetches), not \(pageLimit)")
            }
        }

        func run() async throws {
            try await createTableIfMissing()
            let queries = GQLQuery()
            let text = try query ?? generatedQuery()
            try CLIError.guarding("cannot use the pull query") { try queries.load(text, sourceName: "sync pull") }
            guard let name = queries.operationNames.first else { throw CLIError("the pull query has no name") }
            let (sync, server) = try await options.engine(
                delivers: false, existing: false, queries: queries, pageSize: limit, pageLimit: pageLimit)
            let bar = ProgressBar(label: "pull \(table)")
            let plain = isatty(STDERR_FILENO) != 1
            let result: Result<GQLSync.PullReport, any Error>
            do {
                result = .success(
                    try await sync.pull(table, query: name, base: base) { report in
                        if plain {
                            print(
                                "page \(report.pages): \(report.written) written, \(report.deleted) deleted, "
                                    + "\(report.kept) kept")
                        } else {
                            bar.update(done: Int64(report.written + report.deleted), total: -1, bytes: false)
                        }
                    })
            } catch {
                result = .failure(error)
            }
            bar.finish()
            await SyncOptions.close(sync, server)
            let report = try CLIError.guarding("the pull failed") { try result.get() }
            print(
                "pulled (\(report.kind.rawValue)): \(report.pages) page(s), \(report.written) written, "
                    + "\(report.deleted) deleted, \(report.kept) kept")
        }

        /// The sync field: --field, or AppSync's `sync<Table>s`.
        var syncField: String { field ?? "sync" + Self.plural(table) }

        /// Creates the file and the table when they are missing (the table from the server's schema).
        func createTableIfMissing() async throws {
            let db = try CLIError.guarding("cannot open \(options.path)") { try GQLDatabase(path: options.path) }
            let exists = try db.fetchAll(sql: "SELECT name FROM pragma_table_info(?)", [table]).isEmpty == false
            guard !exists, OperationOptions.isGraphQLName(table) else {
                try await db.close()
                if exists { return }
                throw CLIError("there is no table \(table), and it is not a GraphQL type name to make one from")
            }
            let made = PullTable(table: table, field: syncField)
            let server = try options.client.makeServer(subscribing: false)
            let shape: (columns: [PullTable.Column], key: String)
            do {
                shape = try await made.describe(on: server, key: key)
                try await server.shutdown()
                try await db.execute(made.createSQL(shape.columns, key: shape.key))
                try await db.close()
            } catch {
                try? await server.shutdown()
                try? await db.close()
                throw CLIError("cannot create the table \(table)", error)
            }
            let (columns, key) = shape
            print("created table \(table) (\(columns.map(\.name).joined(separator: ", ")); key \(key))")
        }

        /// `query SyncTable(...) { sync<Table>s(...) { items { <columns> } nextToken startedAt } }`.
        func generatedQuery() throws -> String {
            let db = try CLIError.guarding("cannot open \(options.path)") { try GQLDatabase(path: options.path) }
            defer { try? db.close() }
            let columns = try db.fetchAll(sql: "SELECT name FROM pragma_table_info(?)", [table]).compactMap {
                $0["name"]?.stringValue
            }
            guard !columns.isEmpty else { throw CLIError("there is no table named \(table) in \(options.path)") }
            guard columns.allSatisfy(OperationOptions.isGraphQLName), OperationOptions.isGraphQLName(table) else {
                throw CLIError("\(table)'s columns are not all GraphQL names; give the query with --query")
            }
            let field = syncField
            return """
                query Sync\(table)($limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
                  \(field)(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
                    items { \(columns.joined(separator: " ")) } nextToken startedAt
                  }
                }
                """
        }

        /// AppSync's plural of a type name: `Note` → `Notes`, `Entry` → `Entries`, `Box` → `Boxes`, `Objects` stays.
        static func plural(_ name: String) -> String {
            let lower = name.lowercased()
            if lower.hasSuffix("s") { return name }
            if lower.hasSuffix("x") || lower.hasSuffix("ch") || lower.hasSuffix("sh") { return name + "es" }
            if lower.hasSuffix("y"), let before = lower.dropLast().last, !"aeiou".contains(before) {
                return name.dropLast() + "ies"
            }
            return name + "s"
        }
    }
}

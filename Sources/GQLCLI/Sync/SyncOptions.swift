import ArgumentParser
import Foundation
import GQLNet
import GQLStore
import GQLSync

/// What every `sync` subcommand shares: the database file holding the outbox, the server (the connection flags
/// of `gql-cli query`), and the engine's name.
struct SyncOptions: ParsableArguments {
    @Argument(help: "The database file holding the outbox (the app's database, or the engine's own file).")
    var path: String

    @OptionGroup var client: ClientOptions

    @Option(
        help: ArgumentHelp(
            "The engine whose items to use (default: derived from the server's URL, as GQLSync does).",
            valueName: "name"))
    var name: String?

    /// Opens the file (it must exist) and an engine on it; `delivers` starts its delivery loop.
    func engine(delivers: Bool, queries: GQLQuery = GQLQuery(), pageSize: Int? = nil) throws -> (GQLSync, GQLServer) {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("no database file at \(path)") }
        let server = try client.makeServer(subscribing: false)
        var configuration = GQLSync.Configuration()
        configuration.name = name
        configuration.queries = queries
        configuration.delivers = delivers
        configuration.pullPageSize = pageSize
        let db = try CLIError.guarding("cannot open \(path)") { try GQLDatabase(path: path) }
        let sync = try CLIError.guarding("cannot open the outbox in \(path)") {
            try GQLSync(server, database: db, configuration: configuration)
        }
        return (sync, server)
    }

    /// Shuts the engine and its server down.
    static func close(_ sync: GQLSync, _ server: GQLServer) async {
        try? await sync.shutdown()
        try? await server.shutdown()
        try? await sync.database.close()
    }
}

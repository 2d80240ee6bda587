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
    ///
    /// With `existing`, the engine must already have an outbox in the file (looked up read-only first): a command
    /// that reads or edits an outbox fails on a mistyped name, naming the engines there are, instead of making
    /// the engine's tables in the file.
    func engine(
        delivers: Bool, existing: Bool = true, queries: GQLQuery = GQLQuery(), pageSize: Int? = nil,
        pageLimit: Int? = nil
    ) async throws -> (GQLSync, GQLServer) {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("no database file at \(path)") }
        let server = try client.makeServer(subscribing: false)
        if existing {
            do {
                try await checkOutbox(name ?? GQLSync.defaultName(server))
            } catch {
                try? await server.shutdown()
                throw error
            }
        }
        var configuration = GQLSync.Configuration()
        configuration.name = name
        configuration.queries = queries
        configuration.delivers = delivers
        configuration.pullPageSize = pageSize
        if let pageLimit { configuration.pullPageLimit = pageLimit }
        let db = try CLIError.guarding("cannot open \(path)") { try GQLDatabase(path: path) }
        let sync = try CLIError.guarding("cannot open the outbox in \(path)") {
            try GQLSync(server, database: db, configuration: configuration)
        }
        return (sync, server)
    }

    /// The engine's name (--name, or the one derived from the server's URL), once the file is found to hold its
    /// outbox; looked up read-only, so nothing in or beside the file changes.
    func existingEngineName() async throws -> String {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("no database file at \(path)") }
        let engine: String
        if let name {
            engine = name
        } else {
            let server = try client.makeServer(subscribing: false)
            engine = GQLSync.defaultName(server)
            try? await server.shutdown()
        }
        try await checkOutbox(engine)
        return engine
    }

    /// Fails unless an engine named `engine` has an outbox in the file.
    private func checkOutbox(_ engine: String) async throws {
        // Said as the engine says it, not as a name that has no outbox.
        guard !engine.isEmpty else { throw CLIError("the sync engine's name is empty") }
        let names: [String]
        do {
            names = try await GQLSync.engineNames(inFile: path)
        } catch {
            throw CLIError("cannot read \(path)", error)
        }
        guard !names.contains(engine) else { return }
        guard !names.isEmpty else { throw CLIError("no sync engine has an outbox in \(path)") }
        throw CLIError(
            "no sync engine named '\(engine)' has an outbox in \(path); engines there: "
                + names.map { "'\($0)'" }.joined(separator: ", ") + " (pick one with --name)")
    }

    /// Shuts the engine and its server down.
    static func close(_ sync: GQLSync, _ server: GQLServer) async {
        try? await sync.shutdown()
        try? await server.shutdown()
        try? await sync.database.close()
    }
}

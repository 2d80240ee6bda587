import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync enqueue-loop PATH --url URL --count N`: queues `createNote(input: {n})` for n = 1…N with a
    /// GQLSync engine whose outbox is in PATH, then drains it. Hidden from help.
    ///
    /// A crash-safety test runs it as a child process and kills it at random moments. Each call commits the
    /// item together with a counter row (`in: tx`), so a restarted run goes on after the last committed n;
    /// "queued n" is printed, unbuffered, once that transaction committed, and "drained" once the outbox is empty.
    struct EnqueueLoop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enqueue-loop",
            abstract: "Queue createNote(n) for n up to --count, printing each committed n, then drain.",
            shouldDisplay: false
        )

        @Argument(help: "The database file holding the outbox and the counter; created if missing.")
        var path: String

        @Option(help: "The server's GraphQL HTTP endpoint.")
        var url: String

        @Option(help: "The last n to queue.")
        var count = 1000

        @Option(help: "Milliseconds to pause after each call, so deliveries run beside the calls.")
        var intervalMs = 0

        static let mutation = "mutation CreateNote($input: CreateNoteInput!) { createNote(input: $input) { id n } }"

        func run() async throws {
            let queries = GQLQuery()
            try queries.load(Self.mutation, sourceName: "enqueue-loop")
            var configuration = GQLSync.Configuration()
            configuration.name = "crash"
            configuration.queries = queries
            configuration.inputArgument = "input"
            configuration.backoff = GQLBackoff(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))
            let server = GQLServer(HTTP: url)
            let db = try CLIError.guarding("cannot open \(path)") { try GQLDatabase(path: path) }
            try await db.execute("CREATE TABLE IF NOT EXISTS loop_counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
            let sync = try GQLSync(server, database: db, configuration: configuration)
            let start = Int(
                try db.fetchRows(sql: "SELECT n FROM loop_counter WHERE id = 1").rows.first?.first?.intValue ?? 0)
            for n in (start + 1)..<(count + 1) {
                try await db.write { tx in
                    try tx.execute("INSERT OR REPLACE INTO loop_counter (id, n) VALUES (1, ?)", [n])
                    try sync.steady("CreateNote", ["n": n], in: tx)
                }
                try FileHandle.standardOutput.write(contentsOf: Data("queued \(n)\n".utf8))
                if intervalMs > 0 { try await Task.sleep(for: .milliseconds(intervalMs)) }
            }
            try await sync.drain()
            try FileHandle.standardOutput.write(contentsOf: Data("drained\n".utf8))
            try await sync.shutdown()
            try await server.shutdown()
        }
    }
}

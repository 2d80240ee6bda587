import ArgumentParser
import Foundation
import GQLStore

/// `gql-cli demo [--keep PATH]`: a scripted tour of the store on a throwaway database.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Take a short scripted tour of every layer on embedded defaults.",
        discussion: """
            Defines a User object and walks through the object verbs, the dictionary API, transactions, \
            observers, migrations and automatic columns, printing each step; encryption at rest: the same rows \
            in a plain file and in one opened with a passphrase, whose bytes hold none of them, a wrong \
            passphrase refused, a rekey and a reopen; then starts the embedded GraphQL server (what gql-cli \
            serve runs) and drives it with the GQLNet client, GQLServer: subscriptions over AppSync's real-time \
            WebSocket, objects created and updated over HTTP; typed operations: Swift generated from a .graphql \
            document against the server's introspected schema (what gql-cli codegen --url and the \
            GQLCodegenPlugin build plugin do), its outline and its query run; GQLSync: \
            changes queued while the server is down, delivered when it starts, and a delta pull; GQLCache: a \
            screen's query kept as records, a watcher that hears a mutation, and the same query answered with the \
            server stopped; then a server that checks bearer tokens, whose expired token GQLServer's authorization \
            provider replaces without the app noticing; then one gql-cli serve --all started in-process (the \
            GraphQL API with the S3, Auth0 and OneSignal emulators, every port free, its state in the demo's \
            temporary folder), its endpoints printed once as serve prints them, and against it: GQLStorage, a \
            file uploaded in parts and downloaded with progress bars, and a presigned URL fetched without \
            credentials; GQLAuth and GQLPush, a user signed up and in, a note only its owner sees, and a push \
            that the emulator's inbox shows; then it is shut down (also when a step fails). The databases are \
            temporary files, removed at the end unless --keep names where to keep the store's.
            """
    )

    @Option(help: "Keep the demo database at this path (which must not exist yet).")
    var keep: String?

    func validate() throws {
        if let keep, FileManager.default.fileExists(atPath: keep) {
            throw ValidationError("\(keep) already exists; --keep needs a new path")
        }
    }

    func run() async throws {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent(
            "gql-cli-demo-\(UUID().uuidString)", isDirectory: true)
        let path = keep ?? directory.appendingPathComponent("demo.sqlite").path
        defer { try? fileManager.removeItem(at: directory) }
        do {
            try await DemoTour(path: path).run()
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            try DemoEncryptionTour(directory: directory).run()
            try await DemoServerTour().run()
            try await DemoCodegenTour().run()
            try await DemoSyncTour(path: directory.appendingPathComponent("sync.sqlite").path).run()
            try await DemoCacheTour(path: directory.appendingPathComponent("cache.sqlite").path).run()
            try await DemoAuthTour().run()
            try await DemoServices.run(in: directory) { services in
                try await DemoStorageTour(directory: directory, services: services).run()
                try await DemoAccountsTour(services: services).run()
            }
        } catch {
            throw CLIError("the demo stopped", error)
        }
        if let keep {
            print("Kept the database at \(keep).")
        } else {
            print("Removed the temporary database.")
        }
    }
}

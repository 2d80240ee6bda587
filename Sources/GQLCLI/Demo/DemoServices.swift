import Foundation
import GQLEmulators
import Logging

/// One `gql-cli serve --all` (the GraphQL API, the S3, Auth0 and OneSignal emulators), started once in-process for
/// the steps that talk to services, with the composition `serve` itself runs (``ServeCommand/suite(schema:logger:)``),
/// its state in the demo's temporary folder.
///
/// ``run(in:_:)`` prints the endpoints once, as `serve` prints them, and shuts every part down when the steps are
/// done or one of them fails (the demo then stops with a message that says so, and why).
struct DemoServices: DemoStep {
    /// The API's models: a note only its owner sees (step 14).
    static let schema = "type Note @model @auth(rules: [{ allow: owner }]) { id: ID! text: String }"
    /// The bucket the storage emulator creates at start (step 13).
    static let bucket = "demo-photos"

    /// The running composition.
    let suite: GQLEmulatorSuite
    /// Its endpoints and credentials, what `serve --endpoints-file` would write.
    let endpoints: GQLEmulatorSuite.Endpoints

    /// Starts `serve --all` with every port free and its state under `directory`, prints its endpoints, runs
    /// `steps` against it, and shuts it down (also when a step throws).
    static func run(in directory: URL, _ steps: (DemoServices) async throws -> Void) async throws {
        let schemaFile = directory.appendingPathComponent("notes.graphql")
        try Data(schema.utf8).write(to: schemaFile)
        let data = directory.appendingPathComponent("local")
        let arguments = [
            "--all", "--port", "0", "--storage-port", "0", "--auth-port", "0", "--push-port", "0",
            "--storage-bucket", bucket, "--schema", schemaFile.path, "--data", data.path,
        ]
        let command: ServeCommand
        do {
            command = try ServeCommand.parse(arguments)
        } catch {
            throw CLIError("the demo's serve arguments were refused: \(ServeCommand.message(for: error))")
        }
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let suite = try command.suite(schema: try command.schemaText(), logger: quiet)
        let task = Task { try await suite.run() }
        do {
            let announced = try await ServeCommand.announcement(suite, endpointsFile: nil)
            let services = DemoServices(suite: suite, endpoints: announced.endpoints)
            services.heading("Every service at once for steps 13 and 14 (gql-cli serve --all, in-process)")
            services.say("gql-cli serve --all, every port 0, --storage-bucket \(bucket), --schema notes.graphql:")
            services.say("  \(schema)")
            for line in announced.lines.split(separator: "\n") { services.say(String(line)) }
            try await steps(services)
        } catch {
            await suite.shutdown()
            _ = try? await task.value
            // Said before the cause, so that the message reads whole (`gql-cli demo` prints it and exits 1).
            let stopped = "the demo stopped; its gql-cli serve --all was shut down"
            if var failure = error as? CLIError {
                failure.message = "\(stopped): \(failure.message)"
                throw failure
            }
            throw CLIError(stopped, error)
        }
        await suite.shutdown()
        try await task.value
    }
}

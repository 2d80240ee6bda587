import GQLDevServer
import Logging

/// What every step of `gql-cli demo` shares: its output's shape (a heading, then indented lines) and a quiet dev
/// server in-process.
protocol DemoStep {}

extension DemoStep {
    /// A blank line, then the step's title.
    func heading(_ text: String) {
        print("")
        print(text)
    }

    /// One indented line of the step.
    func say(_ text: String) { Self.say(text) }

    /// One indented line of the step, from a closure that holds no step.
    static func say(_ text: String) {
        print("   " + text)
    }

    /// A dev server in-process on `port` (0: any free one), logging nothing; its port, its GraphQL URL, and how to
    /// stop it.
    func startServer(port: Int = 0) async throws -> (port: Int, url: String, stop: () async -> Void) {
        var configuration = GQLDevServer.Configuration()
        configuration.port = port
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, logger: quiet)
        let task = Task { try await server.run() }
        let endpoints = try await server.endpoints()
        let bound = Int(endpoints.http.split(separator: ":").last?.split(separator: "/").first ?? "") ?? port
        return (
            bound, endpoints.http,
            {
                await server.shutdown()
                _ = try? await task.value
            }
        )
    }
}

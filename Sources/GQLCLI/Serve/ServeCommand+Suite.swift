import Foundation
import GQLCore
import GQLDevServer
import GQLEmulators

extension ServeCommand {
    /// Runs `suite` until SIGINT or SIGTERM; once every part listens, prints each endpoint and credential and
    /// writes them to `endpointsFile` (atomically: scripts wait for the file to appear).
    static func serve(_ suite: GQLEmulatorSuite, endpointsFile: String?) async throws {
        try await serving(
            what: "the emulators", run: { try await suite.runUntilTerminated() },
            announce: { try await announcement(suite, endpointsFile: endpointsFile).lines },
            shutdown: { await suite.shutdown() })
    }

    /// Waits until every part of `suite` listens; writes the endpoints to `endpointsFile` when given; returns them
    /// with the lines `serve` prints (``lines(_:webSocket:data:)``). `gql-cli demo` prints the same lines.
    static func announcement(_ suite: GQLEmulatorSuite, endpointsFile: String?) async throws
        -> (endpoints: GQLEmulatorSuite.Endpoints, lines: String)
    {
        let endpoints = try await suite.endpoints()
        let webSocket = try await suite.graphQL?.endpoints().webSocket
        if let endpointsFile {
            try CLIError.guarding("cannot write \(endpointsFile)") {
                try writeAtomically(endpoints.json(), to: endpointsFile)
            }
        }
        return (endpoints, lines(endpoints, webSocket: webSocket, data: suite.dataFolder.url.path))
    }

    /// What `serve` prints once everything listens: one line per endpoint, credentials beside their service.
    static func lines(_ endpoints: GQLEmulatorSuite.Endpoints, webSocket: String?, data: String) -> String {
        var text = ""
        if let graphql = endpoints.graphql { text += "HTTP      \(graphql)\n" }
        if let webSocket { text += "WebSocket \(webSocket)\n" }
        if let storage = endpoints.storage {
            text +=
                "Storage   \(storage)  access key \(endpoints.storageAccessKey ?? "")  "
                + "secret key \(endpoints.storageSecretKey ?? "")\n"
        }
        if let auth = endpoints.auth {
            text +=
                "Auth      \(auth)  client id \(endpoints.authClientId ?? "")  "
                + "client secret \(endpoints.authClientSecret ?? "")\n"
        }
        if let push = endpoints.push {
            text += "Push      \(push)  app id \(endpoints.pushAppId ?? "")  REST key \(endpoints.pushRestKey ?? "")\n"
        }
        text += "Data      \(data)\n"
        return text
    }

    /// Writes `data` to `path` through a temporary file beside it and a rename, so a reader sees all or nothing.
    static func writeAtomically(_ data: Data, to path: String) throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).\(UInt64.random(in: 0...UInt64.max))")
        do {
            try data.write(to: temporary)
            guard rename(temporary.path, target.path) == 0 else {
                throw GQLError(.io, String(cString: strerror(errno)))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}

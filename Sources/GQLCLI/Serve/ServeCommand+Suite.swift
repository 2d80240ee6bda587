import Foundation
import GQLCore
import GQLDevServer
import GQLEmulators

extension ServeCommand {
    /// Runs `suite` until SIGINT or SIGTERM; once every part listens, prints each endpoint and credential and
    /// writes them to `endpointsFile` (atomically: scripts wait for the file to appear).
    static func serve(_ suite: GQLEmulatorSuite, endpointsFile: String?) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await suite.runUntilTerminated()
                } catch {
                    throw CLIError("the emulators stopped", error)
                }
                return true
            }
            group.addTask {
                let endpoints: GQLEmulatorSuite.Endpoints
                let webSocket: String?
                do {
                    endpoints = try await suite.endpoints()
                    webSocket = try await suite.graphQL?.endpoints().webSocket
                } catch {
                    throw CLIError("the emulators did not start", error)
                }
                if let endpointsFile {
                    try CLIError.guarding("cannot write \(endpointsFile)") {
                        try writeAtomically(endpoints.json(), to: endpointsFile)
                    }
                }
                // Unbuffered, so a parent process reading a pipe sees the lines at once.
                let text = lines(endpoints, webSocket: webSocket, data: suite.dataFolder.url.path)
                FileHandle.standardOutput.write(Data(text.utf8))
                return false
            }
            do {
                // true: run() returned, after a signal or a shutdown from inside.
                while let finished = try await group.next() {
                    if finished {
                        group.cancelAll()
                        break
                    }
                }
            } catch {
                await suite.shutdown()
                throw error
            }
        }
    }

    /// What `serve` prints once everything listens: one line per endpoint, credentials beside their service.
    static func lines(_ endpoints: GQLEmulatorSuite.Endpoints, webSocket: String?, data: String) -> String {
        var text = ""
        if let graphql = endpoints.graphql { text += "HTTP      \(graphql)\n" }
        if let webSocket { text += "WebSocket \(webSocket)\n" }
        if let storage = endpoints.storage {
            text += "Storage   \(storage)  access key \(endpoints.storageAccessKey ?? "")  "
                + "secret key \(endpoints.storageSecretKey ?? "")\n"
        }
        if let auth = endpoints.auth {
            text += "Auth      \(auth)  client id \(endpoints.authClientId ?? "")  "
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

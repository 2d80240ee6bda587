import Foundation
import GQLTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `gql-cli serve`: the schema it prints, the endpoints it announces, API-key auth, graceful stops, and the
/// Python `gql` client library (HTTP, graphql-transport-ws, graphql-ws, AppSync real-time) running a scripted
/// scenario against it (Tests/Interop/gql_scenario.py, in the venv Tests/Interop/setup-venv.sh makes).
@Suite(.timeLimit(.minutes(3)))
struct ServeInteropTests {
    /// The package root: this file is <root>/Tests/GQLCLITests/ServeInteropTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The lines gql_scenario.py prints for its steps, in order.
    static let steps = [
        "ok http createObjects",
        "ok http updateObjects",
        "ok http listObjects filter",
        "ok http listObjects pages",
        "ok http getObjects",
        "ok introspection build_client_schema",
        "ok graphql-transport-ws onCreateObjects",
        "ok graphql-transport-ws onUpdateObjects",
        "ok graphql-ws onCreateObjects",
        "ok graphql-ws onUpdateObjects",
        "ok appsync onCreateObjects",
        "ok appsync onUpdateObjects",
    ]

    @Test func printSchemaShowsTheGeneratedOperations() async throws {
        let sdl = try await CLIProcess.succeed(["serve", "--print-schema"])
        for name in [
            "getObjects", "listObjects", "syncObjects", "createObjects", "updateObjects", "deleteObjects",
            "onCreateObjects", "onUpdateObjects", "onDeleteObjects", "ModelObjectsFilterInput", "CreateObjectsInput",
        ] {
            #expect(sdl.contains(name), "--print-schema lacks \(name)")
        }
    }

    @Test func printSchemaOfASchemaFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.graphql")
        try "type Note @model {\n  noteId: ID!\n  title: String\n  stars: Int\n}\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let sdl = try await CLIProcess.succeed(["serve", "--schema", path, "--print-schema"])
        for name in ["getNote", "listNotes", "createNote", "onUpdateNote", "stars"] {
            #expect(sdl.contains(name), "--print-schema lacks \(name)")
        }
        #expect(!sdl.contains("listObjects"), "the default model is served besides the file's")
    }

    @Test func badOptionsAreRefused() async throws {
        let rate = try await CLIProcess.fail(["serve", "--fail-rate", "2"], status: 64)
        #expect(rate.contains("--fail-rate"))
        let port = try await CLIProcess.fail(["serve", "--port", "70000"], status: 64)
        #expect(port.contains("--port"))
        let schema = try await CLIProcess.fail(["serve", "--schema", "/nonexistent/schema.graphql"], status: 64)
        #expect(schema.contains("/nonexistent/schema.graphql"))
        let emptyKey = try await CLIProcess.fail(["serve", "--api-key", ""], status: 64)
        #expect(emptyKey.contains("--api-key"))
        let depth = try await CLIProcess.fail(["serve", "--max-depth", "0"], status: 64)
        #expect(depth.contains("--max-depth"))
    }

    @Test func pythonGQLClientLoadsTheSchemaWithInputValueDeprecation() async throws {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            Issue.record("\(python.path) is missing: run Tests/Interop/setup-venv.sh to install the Python test peers.")
            return
        }
        let directory = try TemporaryDirectory()
        let server = try await ServeProcess.start(["--port", "0"])
        // gql's fetch_schema_from_transport asks graphql-core's introspection query with input_value_deprecation:
        // __InputValue.isDeprecated must be a Boolean for every argument and input field.
        let script = """
            import asyncio, sys
            from gql import Client, gql
            from gql.transport.aiohttp import AIOHTTPTransport
            from graphql import get_introspection_query

            async def main():
                async with Client(transport=AIOHTTPTransport(url=sys.argv[1]), fetch_schema_from_transport=True) as s:
                    result = await s.execute(gql(get_introspection_query(input_value_deprecation=True)))
                    types = result["__schema"]["types"]
                    args = [a for t in types for f in (t["fields"] or []) for a in f["args"]]
                    inputs = [f for t in types for f in (t["inputFields"] or [])]
                    assert args and inputs and all(v["isDeprecated"] is False for v in args + inputs)
                    print("schema", len(s.client.schema.type_map), "args", len(args), "inputs", len(inputs))

            asyncio.run(main())
            """
        let output = try await Self.runPython(
            python, ["-c", script, server.http], in: directory, timeout: .seconds(60))
        #expect(output.status == 0, "the Python gql client failed:\n\(output.stdout)\n\(output.stderr)")
        #expect(output.stdout.hasPrefix("schema "), "\(output.stdout)")
        #expect(try await server.stop(with: SIGINT) == 0)
    }

    @Test func announcesEndpointsChecksTheKeyAndStopsOnSIGTERM() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--api-key", "test-key"])
        #expect(server.http.hasPrefix("http://127.0.0.1:") && server.http.hasSuffix("/graphql"))
        #expect(server.webSocket == server.http.replacingOccurrences(of: "http://", with: "ws://"))

        let query = #"{"query":"{ listObjects { items { objectId } } }"}"#
        let (denied, _) = try await Self.post(query, to: server.http, apiKey: nil)
        #expect(denied == 401, "a request without x-api-key got \(denied)")
        let (wrong, _) = try await Self.post(query, to: server.http, apiKey: "other-key")
        #expect(wrong == 401, "a request with a wrong x-api-key got \(wrong)")
        let (allowed, body) = try await Self.post(query, to: server.http, apiKey: "test-key")
        #expect(allowed == 200 && body.contains("\"listObjects\""), "got \(allowed): \(body)")

        let status = try await server.stop(with: SIGTERM)
        #expect(status == 0, "exit status \(status) after SIGTERM; stderr: \(server.stderr)")
    }

    @Test func verboseLogsRequests() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--verbose"])
        let (status, _) = try await Self.post(
            #"{"query":"query Everything { listObjects { items { objectId } } }","operationName":"Everything"}"#,
            to: server.http, apiKey: nil)
        #expect(status == 200)
        #expect(try await server.stop(with: SIGINT) == 0)
        #expect(server.stderr.contains("POST Everything → 200"), "stderr: \(server.stderr)")
    }

    @Test func faultFlagsReachTheServer() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--fail-rate", "1", "--latency-ms", "100"])
        let started = ContinuousClock.now
        let (status, _) = try await Self.post(
            #"{"query":"{ listObjects { items { objectId } } }"}"#, to: server.http, apiKey: nil)
        #expect(status == 500, "--fail-rate 1 answered \(status)")
        #expect(ContinuousClock.now - started >= .milliseconds(100), "--latency-ms 100 did not delay the answer")
        #expect(try await server.stop(with: SIGINT) == 0)
    }

    @Test func pythonGQLClientRunsTheScenario() async throws {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            Issue.record(
                """
                \(python.path) is missing: run Tests/Interop/setup-venv.sh to install the Python test peers \
                (gql, graphql-core) into .venv; CI (.ci/run) does.
                """)
            return
        }
        let directory = try TemporaryDirectory()
        let database = directory.path("interop.sqlite")
        let server = try await ServeProcess.start(["--port", "0", "--api-key", "test-key", "--db", database])

        let scenario = Self.root.appendingPathComponent("Tests/Interop/gql_scenario.py").path
        let output = try await Self.runPython(
            python,
            [scenario, "--http", server.http, "--ws", server.webSocket, "--api-key", "test-key", "--timeout", "15"],
            in: directory, timeout: .seconds(120))
        #expect(output.status == 0, "gql_scenario.py failed:\n\(output.stdout)\n\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        for step in Self.steps {
            #expect(lines.contains { $0.hasPrefix(step) }, "gql_scenario.py did not print \(step)")
        }
        #expect(lines.last == "\(Self.steps.count) steps passed", "last line: \(lines.last ?? "none")")

        let status = try await server.stop(with: SIGINT)
        #expect(status == 0, "exit status \(status) after SIGINT; stderr: \(server.stderr)")
        // The scenario's objects are in the file the server was given.
        let count = try await CLIProcess.succeed(["db", "count", database, "Objects"])
        #expect((Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 9, "Objects rows: \(count)")
    }

    // MARK: Helpers

    static func post(_ json: String, to url: String, apiKey: String?) async throws -> (Int, String) {
        var request = URLRequest(url: try #require(URL(string: url)), timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let apiKey { request.setValue(apiKey, forHTTPHeaderField: "x-api-key") }
        request.httpBody = Data(json.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// Runs `python arguments…` with output in files, killing it after `timeout`.
    static func runPython(_ python: URL, _ arguments: [String], in directory: TemporaryDirectory, timeout: Duration)
        async throws -> CLIProcess.Output
    {
        let process = try ChildProcess(
            python.path, arguments, directory: root.path, stdout: .file(directory.path("python.stdout")),
            stderr: .file(directory.path("python.stderr")))
        let (termination, timedOut) = await process.wait(timeout: timeout)
        var stderr = directory.read("python.stderr")
        if timedOut { stderr += "\n(killed after \(timeout))" }
        var output = CLIProcess.Output(termination, stdout: directory.read("python.stdout"), stderr: stderr)
        if timedOut { output.status = -1 }
        return output
    }
}

import AsyncHTTPClient
import Foundation
import GQLDevServer
import Logging

/// `swift run -c release ServerBench [--seconds N] [--subscribers N] [--events N] [--only gqldevserver,strawberry]
/// [--python PATH] [--memory]`
///
/// GQLDevServer (the server `gql-cli serve` runs) against a Strawberry GraphQL server (Python, uvicorn) with the
/// same schema shape, each in its own child process on 127.0.0.1, driven by the same client: queries/s and
/// mutations/s with 1 and 16 concurrent clients, and subscription fan-out. Prints one table with the ratios.
@main
struct ServerBench {
    struct Options {
        var seconds = 3
        var subscribers = 100
        var events = 1000
        var latencyRate = 25.0
        var latencyEvents = 250
        var only: Set<String> = ["gqldevserver", "strawberry"]
        var python: String?
        var memory = false
        var help = false
        /// Internal: run GQLDevServer in this process and print its endpoints (the child-process mode).
        var serve = false
        var database: String?

        static let usage = """
            usage: ServerBench [--seconds N] [--subscribers N] [--events N] [--only gqldevserver,strawberry]
                               [--python PATH] [--memory]
              --seconds N       length of each throughput measurement (default 3)
              --subscribers N   WebSocket subscribers of the fan-out (default 100)
              --events N        objects created during the fan-out, each delivered to every subscriber (default 1000)
              --latency-rate N  events per second of the paced fan-out that measures latency (default 25)
              --latency-events N  events of the paced fan-out (default 250)
              --python PATH     the Python with strawberry-graphql and uvicorn (default <package root>/.venv/bin/python,
                                made by Tests/Interop/setup-venv.sh)
              --memory          GQLDevServer on an in-memory database (default: a temporary SQLite file)
            """

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = arguments
            func value(_ name: String) throws -> String {
                guard let value = arguments.popFirst() else {
                    throw ChildServer.Failure(description: "\(name) needs a value")
                }
                return value
            }
            func number(_ name: String) throws -> Int {
                guard let number = Int(try value(name)), number > 0 else {
                    throw ChildServer.Failure(description: "\(name) needs a positive number")
                }
                return number
            }
            while let argument = arguments.popFirst() {
                switch argument {
                case "--seconds": seconds = try number(argument)
                case "--subscribers": subscribers = try number(argument)
                case "--events": events = try number(argument)
                case "--latency-rate": latencyRate = Double(try number(argument))
                case "--latency-events": latencyEvents = try number(argument)
                case "--only": only = Set(try value(argument).split(separator: ",").map(String.init))
                case "--python": python = try value(argument)
                case "--memory": memory = true
                case "--serve": serve = true
                case "--db": database = try value(argument)
                case "--help", "-h": help = true
                default: throw ChildServer.Failure(description: "unknown argument \(argument)")
                }
            }
            let unknown = only.subtracting(["gqldevserver", "strawberry"])
            guard unknown.isEmpty else { throw ChildServer.Failure(description: "unknown servers \(unknown.sorted())") }
        }
    }

    /// One server's figures.
    struct Figures {
        var queries1: Throughput
        var queries16: Throughput
        var mutations1: Throughput
        var mutations16: Throughput
        var fanOut: FanOut.Result?
        var paced: FanOut.Result?
        var fanOutError: String?
    }

    /// <package root>: this file is <root>/Benchmarks/Sources/ServerBench/ServerBench.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("ServerBench: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            print(Options.usage)
            return
        }
        do {
            if options.serve {
                try await serve(database: options.database)
            } else {
                try await bench(options)
            }
        } catch {
            FileHandle.standardError.write(Data("ServerBench: \(error)\n".utf8))
            exit(1)
        }
    }

    /// The child-process mode: GQLDevServer on a free loopback port until SIGINT.
    static func serve(database: String?) async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.databasePath = database
        let logger = Logger(label: "ServerBench.serve", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.runUntilTerminated() }
            let endpoints = try await server.endpoints()
            FileHandle.standardOutput.write(
                Data("HTTP      \(endpoints.http)\nWebSocket \(endpoints.webSocket)\n".utf8))
            try await group.waitForAll()
        }
    }

    static func bench(_ options: Options) async throws {
        let python = options.python ?? root.appendingPathComponent(".venv/bin/python").path
        if options.only.contains("strawberry"), !FileManager.default.isExecutableFile(atPath: python) {
            throw ChildServer.Failure(
                description:
                    "\(python) is missing: run Tests/Interop/setup-venv.sh (or pass --python, or --only gqldevserver)")
        }
        print("ServerBench — GQLDevServer (gql-cli serve) vs Strawberry GraphQL + uvicorn, loopback")
        print("date:    \(Date().ISO8601Format())")
        print("machine: nproc \(ProcessInfo.processInfo.activeProcessorCount)")
        print(
            "load:    closed loop, \(options.seconds) s per throughput figure; fan-out \(options.subscribers) subscribers × "
                + "\(options.events) events (graphql-transport-ws), 4 publishers over HTTP as fast as answered, "
                + "then \(options.latencyEvents) events paced at \(String(format: "%g", options.latencyRate))/s for latency"
        )
        print(
            "servers: each a child process on 127.0.0.1; GQLDevServer on "
                + (options.memory ? "an in-memory database" : "a temporary SQLite file (WAL)")
                + ", Strawberry on a Python dict")
        print("")

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let results = try await run(options, client: client, python: python)
            try await client.shutdown()
            printTable(results, options)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    static func run(_ options: Options, client: HTTPClient, python: String) async throws -> [(String, Figures)] {
        var results: [(String, Figures)] = []
        if options.only.contains("gqldevserver") {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ServerBench-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var arguments = ["--serve"]
            if !options.memory { arguments += ["--db", directory.appendingPathComponent("bench.sqlite").path] }
            let server = try await ChildServer(
                name: "GQLDevServer", executable: try selfExecutable(), arguments: arguments)
            results.append(("GQLDevServer", await measure(server, client: client, options)))
            await server.stop()
        }
        if options.only.contains("strawberry") {
            let script = root.appendingPathComponent("Benchmarks/Server/strawberry_server.py").path
            let server = try await ChildServer(
                name: "Strawberry", executable: URL(fileURLWithPath: python), arguments: [script, "--port", "0"])
            results.append(("Strawberry", await measure(server, client: client, options)))
            await server.stop()
        }
        return results
    }

    static func selfExecutable() throws -> URL {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path)
    }

    static func measure(_ server: ChildServer, client: HTTPClient, _ options: Options) async -> Figures {
        let http = GraphQLHTTP(client: client, url: server.http)
        let duration = Duration.seconds(options.seconds)
        let runID = String(UUID().uuidString.prefix(8))
        FileHandle.standardError.write(Data("\(server.name): seeding and warming up\n".utf8))
        for key in 0..<100 {
            _ = await http.succeeds(Operations.createBody("seed-\(key)", number: key), expect: "createObjects")
        }
        _ = await Throughput.measure(clients: 4, duration: .seconds(1)) { _, index in
            await http.succeeds(Operations.getBody("seed-\(index % 100)"), expect: "getObjects")
        }
        func queries(_ clients: Int) async -> Throughput {
            FileHandle.standardError.write(Data("\(server.name): queries, \(clients) clients\n".utf8))
            return await Throughput.measure(clients: clients, duration: duration) { client, index in
                await http.succeeds(Operations.getBody("seed-\((client * 7 + index) % 100)"), expect: "seed-")
            }
        }
        func mutations(_ clients: Int) async -> Throughput {
            FileHandle.standardError.write(Data("\(server.name): mutations, \(clients) clients\n".utf8))
            return await Throughput.measure(clients: clients, duration: duration) { client, index in
                await http.succeeds(
                    Operations.createBody("m-\(runID)-\(clients)-\(client)-\(index)", number: index),
                    expect: "createObjects")
            }
        }
        var figures = Figures(
            queries1: await queries(1), queries16: await queries(16), mutations1: await mutations(1),
            mutations16: await mutations(16))
        FileHandle.standardError.write(
            Data("\(server.name): fan-out, \(options.subscribers) subscribers × \(options.events) events\n".utf8))
        do {
            let fanOut = FanOut(subscribers: options.subscribers, events: options.events)
            figures.fanOut = try await fanOut.run(http: http, webSocket: server.webSocket, runID: runID)
            FileHandle.standardError.write(
                Data(
                    "\(server.name): paced fan-out, \(options.latencyEvents) events at \(options.latencyRate)/s\n".utf8)
            )
            var paced = FanOut(subscribers: options.subscribers, events: options.latencyEvents)
            paced.rate = options.latencyRate
            figures.paced = try await paced.run(http: http, webSocket: server.webSocket, runID: runID + "p")
        } catch {
            figures.fanOutError = "\(error)"
        }
        return figures
    }

    static func printTable(_ results: [(String, Figures)], _ options: Options) {
        let names = results.map(\.0)
        let ours = results.first { $0.0 == "GQLDevServer" }?.1
        let theirs = results.first { $0.0 == "Strawberry" }?.1
        var rows: [[String]] = [["workload"] + names + (ours != nil && theirs != nil ? ["ratio", "target ≥ 3×"] : [])]
        func row(_ label: String, higherIsBetter: Bool = true, _ value: (Figures) -> Double?, format: String = "%.0f") {
            var cells = [label]
            for (_, figures) in results { cells.append(value(figures).map { String(format: format, $0) } ?? "—") }
            if let ours, let theirs {
                if let a = value(ours), let b = value(theirs), a > 0, b > 0 {
                    // The target (≥ 3×) is on throughput; latencies only show their ratio.
                    let ratio = higherIsBetter ? a / b : b / a
                    cells += [String(format: "%.2f×", ratio), higherIsBetter ? (ratio >= 3 ? "✔" : "✘") : ""]
                } else {
                    cells += ["—", ""]
                }
            }
            rows.append(cells)
        }
        row("queries/s, 1 client") { $0.queries1.perSecond }
        row("queries/s, 16 clients") { $0.queries16.perSecond }
        row("mutations/s, 1 client") { $0.mutations1.perSecond }
        row("mutations/s, 16 clients") { $0.mutations16.perSecond }
        row("fan-out deliveries/s") { $0.fanOut?.perSecond }
        row("fan-out p50 latency ms, unpaced", higherIsBetter: false, { $0.fanOut?.p50Milliseconds }, format: "%.1f")
        row("fan-out p99 latency ms, unpaced", higherIsBetter: false, { $0.fanOut?.p99Milliseconds }, format: "%.1f")
        let pace = String(format: "%g", options.latencyRate)
        row(
            "fan-out p50 latency ms, \(pace) ev/s", higherIsBetter: false, { $0.paced?.p50Milliseconds }, format: "%.1f"
        )
        row(
            "fan-out p99 latency ms, \(pace) ev/s", higherIsBetter: false, { $0.paced?.p99Milliseconds }, format: "%.1f"
        )
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for cells in rows {
            let line = cells.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            print(line.joined(separator: "  "))
        }
        print("")
        print("ratio: GQLDevServer ÷ Strawberry for rates, Strawberry ÷ GQLDevServer for latencies (higher is better)")
        for (name, figures) in results {
            let failures = [figures.queries1, figures.queries16, figures.mutations1, figures.mutations16]
                .map(\.failures).reduce(0, +)
            var notes = ["\(failures) failed requests"]
            if let fanOut = figures.fanOut {
                notes.append(
                    "fan-out delivered \(fanOut.delivered) of \(fanOut.subscribers * fanOut.events)"
                        + String(format: " in %.2f s", fanOut.seconds) + (fanOut.complete ? "" : " (timed out)"))
            }
            if let paced = figures.paced {
                notes.append(
                    "paced fan-out delivered \(paced.delivered) of \(paced.subscribers * paced.events)"
                        + (paced.complete ? "" : " (timed out)"))
            }
            if let error = figures.fanOutError { notes.append("fan-out failed: \(error)") }
            print("  \(name): " + notes.joined(separator: "; "))
        }
    }
}

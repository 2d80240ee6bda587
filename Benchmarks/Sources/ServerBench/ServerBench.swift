import AsyncHTTPClient
import BenchKit
import Foundation
import GQLDevServer
import GQLStore
import Logging

/// `swift run -c release ServerBench [--seconds N] [--rounds N] [--workers N] [--only …] [--python PATH] [--memory]`
///
/// GQLDevServer (the server `gql-cli serve` runs) against Strawberry GraphQL as its users deploy it for speed
/// (uvicorn with uvloop and httptools, ParserCache + ValidationCache, one process and `--workers` processes), with
/// the physical limit beside them (a bare Hummingbird route answering the same bytes), each in its own child
/// process on 127.0.0.1, driven by the same client: queries/s and mutations/s with 1 and 16 concurrent clients in
/// interleaved rounds, subscription fan-out, and GQLDevServer's memory under the alias attack of issue 10. Every
/// answer is checked exactly; the exit status is 1 when any was wrong.
@main
struct ServerBench {
    /// The repository root.
    static let root = Peers.root

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
        if let set = options.wrkHeaders {
            print(set.lua, terminator: "")
            return
        }
        do {
            if options.serve {
                try await serve(database: options.database)
            } else if options.limit {
                try await LimitServer.serve()
            } else if try await !bench(options) {
                exit(1)
            }
        } catch {
            FileHandle.standardError.write(Data("ServerBench: \(error)\n".utf8))
            exit(1)
        }
    }

    /// The child-process mode: GQLDevServer on a free loopback port until SIGINT, with the browser rows' page
    /// allowed (``HeaderSet/origin``), in a process set up as `gql-cli`'s: SQLite's memory statistics turned off
    /// before anything uses SQLite.
    static func serve(database: String?) async throws {
        GQLDatabase.configureSQLiteProcess(memoryStatistics: false)
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.databasePath = database
        configuration.allowedOrigins = [HeaderSet.origin]
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

    /// Runs every workload and prints the table; false when an answer was wrong or a fan-out incomplete.
    static func bench(_ options: Options) async throws -> Bool {
        let python = options.python ?? root.appendingPathComponent(".venv/bin/python").path
        if options.only.contains("strawberry"), !FileManager.default.isExecutableFile(atPath: python) {
            throw ChildServer.Failure(
                description:
                    "\(python) is missing: run Tests/Interop/setup-venv.sh (or pass --python, or --only gqldevserver)")
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let servers = try ContenderSet()
        do {
            let wrk = try await loadGenerator(options, directory: servers.directory)
            let header = BenchEnvironment.header()
            try await start(options, servers: servers, client: client, python: python)
            let results = try await run(options, servers.contenders, plansOff: servers.plansOff, wrk: wrk)
            await servers.stop()
            try await client.shutdown()
            var report = Report(options: options, results: results, configurations: servers.configurations)
            report.loadGenerator = wrk.map { wrk in
                (wrk.checkload == nil ? "" : "checkload (Benchmarks/loadgen), one thread, for the query rows; ")
                    + "wrk (\(wrk.executable)), -t1 -c1 and -t2 -c16"
            }
            return report.print(header: header, loadAfter: BenchEnvironment.loadAverage())
        } catch {
            await servers.stop()
            try? await client.shutdown()
            throw error
        }
    }

    /// wrk (with checkload for the query turns unless `--load wrk`) when it is asked for or installed; nil for
    /// ServerBench's own client.
    static func loadGenerator(_ options: Options, directory: URL) async throws -> WrkLoad? {
        if options.load == .client { return nil }
        guard let executable = WrkLoad.find() else {
            if options.load == .wrk || options.load == .checkload {
                throw ChildServer.Failure(description: "wrk is not installed (apt install wrk)")
            }
            FileHandle.standardError.write(
                Data("note: wrk is not installed (apt install wrk): ServerBench's own client drives the rounds\n".utf8))
            return nil
        }
        var wrk = WrkLoad(executable: executable, directory: directory)
        if options.load != .wrk {
            wrk.checkload = await CheckLoad.build(root: root, directory: directory)
            if options.load == .checkload, wrk.checkload == nil {
                throw ChildServer.Failure(description: "checkload did not build (Benchmarks/loadgen/checkload.c)")
            }
        }
        return wrk
    }

    static func start(_ options: Options, servers: ContenderSet, client: HTTPClient, python: String) async throws {
        if options.only.contains("gqldevserver") {
            var arguments = ["--serve"]
            if !options.memory { arguments += ["--db", servers.directory.appendingPathComponent("dev.sqlite").path] }
            try await servers.start(
                .devServer, name: "GQLDevServer", tag: "d", executable: try selfExecutable(), arguments: arguments,
                client: client)
            if options.workloads.contains("plans-off") {
                var arguments = ["--serve"]
                if !options.memory {
                    arguments += ["--db", servers.directory.appendingPathComponent("dev-plans-off.sqlite").path]
                }
                try await servers.start(
                    .devServer, name: "GQLDevServer", tag: "o", executable: try selfExecutable(),
                    arguments: arguments, client: client, environment: ["GQL_DEV_SERVER_PLANS": "off"], plansOff: true)
            }
        }
        if options.only.contains("strawberry") {
            let script = root.appendingPathComponent("Benchmarks/Server/strawberry_server.py").path
            for workers in Set([1, options.workers]).sorted() {
                let database = servers.directory.appendingPathComponent("strawberry-\(workers).sqlite").path
                try await servers.start(
                    .strawberry(workers: workers), name: "Strawberry ×\(workers)", tag: "s\(workers)",
                    executable: URL(fileURLWithPath: python),
                    arguments: [script, "--port", "0", "--workers", "\(workers)", "--database", database],
                    client: client)
            }
        }
        if options.only.contains("limit") {
            try await servers.start(
                .limit, name: "limit", tag: "l", executable: try selfExecutable(), arguments: ["--limit"],
                client: client)
        }
        if options.only.contains("nginx") {
            if let nginx = Nginx.find() {
                try await servers.startNginx(executable: nginx, client: client)
            } else if options.onlyGiven {
                throw ChildServer.Failure(description: "nginx is not installed (apt install nginx-light)")
            } else {
                FileHandle.standardError.write(
                    Data("note: nginx is not installed (apt install nginx-light): no nginx limit column\n".utf8))
            }
        }
    }

    /// Every figure: seeding and warm-up, the throughput rounds, the fan-out rounds, the alias attack.
    static func run(
        _ options: Options, _ contenders: [Contender], plansOff: Contender?, wrk: WrkLoad?
    ) async throws -> Report.Results {
        var results = Report.Results()
        let runID = String(UUID().uuidString.prefix(8))
        for contender in contenders + (plansOff.map { [$0] } ?? []) {
            FileHandle.standardError.write(Data("\(contender.name): seeding and warming up\n".utf8))
            if !contender.isLimit {
                for n in 0..<100 {
                    let key = "seed-\(n)"
                    if await !contender.http.answers(
                        Operations.createBody(key, number: n), Operations.createAnswer(key, number: n))
                    {
                        results.wrong[contender.name, default: 0] += 1
                    }
                }
            }
            let warm = await Throughput.measure(clients: 4, duration: .seconds(1)) { _, index in
                await contender.http.answers(
                    Operations.getBody("seed-\(index % 100)"), contender.getAnswer(index % 100))
            }
            results.wrong[contender.name, default: 0] += warm.failures
        }
        for workload in Workload.rows(options.workloads, headers: options.headers) {
            // The plans-off row: the plans-off server takes GQLDevServer's place (and name) among the contenders.
            var row = contenders
            if workload.plansOff {
                guard let plansOff else { continue }
                row = contenders.map { $0.kind == .devServer ? plansOff : $0 }
            }
            results.throughput.append(
                await Rounds.measure(
                    workload, contenders: row, rounds: options.rounds, seconds: options.seconds, runID: runID, wrk: wrk)
            )
        }
        guard options.workloads.contains("fan-out") else { return await attack(options, contenders, results) }
        // Fan-out: GQLDevServer and the one-process Strawberry (events do not cross uvicorn workers).
        let fanOutContenders = contenders.filter { $0.kind == .devServer || $0.kind == .strawberry(workers: 1) }
        for round in 0..<options.fanOutRounds {
            let order = round % 2 == 0 ? fanOutContenders : fanOutContenders.reversed()
            for contender in order {
                FileHandle.standardError.write(Data("fan-out round \(round + 1): \(contender.name)\n".utf8))
                do {
                    let fanOut = FanOut(subscribers: options.subscribers, events: options.events)
                    let id = "\(runID)-\(contender.tag)-\(round)"
                    let unpaced = try await fanOut.run(http: contender.http, webSocket: contender.webSocket, runID: id)
                    var paced = FanOut(subscribers: options.subscribers, events: options.latencyEvents)
                    paced.rate = options.latencyRate
                    let pacedResult = try await paced.run(
                        http: contender.http, webSocket: contender.webSocket, runID: id + "p")
                    results.fanOut[contender.name, default: []].append(unpaced)
                    results.paced[contender.name, default: []].append(pacedResult)
                } catch {
                    results.fanOutErrors.append("\(contender.name): \(error)")
                }
            }
        }
        return await attack(options, contenders, results)
    }

    /// The alias attack on GQLDevServer, when it is among the workloads.
    static func attack(_ options: Options, _ contenders: [Contender], _ results: Report.Results) async -> Report.Results
    {
        var results = results
        if options.workloads.contains("attack"), let server = contenders.first(where: { $0.kind == .devServer }) {
            FileHandle.standardError.write(Data("GQLDevServer: alias attack (100 and 1,000 aliases)\n".utf8))
            results.aliasAttack = await AliasAttack.run(http: server.http, pid: server.pid)
        }
        return results
    }

    static func selfExecutable() throws -> URL {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path)
    }
}

import BenchKit
import Foundation
import GQLDevServer
import GQLNet
import Logging

/// `swift run -c release NetBench [--queries N] [--clients N] [--events N] [--documents N] [--rounds N]
/// [--only query,subscription,registry]`
///
/// The GQLNet client against raw clients, on loopback against an in-process GQLDevServer (in-memory database,
/// random port): query round trips through `GQLServer.query` vs AsyncHTTPClient (GQLNet's HTTP transport) posting
/// the same body, subscription events through `GQLServer.subscription` (GQLNet's own WebSocket client on NIO) vs
/// swift-websocket's WSClient speaking graphql-transport-ws,
/// and loading 1,000 `.graphql` documents into a `GQLQuery` registry. Prints one table of medians with ratios.
@main
struct NetBench {
    struct Options {
        var queries = 3000
        var clients = 16
        var events = 20_000
        var documents = 1000
        var rounds = 7
        var only: Set<String> = ["query", "subscription", "registry"]
        var verbose = false
        var diagnose = false
        var help = false

        static let usage = """
            usage: NetBench [--queries N] [--clients N] [--events N] [--documents N] [--rounds N]
                            [--only query,subscription,registry] [--verbose] [--diagnose]
              --queries N     queries per round and contender, sequential and concurrent (default 3000)
              --clients N     concurrent clients of the concurrent query figure (default 16)
              --events N      subscription events per round (default 20000)
              --documents N   .graphql files of the registry load (default 1000)
              --rounds N      measured rounds per figure, after one warm-up round; the median is reported (default 7)
              --verbose       every round's figure
              --diagnose      also run raw contenders that add one of GQLServer's extra steps at a time
            """

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--queries": queries = try arguments.number(for: argument)
                case "--clients": clients = try arguments.number(for: argument)
                case "--events": events = try arguments.number(for: argument)
                case "--documents": documents = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--only": only = try arguments.list(for: argument, allowed: ["query", "subscription", "registry"])
                case "--verbose": verbose = true
                case "--diagnose": diagnose = true
                case "--help", "-h": help = true
                default: throw BenchError("unknown argument \(argument)")
                }
            }
        }
    }

    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("NetBench: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            print(Options.usage)
            return
        }
        do {
            let failed = try await bench(options)
            if failed { exit(1) }
        } catch {
            FileHandle.standardError.write(Data("NetBench: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs the workloads; returns whether a contender failed a check.
    static func bench(_ options: Options) async throws -> Bool {
        print("NetBench — GQLNet client (GQLServer, GQLQuery) vs raw AsyncHTTPClient / WSClient, loopback")
        for line in BenchEnvironment.header() { print(line) }
        print(
            "server:  GQLDevServer in this process, in-memory database, 127.0.0.1, random port; "
                + "\(options.rounds) rounds after a warm-up, medians")
        print("")
        var table = Table()
        if options.only.contains("query") || options.only.contains("subscription") {
            let database = try GQLDatabase(path: ":memory:")
            var configuration = GQLDevServer.Configuration()
            configuration.port = 0
            let logger = Logger(label: "NetBench.server", factory: { _ in SwiftLogNoOpLogHandler() })
            let server = try GQLDevServer(configuration: configuration, database: database, logger: logger)
            let serving = Task { try await server.run() }
            do {
                let endpoints = try await server.endpoints()
                if options.only.contains("query") {
                    try await QueryLoad(http: endpoints.http, options: options).run(into: &table)
                }
                if options.only.contains("subscription") {
                    try await SubscriptionLoad(endpoints: endpoints, database: database, options: options)
                        .run(into: &table)
                }
            } catch {
                await server.shutdown()
                _ = await serving.result
                throw error
            }
            await server.shutdown()
            _ = await serving.result
        }
        if options.only.contains("registry") {
            try RegistryLoad(documents: options.documents, options: options).run(into: &table)
        }
        table.print()
        print("load average after: \(BenchEnvironment.loadAverage())")
        return table.failed
    }
}

/// Progress on standard error, so the table on standard output stays clean.
func progress(_ text: String) {
    FileHandle.standardError.write(Data("\(text)\n".utf8))
}

/// Seconds in a `Duration`.
extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// CPU time used by the whole process so far (every thread: client, server, event loops), in seconds.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The median of the rounds, 0 for none.
func median(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }

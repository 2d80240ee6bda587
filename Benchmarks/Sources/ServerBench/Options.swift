import BenchKit
import Foundation

extension ServerBench {
    /// The command line.
    struct Options {
        var seconds = 2
        var rounds = 5
        var fanOutRounds = 3
        var subscribers = 100
        var events = 1000
        var latencyRate = 25.0
        var latencyEvents = 250
        var workers = 2
        var only: Set<String> = Contender.Kind.allNames
        /// Whether `--only` was given (without it, a missing nginx is skipped with a note instead of an error).
        var onlyGiven = false
        /// What drives the throughput rounds: wrk (the default when it is installed) or ServerBench's own client.
        var load: Load?
        var python: String?
        var memory = false
        var help = false
        /// Internal: run GQLDevServer in this process and print its endpoints (the child-process mode).
        var serve = false
        /// Internal: run the bare Hummingbird route (the physical limit) in this process.
        var limit = false
        var database: String?

        enum Load: String {
            case wrk
            case client
        }

        static let usage = """
            usage: ServerBench [--seconds N] [--rounds N] [--fan-out-rounds N] [--subscribers N] [--events N]
                               [--workers N] [--only gqldevserver,strawberry,limit,nginx] [--load wrk|client]
                               [--python PATH] [--memory]
              --seconds N         length of each contender's turn in a throughput round (default 2)
              --rounds N          interleaved rounds of every throughput workload (default 5; medians)
              --fan-out-rounds N  interleaved rounds of the fan-out (default 3)
              --subscribers N     WebSocket subscribers of the fan-out (default 100)
              --events N          objects created during the fan-out, each delivered to every subscriber (default 1000)
              --latency-rate N    events per second of the paced fan-out that measures latency (default 25)
              --latency-events N  events of the paced fan-out (default 250)
              --workers N         uvicorn worker processes of the deployed Strawberry (default 2, one per core)
              --load wrk|client   what drives the throughput rounds: wrk (default when installed; every answer
                                  checked by a Lua hook) or ServerBench's own Swift client (slower than the limits)
              --python PATH       the Python with strawberry-graphql and uvicorn[standard] (default <package
                                  root>/.venv/bin/python, made by Tests/Interop/setup-venv.sh)
              --memory            GQLDevServer on an in-memory database (default: a temporary SQLite file)
            """

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--seconds": seconds = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--fan-out-rounds": fanOutRounds = try arguments.number(for: argument)
                case "--subscribers": subscribers = try arguments.number(for: argument)
                case "--events": events = try arguments.number(for: argument)
                case "--latency-rate": latencyRate = Double(try arguments.number(for: argument))
                case "--latency-events": latencyEvents = try arguments.number(for: argument)
                case "--workers": workers = try arguments.number(for: argument)
                case "--only":
                    only = try arguments.list(for: argument, allowed: Contender.Kind.allNames)
                    onlyGiven = true
                case "--load":
                    let name = try arguments.value(for: argument)
                    guard let chosen = Load(rawValue: name) else {
                        throw BenchError("--load takes wrk or client, not \(name)")
                    }
                    load = chosen
                case "--python": python = try arguments.value(for: argument)
                case "--memory": memory = true
                case "--serve": serve = true
                case "--limit": limit = true
                case "--db": database = try arguments.value(for: argument)
                case "--help", "-h": help = true
                default: throw BenchError("unknown argument \(argument)")
                }
            }
        }
    }
}

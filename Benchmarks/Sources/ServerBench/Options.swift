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
        /// The parts of the run: the query rows, the plans-off row, the mutation rows, the fan-out, the attack.
        var workloads: Set<String> = Self.allWorkloads
        /// The header sets of the query rows.
        var headers: [HeaderSet] = HeaderSet.allCases
        /// Internal: print the Lua that adds this header set to wrk's requests (for the shell scripts), and stop.
        var wrkHeaders: HeaderSet?
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

        static let allWorkloads: Set<String> = ["queries", "plans-off", "mutations", "fan-out", "attack"]

        enum Load: String {
            /// checkload for the query turns, wrk for the mutation turns (the default when both can run).
            case checkload
            case wrk
            case client
        }

        static let usage = """
            usage: ServerBench [--seconds N] [--rounds N] [--fan-out-rounds N] [--subscribers N] [--events N]
                               [--workers N] [--only gqldevserver,strawberry,limit,nginx]
                               [--load checkload|wrk|client]
                               [--workloads queries,plans-off,mutations,fan-out,attack] [--headers bare,python,browser]
                               [--python PATH] [--memory]
              --seconds N         length of each contender's turn in a throughput round (default 2)
              --rounds N          interleaved rounds of every throughput workload (default 5; medians)
              --fan-out-rounds N  interleaved rounds of the fan-out (default 3)
              --subscribers N     WebSocket subscribers of the fan-out (default 100)
              --events N          objects created during the fan-out, each delivered to every subscriber (default 1000)
              --latency-rate N    events per second of the paced fan-out that measures latency (default 25)
              --latency-events N  events of the paced fan-out (default 250)
              --workers N         uvicorn worker processes of the deployed Strawberry (default 2, one per core)
              --workloads LIST    the parts to run (default all): queries (one row per header set at 1 and 16
                                  connections), plans-off (the bare query at 1 connection, GQLDevServer with
                                  GQL_DEV_SERVER_PLANS=off), mutations (1 and 16), fan-out, attack (memory)
              --headers LIST      the header sets of the query rows (default all): bare (wrk's request), python
                                  (a requests session's), browser (a page's, from an origin GQLDevServer allows)
              --load checkload|wrk|client
                                  what drives the throughput rounds: checkload (default when wrk and cc are
                                  installed: the query turns by Benchmarks/loadgen/checkload.c, which compares
                                  every answer's bytes, the mutation turns by wrk), wrk (every turn, every answer
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
                        throw BenchError("--load takes checkload, wrk or client, not \(name)")
                    }
                    load = chosen
                case "--workloads": workloads = try arguments.list(for: argument, allowed: Self.allWorkloads)
                case "--headers":
                    let names = try arguments.list(for: argument, allowed: HeaderSet.allNames)
                    headers = HeaderSet.allCases.filter { names.contains($0.rawValue) }
                case "--wrk-headers":
                    let name = try arguments.value(for: argument)
                    guard let set = HeaderSet(rawValue: name) else {
                        throw BenchError("--wrk-headers takes bare, python or browser, not \(name)")
                    }
                    wrkHeaders = set
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

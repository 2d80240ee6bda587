import BenchKit
import Foundation

/// `swift run -c release CodegenBench [--rounds N] [--no-warmup] [--verbose] [--skip-compile | --only-compile]
/// [--compile-rounds N] [--configurations debug,release] [--prepare | --profile] [--cli PATH] [--venv PATH]`
///
/// Typed Swift for 200 operations on GitHub's public schema (CodegenCorpus): generation time by GQLCodegen, in this
/// process and as `gql-cli codegen`, against ariadne-codegen 0.19.0 (the Python client generator, at its defaults)
/// on the same schema and operations, in interleaved rounds (the order rotating by round, one warm-up round run and
/// checked but not counted), each run's output checked; beside them the floor, reading and parsing the schema alone.
/// Then (CompileSize) lines per operation and `swift build` seconds of the generated Swift, beside Swift written
/// by hand for 10 of the operations. Skipped, saying so, when shared/corpus is not beside the repository.
@main
struct CodegenBench {
    struct Options {
        var rounds = 5
        var warmup = true
        var verbose = false
        var generate = true
        var compile = true
        var compileRounds = 1
        var configurations = ["debug", "release"]
        var compileMode = CompileSize.Mode.measure
        var cli: URL?
        var venv = Peers.root.appendingPathComponent(".venv-codegen")

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--no-warmup": warmup = false
                case "--verbose": verbose = true
                case "--skip-compile": compile = false
                case "--only-compile": generate = false
                case "--compile-rounds": compileRounds = try arguments.number(for: argument)
                case "--prepare": compileMode = .prepare
                case "--profile": compileMode = .profile
                case "--configurations":
                    configurations = try arguments.list(for: argument, allowed: ["debug", "release"]).sorted()
                case "--cli": cli = URL(fileURLWithPath: try arguments.value(for: argument))
                case "--venv": venv = URL(fileURLWithPath: try arguments.value(for: argument))
                default: throw BenchError("unknown argument \(argument); see the comment on CodegenBench for usage")
                }
            }
        }
    }

    static func main() {
        do {
            let options = try Options(CommandLine.arguments.dropFirst())
            print("CodegenBench — typed Swift for GitHub's schema: GQLCodegen vs ariadne-codegen 0.19.0")
            for line in BenchEnvironment.header() { print(line) }
            guard let corpus = try CodegenCorpus() else {
                print("skipped: \(CodegenCorpus.schemaURL.path) is not there (shared/corpus beside the repository)")
                return
            }
            defer { corpus.remove() }
            print("schema:  \(CodegenCorpus.schemaURL.path)")
            print("operations: \(corpus.operationCount) in \(corpus.documents.count) documents")
            guard corpus.operationCount == 200 else { throw BenchError("expected 200 operations") }
            if options.generate { try generation(corpus, options) }
            if options.compile {
                try CompileSize(
                    corpus: corpus, rounds: options.compileRounds, configurations: options.configurations,
                    mode: options.compileMode
                ).run()
            }
            print("load average after: \(BenchEnvironment.loadAverage())")
        } catch {
            print("CodegenBench failed: \(error)")
            exit(1)
        }
    }

    static func generation(_ corpus: CodegenCorpus, _ options: Options) throws {
        let cli =
            options.cli ?? Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("gql-cli")
        guard let cli, FileManager.default.isExecutableFile(atPath: cli.path) else {
            throw BenchError(
                "no gql-cli beside CodegenBench: `swift build -c release --product gql-cli` first, or --cli")
        }
        var generators = Generators(corpus: corpus, cli: cli, venv: options.venv)
        guard FileManager.default.isExecutableFile(atPath: generators.ariadne.path) else {
            throw BenchError("\(generators.ariadne.path) is missing: `make bench-codegen` installs it (.venv-codegen)")
        }
        let names = ["in-process", "gql-cli", "ariadne", "floor", "python floor"]
        var times: [String: [Double]] = [:]
        let total = options.rounds + (options.warmup ? 1 : 0)
        for round in 0..<total {
            var line = round == 0 && options.warmup ? "warm-up" : "round \(round + (options.warmup ? 0 : 1))"
            for index in names.indices {
                let name = names[(index + round) % names.count]
                let seconds: Double
                switch name {
                case "in-process": seconds = try generators.inProcess()
                case "gql-cli": seconds = try generators.commandLine()
                case "ariadne": seconds = try generators.ariadneCodegen()
                case "floor": seconds = try generators.readAndParseSchema()
                default: seconds = try generators.pythonReadAndParseSchema()
                }
                line += String(format: "  %@ %.3f s", name, seconds)
                if round > 0 || !options.warmup { times[name, default: []].append(seconds) }
            }
            if options.verbose { print(line) }
        }
        let ariadne = times["ariadne"] ?? []
        print("")
        print(
            "Generation, \(corpus.operationCount) operations, median of \(options.rounds) rounds; ratios: median of the "
                + "per-round ratios (lowest–highest round)")
        print("generator".padded(50) + "  median s  ariadne ÷ it          it ÷ its side's floor")
        let rows = [
            ("GQLCodegen, in-process (read, generate, write)", "in-process", "floor"),
            ("gql-cli codegen, a process  [compared]", "gql-cli", "floor"),
            ("ariadne-codegen 0.19.0 + ruff format, a process", "ariadne", "python floor"),
            ("floor: read + parse the schema (Swift)", "floor", ""),
            ("floor: python + graphql-core parse it", "python floor", ""),
        ]
        for (label, name, floor) in rows {
            let values = times[name] ?? []
            let median = Statistics.median(values) ?? .nan
            let ratio = name == "ariadne" || floor.isEmpty ? "" : Statistics.spread(Statistics.ratios(ariadne, values))
            let overFloor = floor.isEmpty ? "" : Statistics.spread(Statistics.ratios(values, times[floor] ?? []))
            print(label.padded(50) + String(format: "%9.3f s  ", median) + ratio.padded(22) + overFloor)
        }
        print(
            "goal: ariadne-codegen ÷ gql-cli codegen ≥ 10×; every run's files checked (GQLCodegen's and gql-cli's "
                + "the same bytes; ariadne's package complete, imported once)")
    }
}

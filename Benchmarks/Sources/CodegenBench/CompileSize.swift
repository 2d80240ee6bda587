import BenchKit
import Foundation
import GQLCodegen

/// The generated Swift's size and compile time, beside Swift written by hand for 10 of the operations.
///
/// A package in `Benchmarks/.build-codegen/package` (git-ignored, kept between runs so that its dependencies are
/// built once; its own scratch folder, never the repository's `.build`) depends on GraphQLite's GQLNet by path and
/// holds four targets: `Generated200` (GQLCodegen's output for all 200 operations), `Generated10` (its output for
/// Compared.graphql alone), `HandWritten10` (Benchmarks/Codegen/HandWritten/Compared.swift) and `Profiled200` (the
/// 200 operations again, compiled with the frontend's type-checking timers on, built only by `--profile`). Two measures, each one
/// `swift build --target T` with everything T depends on already built, SwiftPM's own start included (the no-op
/// build beside them is that start alone):
/// - **the module afresh**: every source of T touched, so every file is compiled again and the module re-emitted:
///   a clean build of that module alone;
/// - **one operation edited**: one generated file of `Generated200` touched (``incrementalFile``), the rebuild an
///   app developer waits for after changing one `.graphql` file.
struct CompileSize {
    static let folder = Peers.root.appendingPathComponent("Benchmarks/.build-codegen")
    static let package = folder.appendingPathComponent("package")
    static let scratch = folder.appendingPathComponent("scratch")
    static let targets = ["Generated200", "Generated10", "HandWritten10"]
    /// The generated file touched for the incremental measure: one document of `Generated200`.
    static let incrementalFile = "Benchmarks.Compared.graphql.swift"

    /// What to do: measure, only build untimed (`--prepare`: the dependencies, the first time several minutes per
    /// configuration), or build `Profiled200` and print where its compile time goes (`--profile`).
    enum Mode: String {
        case measure, prepare, profile
    }

    let corpus: CodegenCorpus
    let rounds: Int
    let configurations: [String]
    var mode = Mode.measure

    func run() throws {
        let generated = try corpus.generate()
        guard generated[Self.incrementalFile] != nil else {
            throw BenchError("GQLCodegen wrote no \(Self.incrementalFile) (the incremental measure touches it)")
        }
        let compared = try corpus.generate(only: CodegenCorpus.comparedDocument)
        let handWritten = try String(contentsOf: CodegenCorpus.handWritten, encoding: .utf8)
        try stage([
            "Generated200": generated, "Generated10": compared, "HandWritten10": ["Compared.swift": handWritten],
            "Profiled200": generated,
        ])
        switch mode {
        case .prepare:
            for configuration in configurations {
                print("building the package (\(configuration), untimed; the dependencies take minutes the first time)")
                let seconds = try Self.targets.map { try build(configuration, target: $0, touching: nil) }
                print(String(format: "built in %.1f s", seconds.reduce(0, +)))
            }
            return
        case .profile:
            for configuration in configurations { try CompileProfile.run(configuration) }
            return
        case .measure:
            break
        }
        var seconds: [String: [String: Double]] = [:]
        var incremental: [String: Double] = [:]
        var noOp: [String: Double] = [:]
        for configuration in configurations {
            print("building the package (\(configuration), untimed; its dependencies take minutes the first time)…")
            for target in Self.targets { _ = try build(configuration, target: target, touching: nil) }
            noOp[configuration] = try build(configuration, target: "HandWritten10", touching: nil)
            var samples: [String: [Double]] = [:]
            var incrementalSamples: [Double] = []
            for round in 0..<rounds {
                for index in Self.targets.indices {
                    let target = Self.targets[(index + round) % Self.targets.count]
                    let seconds = try build(configuration, target: target, touching: target)
                    samples[target, default: []].append(seconds)
                    Self.progress("\(configuration) round \(round + 1): \(target) afresh \(Self.seconds(seconds))")
                }
                let edited = try build(
                    configuration, target: "Generated200", touching: "Generated200", only: Self.incrementalFile)
                incrementalSamples.append(edited)
                Self.progress("\(configuration) round \(round + 1): one operation edited \(Self.seconds(edited))")
            }
            for (target, values) in samples { seconds[target, default: [:]][configuration] = Statistics.median(values) }
            incremental[configuration] = Statistics.median(incrementalSamples)
            func list(_ values: [Double]) -> String { values.map { String(format: "%.2f", $0) }.joined(separator: " ") }
            let all = samples.sorted { $0.key < $1.key }.map { "\($0.key) \(list($0.value))" }
            print(
                "\(configuration) samples, s: " + all.joined(separator: "; ") + "; one operation edited "
                    + list(incrementalSamples))
        }
        let rows = [
            ("generated, 200 operations", "Generated200", Lines.count(generated.values), corpus.operationCount),
            ("generated, the 10 compared", "Generated10", Lines.count(compared.values), 10),
            ("hand-written, the same 10", "HandWritten10", Lines.count([handWritten]), 10),
        ]
        print("")
        print("Size and compile time (lines: not blank, not comments, a multi-line string literal counted as one;")
        print("seconds: `swift build --target T` after every source of T was touched (the module afresh), dependencies")
        print("built; median of \(rounds))")
        let header =
            "code                          files   lines  lines/op"
            + configurations.map { " \($0.padded(9)) s" }.joined()
        print(header)
        for (label, target, lines, operations) in rows {
            let files = target == "HandWritten10" ? 1 : (target == "Generated10" ? compared.count : generated.count)
            var line =
                label.padded(28) + String(format: "%7d %7d %9.1f", files, lines, Double(lines) / Double(operations))
            for configuration in configurations {
                line += String(format: " %11.2f", seconds[target]?[configuration] ?? .nan)
            }
            print(line)
        }
        var ratio =
            "generated ÷ hand-written (10)".padded(28)
            + String(format: "%15.2f×", Double(rows[1].2) / Double(rows[2].2))
        ratio += "         "
        for configuration in configurations {
            let generatedSeconds = seconds["Generated10"]?[configuration] ?? .nan
            let handSeconds = seconds["HandWritten10"]?[configuration] ?? .nan
            ratio += String(format: " %10.2f×", generatedSeconds / handSeconds)
        }
        print(ratio + "   goal: lines ≤ 2×")
        var edit = "one operation edited (200)".padded(28) + String(repeating: " ", count: 25)
        for configuration in configurations { edit += String(format: " %11.2f", incremental[configuration] ?? .nan) }
        print(edit + "   (\(Self.incrementalFile) touched, Generated200 rebuilt)")
        var floor = "no-op build (SwiftPM alone)".padded(28) + String(repeating: " ", count: 25)
        for configuration in configurations { floor += String(format: " %11.2f", noOp[configuration] ?? .nan) }
        print(floor)
    }

    /// Writes the package, each file only when its bytes change, so that a rerun builds incrementally.
    private func stage(_ sources: [String: [String: String]]) throws {
        let manifest = """
            // swift-tools-version:6.1
            // Written by CodegenBench (Benchmarks/Sources/CodegenBench/CompileSize.swift); rewritten on every run.
            import PackageDescription

            let package = Package(
                name: "CodegenCompile",
                platforms: [.macOS(.v15), .iOS(.v18)],
                dependencies: [.package(name: "GraphQLite", path: "\(Peers.root.path)")],
                targets: [
                    .target(name: "Generated200", dependencies: [.product(name: "GQLNet", package: "GraphQLite")]),
                    .target(name: "Generated10", dependencies: [.product(name: "GQLNet", package: "GraphQLite")]),
                    .target(name: "HandWritten10"),
                    // The frontend's timers, for --profile only: target flags, so no dependency is rebuilt.
                    .target(
                        name: "Profiled200", dependencies: [.product(name: "GQLNet", package: "GraphQLite")],
                        swiftSettings: [
                            .unsafeFlags([
                                "-Xfrontend", "-debug-time-function-bodies",
                                "-Xfrontend", "-debug-time-expression-type-checking",
                            ])
                        ]),
                ],
                swiftLanguageModes: [.v6]
            )

            """
        try Self.writeIfChanged(manifest, to: Self.package.appendingPathComponent("Package.swift"))
        for (target, files) in sources {
            let folder = Self.package.appendingPathComponent("Sources/\(target)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for stale in try FileManager.default.contentsOfDirectory(atPath: folder.path) where files[stale] == nil {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(stale))
            }
            for (name, text) in files { try Self.writeIfChanged(text, to: folder.appendingPathComponent(name)) }
        }
    }

    private static func writeIfChanged(_ text: String, to url: URL) throws {
        if (try? String(contentsOf: url, encoding: .utf8)) == text { return }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    /// One `swift build` of `target`, after touching the sources of `touching` (only the file `only` when given):
    /// its seconds. A failed build (the generated code does not compile) throws with the compiler's last lines.
    private func build(_ configuration: String, target: String?, touching: String?, only: String? = nil) throws
        -> Double
    {
        if let touching { try Self.touch(touching, only: only) }
        let (seconds, status, log) = try Generators.timed(
            URL(fileURLWithPath: "/usr/bin/env"), Self.arguments(configuration, target: target), in: Self.folder)
        guard status == 0 else { throw BenchError("swift build -c \(configuration) \(target ?? "") failed:\n\(log)") }
        return seconds
    }

    static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    /// A line printed at once (a run cut short by a time limit still shows what it measured).
    static func progress(_ line: String) {
        print(line)
        fflush(nil)
    }

    static func arguments(_ configuration: String, target: String?) -> [String] {
        ["swift", "build", "-c", configuration, "--package-path", package.path, "--scratch-path", scratch.path]
            + (target.map { ["--target", $0] } ?? [])
    }

    /// Sets the modification date of every source of `target` (of the file `only` alone when given) to now.
    static func touch(_ target: String, only: String? = nil) throws {
        let folder = package.appendingPathComponent("Sources/\(target)")
        let names = try only.map { [$0] } ?? FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names {
            try FileManager.default.setAttributes(
                [.modificationDate: Date()], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
    }
}

/// Counting lines of Swift the same way for generated and hand-written code.
enum Lines {
    /// Lines that are not blank and not only a `//` comment; a multi-line string literal (`"""` … `"""`) counts as
    /// one line, so a document pasted over many lines weighs what the generator's one-line string does.
    static func count<S: Sequence>(_ texts: S) -> Int where S.Element == String {
        var total = 0
        for text in texts {
            var inLiteral = false
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let line = raw.trimmingCharacters(in: .whitespaces)
                let quotes = line.components(separatedBy: "\"\"\"").count - 1
                if inLiteral {
                    if quotes % 2 == 1 { inLiteral = false }
                    continue
                }
                if quotes % 2 == 1 { inLiteral = true }
                if line.isEmpty || line.hasPrefix("//") { continue }
                total += 1
            }
        }
        return total
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

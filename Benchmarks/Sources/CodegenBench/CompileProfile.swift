import BenchKit
import Foundation

/// Where the generated module's compile time goes (`CodegenBench --only-compile --profile`): `Profiled200`, the 200
/// operations compiled with the frontend's type-checking timers on (`-debug-time-function-bodies`,
/// `-debug-time-expression-type-checking`), is rebuilt afresh and the timers' lines summed: by kind of function body
/// (what the compiler synthesizes, `<invalid loc>`, apart), by file, the slowest bodies. SwiftPM repeats a job's
/// output, so each body counts once (its largest time). The whole output is kept in
/// `Benchmarks/.build-codegen/profile-<configuration>.log`.
enum CompileProfile {
    static func run(_ configuration: String) throws {
        try CompileSize.touch("Profiled200")
        let logURL = CompileSize.folder.appendingPathComponent("profile-\(configuration).log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        let start = ContinuousClock.now
        let (status, output) = try Peers.capture(
            URL(fileURLWithPath: "/usr/bin/env"), CompileSize.arguments(configuration, target: "Profiled200"),
            in: CompileSize.folder, errors: log)
        let seconds = (ContinuousClock.now - start).seconds
        try log.write(contentsOf: Data(output.utf8))
        guard status == 0 else { throw BenchError("the profiled build failed; see \(logURL.path)") }
        let text = try String(contentsOf: logURL, encoding: .utf8)
        // `12.3ms<TAB>file:line:column<TAB>what` for a body, without the last field for an expression.
        var bodies: [String: (ms: Double, location: String, name: String)] = [:]
        var expressions: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 2, fields[0].hasSuffix("ms"), let ms = Double(fields[0].dropLast(2)) else { continue }
            let location = (fields[1] as NSString).lastPathComponent
            if fields.count >= 3 {
                let key = fields[1] + "\t" + fields[2]
                if ms >= bodies[key]?.ms ?? -1 { bodies[key] = (ms, location, fields[2]) }
            } else {
                expressions[fields[1]] = max(expressions[fields[1]] ?? 0, ms)
            }
        }
        func file(_ location: String) -> String {
            location.hasPrefix("<invalid") ? "synthesized by the compiler" : String(location.prefix { $0 != ":" })
        }
        func kind(_ name: String) -> String {
            let kinds = [
                ("init(from:)", "init(from:) (Decodable)"), ("encode(to:)", "encode(to:) (Encodable)"),
                ("hash(into:)", "hash(into:) (Hashable)"), ("static method", "== (Equatable)"),
                ("init(", "memberwise and other inits"), ("getter", "getters"), ("setter", "setters"),
                ("_modify", "setters"),
            ]
            return kinds.first { name.contains($0.0) }?.1 ?? "other"
        }
        let all = Array(bodies.values)
        let bodyTotal = all.reduce(0) { $0 + $1.ms }
        print("")
        print(
            "Profile (\(configuration)): Profiled200 built afresh in \(CompileSize.seconds(seconds)) with the timers "
                + "on (\(logURL.path))")
        print(
            String(
                format: "function bodies type-checked: %d, %.0f ms in all; expressions timed: %d, %.0f ms", all.count,
                bodyTotal, expressions.count, expressions.values.reduce(0, +)))
        func top(_ title: String, _ count: Int, _ key: ((ms: Double, location: String, name: String)) -> String) {
            var groups: [String: (ms: Double, count: Int)] = [:]
            for body in all {
                groups[key(body), default: (0, 0)].ms += body.ms
                groups[key(body), default: (0, 0)].count += 1
            }
            print(title)
            for (name, group) in groups.sorted(by: { $0.value.ms > $1.value.ms }).prefix(count) {
                print(String(format: "  %8.0f ms  %6d  ", group.ms, group.count) + name)
            }
        }
        top("by kind of body (ms, bodies):", 10) { kind($0.name) }
        top("by file (ms, bodies):", 8) { file($0.location) }
        print("slowest bodies:")
        for body in all.sorted(by: { $0.ms > $1.ms }).prefix(10) {
            print(String(format: "  %8.1f ms  ", body.ms) + "\(body.location)  \(body.name.prefix(120))")
        }
    }
}

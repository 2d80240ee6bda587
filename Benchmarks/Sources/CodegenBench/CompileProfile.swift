import BenchKit
import Foundation

/// Where the generated module's compile time goes (`CodegenBench --only-compile --profile`): `Profiled200`, the 200
/// operations compiled with the frontend's timers on (`-debug-time-function-bodies`,
/// `-debug-time-expression-type-checking`, `-driver-time-compilation`), is rebuilt afresh and the timers' lines are
/// summed: by file, by kind of function body, the slowest bodies and expressions. The whole output is kept in
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
            URL(fileURLWithPath: "/usr/bin/env"), CompileSize.arguments(configuration, target: "Profiled200") + ["-v"],
            in: CompileSize.folder, errors: log)
        let seconds = (ContinuousClock.now - start).seconds
        try log.write(contentsOf: Data(output.utf8))
        guard status == 0 else { throw BenchError("the profiled build failed; see \(logURL.path)") }
        let text = try String(contentsOf: logURL, encoding: .utf8)
        var bodies: [(ms: Double, location: String, name: String)] = []
        var expressions: [(ms: Double, location: String)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 2, fields[0].hasSuffix("ms"), let ms = Double(fields[0].dropLast(2)),
                fields[1].contains(".swift:")
            else { continue }
            let location = (fields[1] as NSString).lastPathComponent
            if fields.count >= 3 {
                bodies.append((ms, location, fields[2]))
            } else {
                expressions.append((ms, location))
            }
        }
        func file(_ location: String) -> String { String(location.prefix { $0 != ":" }) }
        func kind(_ name: String) -> String {
            for word in ["init(from:)", "encode(to:)", "init(", "getter", "setter", "hash(into:)", "==", "static"]
            where name.contains(word) { return word }
            return "other"
        }
        let bodyTotal = bodies.reduce(0) { $0 + $1.ms }
        let expressionTotal = expressions.reduce(0) { $0 + $1.ms }
        print("")
        print(String(format: "Profile (%@): Profiled200 built afresh in %.1f s with the timers on (%@)",
            configuration, seconds, logURL.path))
        print(String(format: "function bodies type-checked: %d, %.0f ms in all; expressions timed: %d, %.0f ms",
            bodies.count, bodyTotal, expressions.count, expressionTotal))
        func top(_ groups: [String: (Double, Int)], _ title: String, _ count: Int) {
            print(title)
            for (name, (ms, n)) in groups.sorted(by: { $0.value.0 > $1.value.0 }).prefix(count) {
                print(String(format: "  %8.0f ms  %5d  %@", ms, n, name))
            }
        }
        func grouped(_ key: (String, String) -> String) -> [String: (Double, Int)] {
            bodies.reduce(into: [:]) { groups, body in
                let name = key(body.location, body.name)
                groups[name, default: (0, 0)].0 += body.ms
                groups[name, default: (0, 0)].1 += 1
            }
        }
        top(grouped { kind($1) }, "by kind of body (ms, count):", 10)
        top(grouped { location, _ in file(location) }, "by file (ms, bodies):", 8)
        print("slowest bodies:")
        for body in bodies.sorted(by: { $0.ms > $1.ms }).prefix(10) {
            print(String(format: "  %8.1f ms  %@  %@", body.ms, body.location, body.name))
        }
        print("driver jobs (-driver-time-compilation), as printed:")
        for line in text.split(separator: "\n") where line.contains("Compiling") || line.contains("Emitting module")
            || line.contains("Wall Time") || line.contains("Total")
        {
            print("  " + line.trimmingCharacters(in: .whitespaces).prefix(160))
        }
    }
}

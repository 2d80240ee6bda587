import Foundation

/// checkload (Benchmarks/loadgen/checkload.c), the load generator of the query turns since issue 25's seventh
/// session: closed loop and keep-alive like wrk, and every answer checked like wrk's Lua hook (status 200, the
/// exact body, and `Access-Control-Allow-Origin` where the turn asks for it), but by comparing the bytes it has
/// read instead of building a Lua table of the headers and a Lua string of the body for each answer. On this
/// two-core machine the generator shares the cores with the server it measures, so the CPU it spends per answer is
/// taken from every contender's rate; checkload spends about a third less than wrk with the hook (measured in
/// Docs/Performance.md). Mutation turns stay on wrk: their request changes per request.
enum CheckLoad {
    /// Builds checkload from its C source into `directory` with the system's `cc`; nil (with a note) when there is
    /// no compiler or the build fails, and wrk then drives the query turns too.
    static func build(root: URL, directory: URL) async -> String? {
        let source = root.appendingPathComponent("Benchmarks/loadgen/checkload.c").path
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard
            let compiler = paths.map({ "\($0)/cc" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            FileHandle.standardError.write(Data("note: no cc on PATH: wrk drives the query turns\n".utf8))
            return nil
        }
        let output = directory.appendingPathComponent("checkload").path
        do {
            _ = try await WrkLoad.capture(compiler, ["-O2", "-pthread", "-o", output, source])
            return output
        } catch {
            FileHandle.standardError.write(
                Data("note: checkload did not build (\(error)): wrk drives the query turns\n".utf8))
            return nil
        }
    }

    /// One query turn: the request wrk would send for `script` (its header set, `Host`, `Content-Type` and
    /// `Content-Length`), `connections` connections on one thread for `seconds`. One thread, not wrk's two: on
    /// this two-core machine a second generator thread preempts the server it measures (GQLDevServer at 16
    /// connections gets about a fifth more queries per second with one thread, and the generator spends less CPU
    /// per answer: Benchmarks/checkload-threads.sh, Docs/Performance.md). Strawberry does at least as well with
    /// one; nginx does not (its 16-connection figure is then the generator's limit).
    static func run(
        _ executable: String, url: String, connections: Int, seconds: Int, body: String, script: WrkLoad.Script,
        directory: URL
    ) async throws -> Throughput {
        guard let target = URL(string: url), let host = target.host, let port = target.port else {
            throw WrkLoad.Failure(description: "checkload needs a URL with a host and a port, not \(url)")
        }
        let path = target.path.isEmpty ? "/" : target.path
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
        for line in script.headers.lines { head += "\(line.name): \(line.value)\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n\r\n"
        let id = UUID().uuidString
        let requestFile = directory.appendingPathComponent("checkload-\(id).request")
        let bodyFile = directory.appendingPathComponent("checkload-\(id).expected")
        try Data((head + body).utf8).write(to: requestFile)
        try Data(script.expected.utf8).write(to: bodyFile)
        defer {
            try? FileManager.default.removeItem(at: requestFile)
            try? FileManager.default.removeItem(at: bodyFile)
        }
        var arguments = [
            "-c", "\(connections)", "-t", "1", "-d", "\(seconds)", "-r", requestFile.path, "-e",
            bodyFile.path,
        ]
        if let origin = script.allowOrigin { arguments += ["-a", "Access-Control-Allow-Origin: \(origin)"] }
        arguments += [host, "\(port)"]
        return try WrkLoad.summary(try await WrkLoad.capture(executable, arguments), from: "checkload")
    }
}

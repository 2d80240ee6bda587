import Foundation

/// Throughput measured by wrk, an outside load generator written in C, so that the client is not the bottleneck:
/// ServerBench's own Swift client answers fewer requests per second on loopback than the servers and the limit
/// can answer. wrk still checks every answer: a Lua `response` hook compares each body with the exact text the
/// checking client validated before the turn (a mutation's answer with its key masked, since each request creates
/// its own object), and a wrong body or a non-200 status counts as a failure, not as an operation.
struct WrkLoad {
    /// Why a wrk turn could not be measured.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What one turn sends and what every answer must be.
    struct Script {
        /// Lua that sets `wrk.body` (or a `request` function) for the workload.
        var request: String
        /// The exact answer, after `masked` where the answer carries a per-request key.
        var expected: String
        /// Whether answers are compared after masking the first `"objectId": "…"` value.
        var masked: Bool
        /// The header lines every request carries besides `Content-Type`.
        var headers = HeaderSet.bare
        /// The `Access-Control-Allow-Origin` every answer must carry (GQLDevServer's answers to the browser's
        /// requests), or nil.
        var allowOrigin: String?
        /// A query turn's body, the same for every request (nil for a mutation, whose body changes per request).
        var body: String?
    }

    let executable: String
    let directory: URL
    /// checkload (Benchmarks/loadgen), built for this run, which then drives the query turns instead of wrk.
    var checkload: String?

    /// wrk on the `PATH`, or nil.
    static func find() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/wrk" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A query turn: the same body every time, the same answer expected.
    static func query(body: String, expected: String) -> Script {
        Script(request: "wrk.body = \(lua(body))", expected: expected, masked: false, body: body)
    }

    /// A mutation turn: each request creates `createBody(prefix-thread-counter)`.
    static func mutation(prefix: String, expected: String) -> Script {
        let template = Operations.createBody("@KEY@", number: 1)
        let parts = template.components(separatedBy: "@KEY@")
        let request = """
            counter = 0
            request = function()
              counter = counter + 1
              local key = \(lua(prefix)) .. "-" .. tid .. "-" .. counter
              return wrk.format(nil, nil, nil, \(lua(parts.first ?? "")) .. key .. \(lua(parts.last ?? "")))
            end
            """
        return Script(request: request, expected: mask(expected), masked: true)
    }

    /// Runs one turn: `connections` connections on `threads` wrk threads for `seconds`.
    func run(url: String, connections: Int, seconds: Int, script: Script) async throws -> Throughput {
        if let checkload, let body = script.body {
            return try await CheckLoad.run(
                checkload, url: url, connections: connections, seconds: seconds, body: body, script: script,
                directory: directory)
        }
        let file = directory.appendingPathComponent("wrk-\(UUID().uuidString).lua")
        try Self.lua(script).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let threads = min(connections, 2)
        let output = try await Self.capture(
            executable,
            ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--timeout", "10s", "-s", file.path, url])
        return try Self.summary(output, from: "wrk")
    }

    /// The throughput in the `SERVERBENCH requests=… seconds=… wrong=… errors=…` line that wrk's script and
    /// checkload print.
    static func summary(_ output: String, from generator: String) throws -> Throughput {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("SERVERBENCH ") }) else {
            throw Failure(description: "\(generator) printed no summary: \(output.suffix(500))")
        }
        var fields: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
        }
        guard let requests = fields["requests"], let seconds = fields["seconds"], let wrong = fields["wrong"],
            let errors = fields["errors"]
        else { throw Failure(description: "\(generator)'s summary is incomplete: \(line)") }
        // A wrong body is already a failure; a socket error or non-200 status is counted by wrk itself.
        let failures = Int(wrong) + Int(errors)
        return Throughput(operations: max(0, Int(requests) - Int(wrong)), failures: failures, seconds: seconds)
    }

    /// The answer with its first `"objectId": "…"` value replaced by `?`, as the Lua hook masks it.
    static func mask(_ text: String) -> String {
        guard let range = text.range(of: #""objectId":\s*"[^"]*""#, options: .regularExpression) else { return text }
        return text.replacingCharacters(in: range, with: #""objectId":"?""#)
    }

    /// The whole Lua script: the workload's request, the check of every answer, and a summary line for all threads.
    private static func lua(_ script: Script) -> String {
        """
        wrk.method = "POST"
        wrk.headers["Content-Type"] = "application/json"
        \(script.headers.lua)\(script.request)
        local expected = \(lua(script.expected))
        wrong = 0
        local threads = {}
        local next_id = 0
        function setup(thread)
          next_id = next_id + 1
          thread:set("tid", next_id)
          table.insert(threads, thread)
        end
        function response(status, headers, body)
          if status ~= 200 then return end
          \(script.allowOrigin.map(allowOriginCheck) ?? "")
          \(script.masked ? #"body = string.gsub(body, '"objectId":%s*"[^"]*"', '"objectId":"?"', 1)"# : "")
          if body ~= expected then wrong = wrong + 1 end
        end
        function done(summary, latency, requests)
          local wrong_total = 0
          for _, thread in ipairs(threads) do wrong_total = wrong_total + thread:get("wrong") end
          local e = summary.errors
          io.write(string.format("SERVERBENCH requests=%d seconds=%.6f wrong=%d errors=%d\\n", summary.requests,
            summary.duration / 1e6, wrong_total, e.connect + e.read + e.write + e.timeout + e.status))
        end
        """
    }

    /// Lua that counts an answer without `Access-Control-Allow-Origin: origin` as wrong (header names in any case).
    private static func allowOriginCheck(_ origin: String) -> String {
        """
        local allowed = nil
          for name, value in pairs(headers) do
            if string.lower(name) == "access-control-allow-origin" then allowed = value end
          end
          if allowed ~= \(lua(origin)) then wrong = wrong + 1; return end
        """
    }

    /// A Lua string literal of `text` (three-digit decimal escapes for everything but plain printable ASCII).
    static func lua(_ text: String) -> String {
        var literal = "\""
        for byte in text.utf8 {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                literal.append(Character(Unicode.Scalar(byte)))
            } else {
                literal += "\\" + String(format: "%03d", byte)  // three digits: a digit after it is not read into it
            }
        }
        return literal + "\""
    }

    /// Runs `executable arguments…` to the end and returns its standard output (standard error passes through).
    static func capture(_ executable: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = stdout.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: data)
            }
        }
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(executable) exited with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

import BenchKit
import Foundation
import GQLEmulators

/// An S3 server in a child process, stopped by closing its input; it prints `READY {"port": N}` once it listens.
/// Two of them: moto's S3 server without authentication (Tests/Interop/s3_peer.py --no-auth), and the project's own
/// storage emulator (``emulator(directory:)``).
///
/// moto builds the whole object for every GET, ranged or not (moto/s3/responses.py reads `key.value`), so a client
/// that fetches an object in ranged GETs pays that once per range there and not on S3. The emulator streams objects
/// to and from disk and serves ranges natively, checking every signature as S3 does.
final class S3Peer {
    /// The peer's READY line.
    struct Info: Decodable {
        var port: Int
    }

    let port: Int
    private let process: Process
    private let input: Pipe

    /// moto's S3 server without authentication.
    convenience init() throws {
        try self.init(Peers.python, [Peers.root.appendingPathComponent("Tests/Interop/s3_peer.py").path, "--no-auth"])
    }

    /// GQLStorageEmulator, as `gql-cli serve --storage` runs it, in a fresh process (StorageBench run again with
    /// `--emulator-child DIR`), its objects in `directory`, the benchmark's credentials.
    static func emulator(directory: URL) throws -> S3Peer {
        try S3Peer(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), ["--emulator-child", directory.path])
    }

    private init(_ executable: URL, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "),
            let info = try? JSONDecoder().decode(Info.self, from: Data(text.dropFirst(6).utf8))
        else { throw BenchError("the S3 peer \(arguments.first ?? "") did not start: \(text)") }
        port = info.port
    }

    /// The process's peak resident memory so far (VmHWM), in MiB; nil once it ended.
    var peakResidentMiB: Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return nil }
        return kilobytes / 1024
    }

    /// The CPU time (user and system) the process has used so far, in seconds; nil once it ended.
    var cpuSeconds: Double? {
        // /proc/PID/stat: the command's name is in parentheses (and may hold spaces); utime and stime are the 12th
        // and 13th fields after it, in clock ticks.
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The emulator child's side: serves `arguments[0]` on a free port of 127.0.0.1 with the benchmark's
    /// credentials, prints its READY line, and stops when its input closes.
    static func emulatorChild(_ arguments: [String]) async throws {
        guard arguments.count == 1 else { throw BenchError("usage: --emulator-child DIR") }
        var configuration = GQLStorageEmulator.Configuration()
        configuration.port = 0
        configuration.accessKey = "AKIDBENCHMARK"
        configuration.secretKey = "bench/secret+key"
        configuration.dataFolder = try GQLDataFolder(path: arguments[0])
        let started = try await GQLStorageEmulator(configuration: configuration).start()
        FileHandle.standardOutput.write(Data("READY {\"port\": \(started.port)}\n".utf8))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = FileHandle.standardInput.readDataToEndOfFile()
                done.resume()
            }
        }
        await started.shutdown()
    }
}

/// A server that serves ranges natively: nginx (Debian's `nginx-light`) serving one file at `/BUCKET/KEY` from the
/// disk (sendfile, a worker per core), as a static-file server or a CDN in front of S3 would. It answers GET, HEAD and
/// `Range:` requests, which is all a download needs; it ignores the signature: the floor of any S3 server here.
final class FileServer {
    let port: Int
    let version: String
    private let process: Process

    init(directory: URL, file: URL, bucket: String, key: String) async throws {
        guard let executable = Nginx.find() else {
            throw BenchError("nginx is not installed (apt install nginx-light); --servers moto runs without it")
        }
        version = Nginx.version(executable)
        port = try Loopback.freePort()
        let arguments = try Nginx.arguments(
            directory: directory,
            server: """
                    listen 127.0.0.1:\(port);
                    location = /\(bucket)/\(key) { alias \(file.path); default_type application/octet-stream; }
                """,
            http: "  sendfile on;")
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(30)
        while !Loopback.accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                stop()
                throw BenchError("nginx did not listen on port \(port) within 30 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

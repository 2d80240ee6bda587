import BenchKit
import Foundation

/// moto's S3 server without authentication (Tests/Interop/s3_peer.py --no-auth), stopped by closing its input.
/// moto builds the whole object for every GET, ranged or not (moto/s3/responses.py reads `key.value`), so a client
/// that fetches an object in ranged GETs pays that once per range here and not on S3.
final class S3Peer {
    /// The peer's READY line.
    struct Info: Decodable {
        var port: Int
    }

    let port: Int
    private let process: Process
    private let input: Pipe

    init() throws {
        process = Process()
        process.executableURL = Peers.python
        process.arguments = [Peers.root.appendingPathComponent("Tests/Interop/s3_peer.py").path, "--no-auth"]
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
        else { throw BenchError("the S3 peer did not start: \(text)") }
        port = info.port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// A server that serves ranges natively: nginx (Debian's `nginx-light`) serving one file at `/BUCKET/KEY` from the
/// disk (sendfile, a worker per core), as a static-file server or a CDN in front of S3 would. It answers GET, HEAD and
/// `Range:` requests, which is all a download needs; it ignores the signature. No storage emulator of the project's
/// own exists yet (`gql-cli serve`'s emulators are a later issue), so this stands in for "a server that is not moto".
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

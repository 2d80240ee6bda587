import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback limit as issue 10 measures it: nginx (Debian's `nginx-light`) answering the same JSON bytes from a
/// `return 200`, no GraphQL and no application code, set up for speed: a worker per core, no access log and
/// keep-alive connections that are never closed for their request count (nginx's default closes each one after
/// 1,000 requests). Queries are answered on the endpoint, mutations on `PATH/create` (nginx cannot read the body
/// to tell them apart).
enum NginxLimit {
    /// The path mutations are sent to, relative to the query endpoint.
    static let mutationSuffix = "/create"

    /// nginx on the `PATH` or in /usr/sbin, or nil.
    static func find() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return (paths + ["/usr/sbin", "/usr/local/sbin"]).map { "\($0)/nginx" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Writes the configuration into `directory` and returns nginx's arguments; the server listens on `port`.
    static func arguments(directory: URL, port: Int) throws -> [String] {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'" }
        let temporary = directory.appendingPathComponent("nginx-temp").path
        let configuration = """
            worker_processes auto;
            pid \(directory.appendingPathComponent("nginx.pid").path);
            error_log stderr warn;
            events { worker_connections 4096; }
            http {
              access_log off;
              keepalive_requests 100000000;
              keepalive_timeout 60s;
              client_body_temp_path \(temporary);
              server {
                listen 127.0.0.1:\(port) reuseport;
                location = /graphql { default_type application/json; return 200 \(quoted(LimitServer.queryAnswer)); }
                location = /graphql\(mutationSuffix) {
                  default_type application/json; return 200 \(quoted(LimitServer.mutationAnswer));
                }
              }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        return ["-p", directory.path, "-c", file.path, "-g", "daemon off; master_process on;"]
    }

    /// nginx's version line (`nginx/1.22.1`), or `nginx`.
    static func version(_ executable: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-v"]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "nginx" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "nginx"
    }

    /// A loopback port that was free a moment ago (bound, read and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ChildServer.Failure(description: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw ChildServer.Failure(description: "could not bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on the loopback `port`.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

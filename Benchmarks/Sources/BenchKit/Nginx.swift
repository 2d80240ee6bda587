import Foundation

/// nginx from Debian's packages (`apt install nginx-light`), which ServerBench (the loopback limit) and StorageBench
/// (a server of files that serves ranges natively) start as a child with a configuration of their own.
public enum Nginx {
    /// nginx on the `PATH` or in /usr/sbin, or nil.
    public static func find() -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return (paths + ["/usr/sbin", "/usr/local/sbin"]).map { "\($0)/nginx" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// nginx's version line (`nginx/1.22.1`), or `nginx`.
    public static func version(_ executable: String) -> String {
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

    /// Writes `server` (the body of an nginx `server { }` block, `listen` included) into a configuration in
    /// `directory` and returns nginx's arguments: a worker per core, no access log, errors to standard error,
    /// in the foreground.
    public static func arguments(directory: URL, server: String, http: String = "") throws -> [String] {
        let configuration = """
            worker_processes auto;
            pid \(directory.appendingPathComponent("nginx.pid").path);
            error_log stderr warn;
            events { worker_connections 4096; }
            http {
              access_log off;
              client_body_temp_path \(directory.appendingPathComponent("nginx-temp").path);
            \(http)
              server {
            \(server)
              }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        return ["-p", directory.path, "-c", file.path, "-g", "daemon off; master_process on;"]
    }
}

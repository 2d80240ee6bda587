import BenchKit
import Foundation

/// The loopback limit as issue 10 measures it: nginx (Debian's `nginx-light`) answering the same JSON bytes from a
/// `return 200`, no GraphQL and no application code, set up for speed: a worker per core, no access log and
/// keep-alive connections that are never closed for their request count (nginx's default closes each one after
/// 1,000 requests). Queries are answered on the endpoint, mutations on `PATH/create` (nginx cannot read the body
/// to tell them apart).
enum NginxLimit {
    /// The path mutations are sent to, relative to the query endpoint.
    static let mutationSuffix = "/create"

    /// Writes the configuration into `directory` and returns nginx's arguments; the server listens on `port`.
    static func arguments(directory: URL, port: Int) throws -> [String] {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'" }
        return try Nginx.arguments(
            directory: directory,
            server: """
                    listen 127.0.0.1:\(port) reuseport;
                    location = /graphql { default_type application/json; return 200 \(quoted(LimitServer.queryAnswer)); }
                    location = /graphql\(mutationSuffix) {
                      default_type application/json; return 200 \(quoted(LimitServer.mutationAnswer));
                    }
                """,
            http: """
                  keepalive_requests 100000000;
                  keepalive_timeout 60s;
                """)
    }
}

import AsyncHTTPClient
import BenchKit
import Foundation
import GQLCore

/// One server under test, running in its own child process, and the client that talks to it.
struct Contender: Sendable {
    enum Kind: Sendable, Equatable {
        /// GQLDevServer, the server `gql-cli serve` runs (this executable with `--serve`).
        case devServer
        /// Strawberry GraphQL on uvicorn with `workers` processes.
        case strawberry(workers: Int)
        /// The bare Hummingbird route: no GraphQL, fixed answers.
        case limit
        /// nginx answering the same fixed bytes from a `return 200`: the loopback limit of issue 10.
        case nginx

        /// The names `--only` takes.
        static let allNames: Set<String> = ["gqldevserver", "strawberry", "limit", "nginx"]
    }

    let name: String
    let kind: Kind
    let http: GraphQLHTTP
    /// Where mutations are sent: the endpoint, except for nginx (which cannot tell them apart by their body).
    let mutationHTTP: GraphQLHTTP
    let webSocket: String
    /// The child's process id (for its memory figures).
    let pid: Int32
    /// Short and unique among the contenders: part of every key it creates.
    let tag: String

    /// Whether this is one of the limits (fixed answers, no GraphQL).
    var isLimit: Bool { kind == .limit || kind == .nginx }

    /// The exact answer to `getBody("seed-\(n)")`.
    func getAnswer(_ n: Int) -> GQLValue { isLimit ? Self.limitQuery : Self.seedAnswers[n] }

    /// The exact answer to `createBody(key, number: number)`.
    func createAnswer(_ key: String, number: Int) -> GQLValue {
        isLimit ? Self.limitMutation : Operations.createAnswer(key, number: number)
    }

    static let seedAnswers = (0..<100).map { Operations.getAnswer("seed-\($0)", number: $0) }
    static let limitQuery = (try? GQLValue(json: LimitServer.queryAnswer)) ?? .null
    static let limitMutation = (try? GQLValue(json: LimitServer.mutationAnswer)) ?? .null
}

/// The running child processes; `stop()` ends them all.
final class ContenderSet {
    private(set) var contenders: [Contender] = []
    private(set) var configurations: [String: String] = [:]
    private var children: [ChildServer] = []
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ServerBench-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// GQLDevServer with every document on GraphQLSwift's executor, for the plans-off row only (not a contender of
    /// the other rows).
    private(set) var plansOff: Contender?

    /// Starts one contender and adds it (or, with `plansOff`, keeps it for the plans-off row).
    func start(
        _ kind: Contender.Kind, name: String, tag: String, executable: URL, arguments: [String], client: HTTPClient,
        environment: [String: String] = [:], plansOff: Bool = false
    ) async throws {
        let child = try await ChildServer(
            name: name, executable: executable, arguments: arguments, environment: environment)
        add(child, kind, tag, client)
        if plansOff { self.plansOff = contenders.removeLast() }
    }

    /// Starts nginx as the loopback limit and adds it.
    func startNginx(executable: String, client: HTTPClient) async throws {
        let port = try Loopback.freePort()
        let child = try await ChildServer(
            name: "nginx", executable: URL(fileURLWithPath: executable),
            arguments: try NginxLimit.arguments(directory: directory, port: port), port: port, path: "/graphql",
            configuration: "\(Nginx.version(executable)), return 200 of the same bytes, a worker per core, "
                + "access_log off, keep-alive without a request cap")
        add(child, .nginx, "n", client, mutationSuffix: NginxLimit.mutationSuffix)
    }

    private func add(
        _ child: ChildServer, _ kind: Contender.Kind, _ tag: String, _ client: HTTPClient, mutationSuffix: String = ""
    ) {
        let name = child.name
        children.append(child)
        if let configuration = child.configuration { configurations[name] = configuration }
        contenders.append(
            Contender(
                name: name, kind: kind, http: GraphQLHTTP(client: client, url: child.http),
                mutationHTTP: GraphQLHTTP(client: client, url: child.http + mutationSuffix), webSocket: child.webSocket,
                pid: child.pid, tag: tag))
    }

    func stop() async {
        for child in children { await child.stop() }
        children.removeAll()
        try? FileManager.default.removeItem(at: directory)
    }
}

import ArgumentParser
import Foundation
import GQLNet

/// The options `query`, `mutate` and `subscribe` share: where the server is, how to talk to it, and the
/// credentials, turned into a ``GQLServer``.
///
/// ```
/// gql-cli query --url http://127.0.0.1:4000/graphql --appsync-key da2-local "{ listObjects { items { objectId } } }"
/// gql-cli subscribe --ws-url ws://127.0.0.1:4000/graphql --protocol graphql-ws "subscription { onCreateObjects { objectId } }"
/// ```
struct ClientOptions: ParsableArguments {
    /// The `--protocol` values, the WebSocket subprotocols GQLServer speaks.
    enum SocketProtocol: String, ExpressibleByArgument, CaseIterable {
        case graphqlTransportWS = "graphql-transport-ws"
        case graphqlWS = "graphql-ws"
        case appsync

        var webSocketProtocol: GQLServer.WebSocketProtocol {
            switch self {
            case .graphqlTransportWS: .graphqlTransportWS
            case .graphqlWS: .graphqlWS
            case .appsync: .appSync
            }
        }
    }

    @Option(help: ArgumentHelp("The HTTP endpoint queries and mutations are posted to.", valueName: "url"))
    var url: String?

    @Option(
        name: .customLong("ws-url"),
        help: ArgumentHelp(
            "The WebSocket endpoint. Alone (no --url), queries and mutations travel on it too.", valueName: "url"))
    var webSocketURL: String?

    @Option(
        name: .customLong("protocol"),
        help: ArgumentHelp(
            "The WebSocket subprotocol (default: graphql-transport-ws; appsync with --appsync-key).",
            valueName: "name"))
    var socketProtocol: SocketProtocol?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "A header sent with every request and on the WebSocket handshake (repeatable).", valueName: "name:value"))
    var headers: [String] = []

    @Option(
        name: .customLong("appsync-key"),
        help: ArgumentHelp(
            "An AWS AppSync API key: x-api-key on HTTP, AppSync real-time authorization on the WebSocket.",
            valueName: "key"))
    var appSyncKey: String?

    @Option(
        name: .customLong("hasura-secret"),
        help: ArgumentHelp(
            "A Hasura admin secret: x-hasura-admin-secret on HTTP, the handshake and connection_init.",
            valueName: "secret"))
    var hasuraSecret: String?

    @Option(
        help: ArgumentHelp(
            "Give up after this many seconds (a request; for subscribe, connecting). Default 30.",
            valueName: "seconds"))
    var timeout: Double?

    func validate() throws {
        guard url != nil || webSocketURL != nil else {
            throw ValidationError("give the server's address: --url, --ws-url or both")
        }
        for (name, value) in [("--url", url), ("--ws-url", webSocketURL)] {
            guard let value else { continue }
            guard let components = URLComponents(string: value), components.scheme != nil, components.host != nil
            else {
                throw ValidationError("\(name) must be an absolute URL such as http://127.0.0.1:4000/graphql")
            }
        }
        if let timeout, !(timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout must be a number of seconds above 0 (at most 86400)")
        }
        if appSyncKey != nil, hasuraSecret != nil {
            throw ValidationError("--appsync-key and --hasura-secret cannot be used together")
        }
        if appSyncKey != nil {
            guard url != nil else { throw ValidationError("--appsync-key needs --url, the AppSync API endpoint") }
            if let socketProtocol, socketProtocol != .appsync {
                throw ValidationError("--appsync-key speaks the appsync protocol, not \(socketProtocol.rawValue)")
            }
        }
        if socketProtocol == .appsync {
            guard url != nil else { throw ValidationError("--protocol appsync needs --url, the AppSync API endpoint") }
            guard hasuraSecret == nil else { throw ValidationError("--hasura-secret does not apply to AppSync") }
        }
        _ = try parsedHeaders()
    }

    /// `--header name:value` pairs; the value is never quoted back in a message, it may be a credential.
    func parsedHeaders() throws -> [String: String] {
        var result: [String: String] = [:]
        for (index, header) in headers.enumerated() {
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("--header number \(index + 1) has no ':'; write it as name:value")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else {
                throw ValidationError("--header number \(index + 1) has no usable name before ':'")
            }
            result[name] = value
        }
        return result
    }

    /// The values error messages must not show: the key, the secret and every header value.
    var secrets: [String] {
        var secrets = [appSyncKey, hasuraSecret].compactMap { $0 }
        secrets += ((try? parsedHeaders()) ?? [:]).values.filter { !$0.isEmpty }
        return secrets
    }

    /// The server the options describe.
    ///
    /// - Parameter subscribing: whether a WebSocket is needed: without --ws-url it is derived from --url (same
    ///   path, `ws`/`wss` scheme).
    func makeServer(subscribing: Bool) throws -> GQLServer {
        let headers = try parsedHeaders()
        var configuration = GQLServer.Configuration()
        if let timeout {
            let duration = Duration.milliseconds(Int64((timeout * 1000).rounded(.up)))
            configuration.timeout = duration
            configuration.connectTimeout = duration
        }
        // A command line that lost its server should say so rather than retry for ever.
        configuration.reconnect = .init(maximumAttempts: 5)

        if let appSyncKey, let url {
            return GQLServer(AppSync: url, key: appSyncKey, realtime: webSocketURL, configuration: configuration)
        }
        if let hasuraSecret, let url, usesHasuraDefaults {
            return GQLServer(Hasura: url, secret: hasuraSecret, configuration: configuration)
        }
        let socketURL = webSocketURL ?? (subscribing ? url.map { GQLServer.webSocketURL(forHTTP: $0) } : nil)
        var allHeaders = headers
        var payload: GQLServer.ConnectionPayload?
        if let hasuraSecret {
            allHeaders["x-hasura-admin-secret"] = hasuraSecret
            payload = { ["headers": ["x-hasura-admin-secret": .string(hasuraSecret)]] }
        }
        if socketProtocol == .appsync, let url {
            return GQLServer(AppSync: url, key: nil, realtime: webSocketURL, configuration: configuration)
        }
        let kind = (socketProtocol ?? .graphqlTransportWS).webSocketProtocol
        guard let socketURL else {
            guard let url else { throw ValidationError("give the server's address: --url, --ws-url or both") }
            return GQLServer(HTTP: url, headers: allHeaders, configuration: configuration)
        }
        return GQLServer(
            HTTP: url, WebSocket: socketURL, protocol: kind, headers: allHeaders, configuration: configuration,
            connectionPayload: payload)
    }

    /// The headers to send with each call: for an AppSync server, whose initializer takes none, the --header
    /// pairs travel with each HTTP request (the real-time WebSocket carries AppSync's own authorization).
    func callHeaders() throws -> [String: String] {
        appSyncKey != nil || socketProtocol == .appsync ? try parsedHeaders() : [:]
    }

    /// Whether `GQLServer(Hasura:secret:)` fits: a secret and an HTTP endpoint, no WebSocket choices and no other
    /// headers (which it has no place for).
    private var usesHasuraDefaults: Bool {
        hasuraSecret != nil && url != nil && webSocketURL == nil && socketProtocol == nil && headers.isEmpty
    }

    /// Whether operations go over the WebSocket: only --ws-url was given.
    var isSocketOnly: Bool { url == nil }
}

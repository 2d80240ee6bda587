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

    @Option(
        help: ArgumentHelp(
            "The HTTP endpoint queries and mutations are posted to; a ws/wss URL is the WebSocket endpoint instead "
                + "(as --ws-url).", valueName: "url"))
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

    @Flag(
        help: ArgumentHelp(
            "Authorize as the user `gql-cli auth signin` signed in: Authorization: Bearer <access token>, refreshed "
                + "before it expires and after a 401."))
    var auth = false

    @Option(
        help: ArgumentHelp("The token file --auth reads (default: as gql-cli auth); implies --auth.", valueName: "path")
    )
    var authTokenFile: String?

    func validate() throws {
        guard url != nil || webSocketURL != nil else {
            throw ValidationError("give the server's address: --url, --ws-url or both")
        }
        try Self.checkURL(url, option: "--url", schemes: ["http", "https", "ws", "wss"])
        try Self.checkURL(webSocketURL, option: "--ws-url", schemes: ["ws", "wss", "http", "https"])
        if url != nil, httpURL == nil, webSocketURL != nil {
            throw ValidationError("--url is a ws/wss URL and --ws-url is given too: give the WebSocket endpoint once")
        }
        if let timeout, !(timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout must be a number of seconds above 0 (at most 86400)")
        }
        if auth || authTokenFile != nil, hasuraSecret != nil {
            throw ValidationError("--auth and --hasura-secret cannot be used together")
        }
        if appSyncKey != nil, hasuraSecret != nil {
            throw ValidationError("--appsync-key and --hasura-secret cannot be used together")
        }
        if let appSyncKey {
            guard httpURL != nil else { throw ValidationError("--appsync-key needs --url, the AppSync API endpoint") }
            if let socketProtocol, socketProtocol != .appsync {
                throw ValidationError("--appsync-key speaks the appsync protocol, not \(socketProtocol.rawValue)")
            }
            try Self.checkFieldValue(appSyncKey, option: "--appsync-key")
        }
        if let hasuraSecret { try Self.checkFieldValue(hasuraSecret, option: "--hasura-secret") }
        if socketProtocol == .appsync {
            guard httpURL != nil else {
                throw ValidationError("--protocol appsync needs --url, the AppSync API endpoint (http or https)")
            }
            guard hasuraSecret == nil else { throw ValidationError("--hasura-secret does not apply to AppSync") }
        }
        _ = try parsedHeaders()
    }

    /// Checks that `value`, when given, is an absolute URL of one of `schemes` with a host and no user information;
    /// the URL itself is never quoted back (its user information may be a password).
    private static func checkURL(_ value: String?, option: String, schemes: Set<String>) throws {
        guard let value else { return }
        let allowed = schemes.sorted().joined(separator: ", ")
        guard let components = URLComponents(string: value), let scheme = components.scheme?.lowercased(),
            schemes.contains(scheme)
        else {
            throw ValidationError("\(option) must be an absolute URL with one of the schemes \(allowed)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ValidationError("\(option) has no host; write it as \(scheme)://host:port/path")
        }
        guard components.user == nil, components.password == nil else {
            throw ValidationError(
                "\(option) must not carry a user name or password; send credentials with --header instead")
        }
    }

    /// Checks that `value` is a valid HTTP field value (RFC 9110 5.5: visible characters, spaces and tabs); the
    /// message names `option`, never the value, which may be a credential.
    private static func checkFieldValue(_ value: String, option: String) throws {
        let invisible = value.unicodeScalars.contains { scalar in
            if scalar == " " || scalar == "\t" { return false }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
                return true
            default:
                return scalar.properties.isWhitespace && scalar.value < 0x80
            }
        }
        if invisible {
            throw ValidationError(
                "\(option) has a control or invisible character in its value (only visible characters, spaces and "
                    + "tabs are allowed in HTTP headers)")
        }
    }

    /// The characters of an RFC 7230 token, the only ones a header name may have.
    private static let tokenCharacters = Set(
        "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// `--header name:value` pairs; the value is never quoted back in a message, it may be a credential.
    func parsedHeaders() throws -> [String: String] {
        var result: [String: String] = [:]
        for (index, header) in headers.enumerated() {
            let option = "--header #\(index + 1)"
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("\(option) has no ':'; write it as name:value")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ Self.tokenCharacters.contains($0) }) else {
                throw ValidationError(
                    "\(option) has no usable name before ':' (letters, digits and !#$%&'*+-.^_`|~ only)")
            }
            try Self.checkFieldValue(value, option: option)
            result[name] = value
        }
        return result
    }

    /// The values error messages must not show: the key, the secret and the values of the headers that carry
    /// credentials.
    var secrets: [String] {
        var secrets = [appSyncKey, hasuraSecret].compactMap { $0 }
        let headers = (try? parsedHeaders()) ?? [:]
        secrets += headers.filter { Self.credentialHeaders.contains($0.key.lowercased()) }.values.filter { !$0.isEmpty }
        return secrets
    }

    /// The headers whose values are credentials.
    static let credentialHeaders: Set<String> = [
        "authorization", "proxy-authorization", "x-api-key", "x-hasura-admin-secret", "cookie",
    ]

    /// The server the options describe.
    ///
    /// - Parameter subscribing: whether a WebSocket is needed: without --ws-url it is derived from --url (same
    ///   path, `ws`/`wss` scheme).
    /// - Parameter reconnectAttempts: how many failed reconnection attempts in a row end the connection (`nil`:
    ///   never; an acknowledged connection starts the count over).
    func makeServer(subscribing: Bool, reconnectAttempts: Int? = 5) throws -> GQLServer {
        var headers = try parsedHeaders()
        var configuration = GQLServer.Configuration()
        if let timeout {
            let duration = Duration.milliseconds(Int64((timeout * 1000).rounded(.up)))
            configuration.timeout = duration
            configuration.connectTimeout = duration
        }
        configuration.reconnect = .init(maximumAttempts: reconnectAttempts)
        let authorization = auth || authTokenFile != nil ? try AuthOptions.authorization(tokenFile: authTokenFile) : nil
        let url = httpURL
        let webSocketURL = socketURL

        if let url, appSyncKey != nil || socketProtocol == .appsync {
            // The --header pairs (and the key, as x-api-key) go with every HTTP request and into AppSync's
            // real-time authorization.
            if let appSyncKey { headers["x-api-key"] = appSyncKey }
            return GQLServer(
                HTTP: url, WebSocket: webSocketURL ?? GQLServer.realtimeURL(forAppSync: url), protocol: .appSync,
                headers: headers, configuration: configuration, authorization: authorization)
        }
        if let hasuraSecret, let url, usesHasuraDefaults {
            return GQLServer(Hasura: url, secret: hasuraSecret, configuration: configuration)
        }
        var payload: GQLServer.ConnectionPayload?
        if let hasuraSecret {
            headers["x-hasura-admin-secret"] = hasuraSecret
            payload = { ["headers": ["x-hasura-admin-secret": .string(hasuraSecret)]] }
        }
        let kind = (socketProtocol ?? .graphqlTransportWS).webSocketProtocol
        if let socketURL = webSocketURL ?? (subscribing ? url.map { GQLServer.webSocketURL(forHTTP: $0) } : nil) {
            return GQLServer(
                HTTP: url, WebSocket: socketURL, protocol: kind, headers: headers, configuration: configuration,
                connectionPayload: payload, authorization: authorization)
        }
        // validate() makes sure of an endpoint, and a WebSocket one returned above; the unwrap is for the compiler.
        guard let url else { throw ValidationError("give the server's address: --url, --ws-url or both") }
        return GQLServer(HTTP: url, headers: headers, configuration: configuration, authorization: authorization)
    }

    /// Whether `GQLServer(Hasura:secret:)` fits: a secret and an HTTP endpoint, no WebSocket choices and no other
    /// headers (which it has no place for).
    private var usesHasuraDefaults: Bool {
        hasuraSecret != nil && httpURL != nil && socketURL == nil && socketProtocol == nil && headers.isEmpty
    }

    /// --url when it is an HTTP endpoint.
    var httpURL: String? {
        guard let url, let scheme = URLComponents(string: url)?.scheme?.lowercased() else { return nil }
        return scheme == "http" || scheme == "https" ? url : nil
    }

    /// The WebSocket endpoint given: --ws-url, or --url with a ws/wss scheme.
    var socketURL: String? {
        guard webSocketURL == nil, url != nil, httpURL == nil else { return webSocketURL }
        return url
    }

    /// Whether operations go over the WebSocket: no HTTP endpoint was given.
    var isSocketOnly: Bool { httpURL == nil }
}

import Foundation
import GQLCore
import Hummingbird

/// Which of the three WebSocket protocols a connection speaks, decided from its upgrade request.
///
/// - `graphql-transport-ws` offered: the graphql-ws library's protocol (``TransportWSSession``).
/// - `graphql-ws` offered with an AppSync `header` query parameter or a `header-<base64url>` protocol
///   entry: AWS AppSync real-time (``AppSyncSession``).
/// - `graphql-ws` otherwise: Apollo's legacy subscriptions-transport-ws (``LegacyWSSession``).
/// - Anything else: the socket is accepted and closed with 4406.
enum WebSocketFlavor: Equatable {
    case transportWS
    case legacyWS
    /// AppSync, with the decoded `header` JSON (`nil` when it was missing or not base64 JSON).
    case appSync(header: GQLValue?)
    case unsupported

    /// The subprotocol to echo in the 101 response (`nil`: none).
    var subprotocol: String? {
        switch self {
        case .transportWS: "graphql-transport-ws"
        case .legacyWS, .appSync: "graphql-ws"
        case .unsupported: nil
        }
    }

    /// The protocol's name, for the log.
    var name: String {
        switch self {
        case .transportWS: "graphql-transport-ws"
        case .legacyWS: "graphql-ws"
        case .appSync: "AppSync real-time"
        case .unsupported: "no supported subprotocol"
        }
    }

    init(request: Request) {
        let offered = request.headers[values: .secWebSocketProtocol]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if offered.contains("graphql-transport-ws") {
            self = .transportWS
        } else if offered.contains("graphql-ws") {
            if let header = request.uri.queryParameters["header"] {
                self = .appSync(header: Self.decodeJSON(base64: String(header)))
            } else if let entry = offered.first(where: { $0.hasPrefix("header-") }) {
                self = .appSync(header: Self.decodeJSON(base64: String(entry.dropFirst("header-".count))))
            } else {
                self = .legacyWS
            }
        } else {
            self = .unsupported
        }
    }

    /// Decodes standard or URL-safe base64, padded or not, holding JSON text.
    static func decodeJSON(base64 text: String) -> GQLValue? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        normalized = normalized.replacingOccurrences(of: " ", with: "+")  // a '+' decoded as a space
        let remainder = normalized.count % 4
        if remainder > 0 { normalized += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: normalized) else { return nil }
        return try? GQLValue(json: data)
    }
}

import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// What a web page can do to the server (issue 10): nothing, unless its origin is allowed. Each refused request
/// is checked not to have run.
@Suite("GQLDevServer refuses web pages it does not know", .timeLimit(.minutes(1)))
struct BrowserSafetyTests {
    static let mutation = #"{"query":"mutation { createObjects(input: {objectId: \"csrf\"}) { objectId } }"}"#

    @Test("a text/plain POST (no preflight needed) is refused as CSRF and does not run")
    func simpleContentTypeIsRefused() async throws {
        try await withDevServer { _, endpoints in
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
                let outcome = try await httpRequest(
                    endpoints.http, body: Self.mutation, headers: ["Content-Type": type], contentType: nil)
                #expect(outcome.status == 400, "\(type)")
                #expect(outcome.json?["errors"]?[0]?["extensions"]?["code"] == "BAD_REQUEST")
            }
            #expect(try await post(endpoints.http, ["query": .string(ObjectsAPI.list)]).json == ObjectsAPI.listed([]))
            // A header only a preflighted request can carry lets it through.
            let preflighted = try await httpRequest(
                endpoints.http, body: Self.mutation,
                headers: ["Content-Type": "text/plain", "apollo-require-preflight": "true"], contentType: nil)
            #expect(preflighted.status == 200 && preflighted.json?["data"]?["createObjects"] != nil)
        }
    }

    @Test(
        "the CSRF check reads the media type as browsers send it: any case, parameters, spaces; empty is missing",
        arguments: [
            ("text/plain", true), ("Text/Plain; charset=utf-8", true), ("  multipart/form-data ; boundary=x", true),
            ("APPLICATION/X-WWW-FORM-URLENCODED", true), ("", true), (" ; charset=utf-8", true), (nil, true),
            ("application/json", false), ("application/json; charset=utf-8", false), ("text/plainx", false),
            ("text/plai", false), ("application/graphql-response+json", false),
        ] as [(String?, Bool)])
    func simpleContentTypes(contentType: String?, simple: Bool) {
        #expect(BrowserRules.isSimple(contentType) == simple)
    }

    @Test("a request from an origin that is not allowed gets 403 and does not run; a preflight from it gets no CORS")
    func foreignOriginIsRefused() async throws {
        try await withDevServer { _, endpoints in
            let refused = try await httpRequest(
                endpoints.http, body: Self.mutation, headers: ["Origin": "http://evil.example"])
            #expect(refused.status == 403)
            #expect(refused.json?["errors"]?[0]?["extensions"]?["code"] == "FORBIDDEN_ORIGIN")
            let preflight = try await httpRequest(
                endpoints.http, method: "OPTIONS",
                headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "POST"])
            #expect(preflight.status == 403 && preflight.headers["access-control-allow-origin"] == nil)
            #expect(try await post(endpoints.http, ["query": .string(ObjectsAPI.list)]).json == ObjectsAPI.listed([]))
        }
    }

    @Test("an allowed origin gets its preflight answered and Access-Control-Allow-Origin on answers")
    func allowedOrigin() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.allowedOrigins = ["http://app.example"]
        try await withDevServer(configuration) { _, endpoints in
            let preflight = try await httpRequest(
                endpoints.http, method: "OPTIONS",
                headers: [
                    "Origin": "http://app.example", "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type, x-api-key",
                ])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == "http://app.example")
            #expect(preflight.headers["access-control-allow-headers"] == "content-type, x-api-key")
            let answer = try await httpRequest(
                endpoints.http, body: Self.mutation, headers: ["Origin": "http://app.example"])
            #expect(answer.status == 200 && answer.headers["access-control-allow-origin"] == "http://app.example")
            #expect(answer.json?["data"]?["createObjects"]?["objectId"] == "csrf")
        }
    }

    @Test(
        "a WebSocket upgrade from a web origin that is not allowed is refused; an allowed one and non-browsers connect")
    func webSocketOrigin() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.allowedOrigins = ["http://app.example"]
        try await withDevServer(configuration) { _, endpoints in
            let protocols = "graphql-transport-ws"
            await #expect(throws: (any Error).self) {
                _ = try await withWebSocket(
                    endpoints.webSocket, protocols: protocols, headers: ["Origin": "https://evil.example"]
                ) { _ in true }
            }
            for headers in [["Origin": "http://app.example"], [:]] {
                let outcome = try await withWebSocket(endpoints.webSocket, protocols: protocols, headers: headers) {
                    socket in
                    try await socket.send(["type": "connection_init"])
                    return try await socket.receive()
                }
                #expect(outcome.result == ["type": "connection_ack"], "\(headers)")
            }
        }
    }

    @Test("an empty API key or admin secret is refused when the server is made")
    func emptyCredentials() throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = ""
        #expect(throws: GQLError.self) { try GQLDevServer(configuration: configuration) }
        configuration.apiKey = nil
        configuration.adminSecret = ""
        #expect(throws: GQLError.self) { try GQLDevServer(configuration: configuration) }
    }
}

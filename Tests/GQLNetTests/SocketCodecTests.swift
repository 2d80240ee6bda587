import Foundation
import Testing

@testable import GQLNet

/// The wire messages of each WebSocket protocol, both ways.
@Suite("Socket codec")
struct SocketCodecTests {
    static let request: GQLValue = ["query": #"subscription { on(text: "a \"b\"") { id } }"#, "variables": ["n": 1]]

    @Test func transportWSMessages() throws {
        let codec = SocketCodec(kind: .graphqlTransportWS)
        #expect(codec.subprotocol == "graphql-transport-ws")
        #expect(codec.connectionInit(payload: nil) == ["type": "connection_init"])
        #expect(
            codec.connectionInit(payload: ["token": "t"]) == ["type": "connection_init", "payload": ["token": "t"]])
        #expect(
            try codec.start(id: "7", request: Self.request) == [
                "type": "subscribe", "id": "7", "payload": Self.request,
            ])
        #expect(codec.stop(id: "7") == ["type": "complete", "id": "7"])
        #expect(codec.ping == ["type": "ping"])
        #expect(codec.terminate == nil)
        #expect(try codec.decode(#"{"type":"connection_ack"}"#) == .ack(keepAliveTimeout: nil))
        #expect(try codec.decode(#"{"type":"ping","payload":{"a":1}}"#) == .ping(["a": 1]))
        #expect(
            try codec.decode(#"{"type":"next","id":"7","payload":{"data":{"x":1}}}"#)
                == .next(id: "7", ["data": ["x": 1]]))
        #expect(
            try codec.decode(#"{"type":"error","id":"7","payload":[{"message":"no"}]}"#)
                == .error(id: "7", [["message": "no"]]))
        #expect(try codec.decode(#"{"type":"complete","id":"7"}"#) == .complete(id: "7"))
        #expect(try codec.decode(#"{"type":"whatever"}"#) == .unknown("whatever"))
    }

    @Test func legacyGraphQLWSMessages() throws {
        let codec = SocketCodec(kind: .graphqlWS)
        #expect(codec.subprotocol == "graphql-ws")
        #expect(
            try codec.start(id: "1", request: Self.request) == ["type": "start", "id": "1", "payload": Self.request])
        #expect(codec.stop(id: "1") == ["type": "stop", "id": "1"])
        #expect(codec.ping == nil)
        #expect(codec.terminate == ["type": "connection_terminate"])
        #expect(try codec.decode(#"{"type":"ka"}"#) == .keepAlive)
        #expect(
            try codec.decode(#"{"type":"data","id":"1","payload":{"data":null,"errors":[]}}"#)
                == .next(id: "1", ["data": nil, "errors": []]))
        // Legacy servers send one error object, not an array.
        #expect(
            try codec.decode(#"{"type":"error","id":"1","payload":{"message":"bad"}}"#)
                == .error(id: "1", [["message": "bad"]]))
        #expect(
            try codec.decode(#"{"type":"connection_error","payload":{"message":"denied"}}"#)
                == .connectionError(["message": "denied"]))
    }

    @Test func appSyncSendsTheRequestAsAJSONStringWithAuthorization() throws {
        let codec = SocketCodec(kind: .appSync)
        #expect(codec.subprotocol == "graphql-ws")
        let start = try codec.start(id: "9", request: Self.request)
        let data = try #require(start["payload"]?["data"]?.stringValue)
        // The quotes inside the query survive as escaped JSON text and decode back to the same request.
        #expect(try GQLValue(json: data) == Self.request)
        let authorized = SocketCodec.authorize(start, with: ["host": "h", "x-api-key": "k"])
        #expect(authorized["payload"]?["extensions"] == ["authorization": ["host": "h", "x-api-key": "k"]])
        #expect(authorized["payload"]?["data"]?.stringValue == data)
        #expect(
            try codec.decode(#"{"type":"connection_ack","payload":{"connectionTimeoutMs":300000}}"#)
                == .ack(keepAliveTimeout: .seconds(300)))
        #expect(try codec.decode(#"{"type":"start_ack","id":"9"}"#) == .startAck(id: "9"))
        #expect(
            try codec.decode(#"{"type":"error","id":"9","payload":{"errors":[{"errorType":"X","message":"m"}]}}"#)
                == .error(id: "9", [["errorType": "X", "message": "m"]]))
    }

    @Test func malformedMessagesAreErrorsThatQuoteThem() {
        let codec = SocketCodec(kind: .graphqlTransportWS)
        for (text, expected) in [
            ("not json", "not JSON: not json"),
            (#"["type"]"#, "without a string `type`"),
            (#"{"type":5}"#, "without a string `type`"),
            (#"{"type":"next","payload":{}}"#, "a `next` message without an `id`"),
        ] {
            #expect {
                try codec.decode(text)
            } throws: { error in
                let error = error as? GQLError
                return error?.code == .invalidResponse && error?.message.contains(expected) == true
            }
        }
    }

    @Test func realtimeURLsAreDerivedFromAPIURLs() async throws {
        #expect(
            GQLServer.realtimeURL(forAppSync: "https://abc.appsync-api.us-east-2.amazonaws.com/graphql")
                == "wss://abc.appsync-realtime-api.us-east-2.amazonaws.com/graphql")
        #expect(GQLServer.realtimeURL(forAppSync: "http://127.0.0.1:4000/graphql") == "ws://127.0.0.1:4000/graphql")
        #expect(GQLServer.webSocketURL(forHTTP: "https://x.hasura.app/v1/graphql") == "wss://x.hasura.app/v1/graphql")
        let server = GQLServer(AppSync: "https://abc.appsync-api.eu-west-1.amazonaws.com/graphql", key: "da2-k")
        #expect(server.webSocketURL == "wss://abc.appsync-realtime-api.eu-west-1.amazonaws.com/graphql")
        let custom = GQLServer(
            AppSync: "https://api.example.com/graphql", key: nil, realtime: "wss://rt.example.com/graphql/realtime")
        #expect(custom.webSocketURL == "wss://rt.example.com/graphql/realtime")
        try await server.shutdown()
        try await custom.shutdown()
    }
}

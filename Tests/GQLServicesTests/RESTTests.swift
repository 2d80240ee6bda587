import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLREST against a JSON web service on Python's http.server (Tests/Interop/rest_peer.py) that answers every
/// request with what it parsed.
@Suite(.serialized) struct RESTTests {
    private static func withREST(
        headers: [String: String] = [:], _ body: (GQLREST) async throws -> Void
    ) async throws {
        try await PythonPeer.with("rest_peer.py") { peer in
            let rest = GQLREST(baseURL: peer.ready + "/", headers: headers)
            do {
                try await body(rest)
                try await rest.shutdown()
            } catch {
                try? await rest.shutdown()
                throw error
            }
        }
    }

    @Test func queryAndFormValuesArePercentEncoded() async throws {
        try await Self.withREST(headers: ["X-Api-Key": "k1"]) { rest in
            let values = ["plain": "abc", "space": "a b", "plus": "1+1=2", "amp": "x&y", "unicode": "é日", "empty": ""]
            let echo = try await rest.invoke(.post, "/oauth/token", query: values, form: values)
            #expect(echo["method"] == "POST")
            #expect(echo["path"] == "/oauth/token")
            for (name, value) in values {
                #expect(echo["query"]?[name]?[0] == .string(value), "query \(name)")
                #expect(echo["body"]?[name]?[0] == .string(value), "form \(name)")
            }
            #expect(echo["rawQuery"]?.stringValue?.contains("space=a%20b") == true)
            #expect(echo["headers"]?["x-api-key"] == "k1")
            #expect(echo["headers"]?["content-type"] == "application/x-www-form-urlencoded")
        }
    }

    @Test func jsonBodiesAndDecodableAnswers() async throws {
        struct Echo: Decodable {
            var method: String
            var body: [String: Int]
        }
        try await Self.withREST { rest in
            let echo = try await rest.invoke(.patch, "api/v2/users/42", json: ["age": 43], as: Echo.self)
            #expect(echo.method == "PATCH")
            #expect(echo.body == ["age": 43])
            let mismatch = await #expect(throws: GQLError.self) {
                try await rest.invoke(.get, "x", as: [Int].self)
            }
            #expect(mismatch?.code == .decoding)
        }
    }

    @Test func multipartCarriesFieldsAndFiles() async throws {
        try await Self.withREST { rest in
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x0D, 0x0A])
            let echo = try await rest.invoke(
                .post, "upload",
                multipart: [
                    .field("chatId", "c-1 ü"),
                    .file("photo", filename: "a \"b\".png", contentType: "image/png", data: png),
                ])
            #expect(echo["body"]?["chatId"] == "c-1 ü")
            #expect(echo["body"]?["photo"]?["hex"] == .string(png.map { String(format: "%02x", $0) }.joined()))
            #expect(echo["body"]?["photo"]?["type"] == "image/png")
        }
    }

    @Test func errorAnswersCarryTheStatusAndTheServiceFields() async throws {
        try await Self.withREST { rest in
            let error = await #expect(throws: GQLError.self) { try await rest.invoke(.post, "status/403") }
            #expect(error?.code == .http)
            #expect(error?.httpStatus == 403)
            #expect(error?.serviceCode == "invalid_grant")
            #expect(error?.message.contains("Wrong email or password.") == true)
            let text = await #expect(throws: GQLError.self) { try await rest.invoke(.get, "text") }
            #expect(text?.code == .invalidResponse)
        }
    }

    @Test func badArgumentsAreRefusedBeforeSending() async throws {
        try await Self.withREST { rest in
            let two = await #expect(throws: GQLError.self) {
                try await rest.invoke(.post, "x", json: ["a": 1], form: ["a": "1"])
            }
            #expect(two?.code == .invalidArgument)
            let header = await #expect(throws: GQLError.self) {
                try await rest.invoke(.get, "x", headers: ["X-Secret": "line\r\nbreak-secret"])
            }
            #expect(header?.code == .invalidArgument)
            #expect(header?.message.contains("break-secret") == false)
        }
        let refused = GQLREST(baseURL: "http://127.0.0.1:9")
        let error = await #expect(throws: GQLError.self) { try await refused.invoke(.get, "x") }
        #expect(error?.code == .connection)
        try await refused.shutdown()
    }
}

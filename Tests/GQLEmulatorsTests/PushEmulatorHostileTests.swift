import Foundation
import GQLCore
import GQLServices
import GQLTestSupport
import Testing

@testable import GQLEmulators

/// The OneSignal emulator under the hostile input PushEmulatorTests does not send: huge headers, slow and oversized
/// bodies, malformed JSON on v1's paths, today's key in v1's scheme; each gets OneSignal's error shape, nothing is
/// kept, nothing crashes.
@Suite("OneSignal emulator, hostile input", .timeLimit(.minutes(1)))
struct PushEmulatorHostileTests {
    @Test func hugeHeadersSlowAndLargeBodiesAreRefused() async throws {
        try await PushEmulatorTests.with({
            $0.limits.maxHeaderBytes = 4096
            $0.limits.bodyTimeout = .milliseconds(300)
        }) { emulator, started, rest in
            let appId = emulator.configuration.appId
            let big = String(repeating: "a", count: 8192)
            let huge = await
                (try RawConnection(
                    port: started.port,
                    sending: "POST /notifications HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")).readUntilClosed()
            #expect(huge.status == 431)
            #expect(huge.text.contains("\"errors\""), "OneSignal's shape: \(huge.text)")

            // Half a body, then nothing: refused once the body timeout passes (the bound is the outcome's
            // deadline, the test decides by the 408).
            let slowReply = await Self.post(
                "{\"identity\":", to: "/apps/\(appId)/users", port: started.port, contentLength: 100)
            #expect(slowReply.first?.status == 408)
            #expect(slowReply.first?.body.contains("\"errors\"") == true)

            let large = await refusal {
                _ = try await rest.invoke(
                    .post, "notifications",
                    json: [
                        "app_id": .string(appId), "included_segments": ["All"],
                        "contents": ["en": .string(String(repeating: "x", count: 1 << 20))],
                    ], headers: ["Authorization": "Key \(emulator.configuration.restKey)"])
            }
            #expect(large == "413")
            let kept = try emulator.notifications()
            #expect(kept.isEmpty)
        }
    }

    @Test func v1RefusesMalformedBodiesAndTodaysKeysInBasic() async throws {
        try await PushEmulatorTests.with { emulator, started, rest in
            let appId = emulator.configuration.appId
            let reply = await Self.post("{\"app_id\": \"\(appId)\", ", to: "/api/v1/players", port: started.port)
            #expect(reply.first?.status == 400)
            // v1's error shape: a list of strings.
            let body = try GQLValue(json: Data((reply.first?.body ?? "").utf8))
            #expect(body["errors"]?[0]?.stringValue != nil, "\(body)")
            let notJSON = await refusal {
                _ = try await rest.invoke(
                    .post, "api/v1/notifications", form: ["app_id": appId],
                    headers: ["Authorization": "Basic \(emulator.configuration.restKey)"])
            }
            #expect(notJSON == "400")

            // Today's App API key (os_v2_…) goes as `Key` only, on today's paths.
            let basic = await refusal {
                _ = try await rest.invoke(
                    .post, "notifications",
                    json: ["app_id": .string(appId), "contents": ["en": "x"], "included_segments": ["All"]],
                    headers: ["Authorization": "Basic \(emulator.configuration.restKey)"])
            }
            #expect(basic == "403")
            let kept = try emulator.notifications()
            #expect(kept.isEmpty)
        }
    }

    /// The answer to `POST path` with the JSON `text` as its body, sent raw (malformed or cut short as it is);
    /// `contentLength` declares more than is sent. No answer (the connection failed) is an empty list.
    static func post(_ text: String, to path: String, port: Int, contentLength: Int? = nil) async
        -> [(status: Int, body: String)]
    {
        let request =
            "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(contentLength ?? text.utf8.count)\r\n\r\n\(text)"
        guard let connection = try? RawConnection(port: port, sending: request) else { return [] }
        return await connection.readAnswers(1)
    }
}

import Foundation
import GQLCore
import GQLServices
import GQLTestSupport
import Testing

/// What an error says when a server refuses slowly or the transport refuses a value: bounded in time, and never a
/// credential.
@Suite(.timeLimit(.minutes(2))) struct RefusalTextTests {
    typealias H = HostileServiceTests

    /// A refusal whose body trickles in, a byte every 100 ms and never ending, each byte within the read timeout:
    /// its message is read for at most the timeout (it would take 64 KiB × 100 ms, nearly two hours, to fill the
    /// error-body cap).
    @Test func aTricklingRefusalEndsADownloadAtTheTimeout() async throws {
        let hostile = try HostileServer { _, _ in
            .stream(head: HostileServer.Reply.head(403), chunk: [0x78], interval: .milliseconds(100), count: nil)
        }
        let storage = H.storage(hostile, timeout: .seconds(1))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("refusal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (error, took) = await H.failure {
            try await storage.download("bucket", "key", to: directory.appendingPathComponent("file.bin"))
        }
        #expect(error?.httpStatus == 403, "\(error.map { "\($0)" } ?? "none")")
        // 1 s timeout; 15 s leaves room for a loaded machine, while the defect (hours) fails.
        #expect(took < .seconds(15), "\(took)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        try await storage.shutdown()
        hostile.stop()
    }

    /// A session token read from a file with its line end: the transport refuses the header, and the error names
    /// the kind of refusal without quoting the value.
    @Test func aHeaderValueTheTransportRefusesIsNotQuoted() async throws {
        let hostile = try HostileServer { _, _ in .http(200, "") }
        var configuration = GQLStorage.Configuration()
        configuration.timeout = .seconds(5)
        configuration.maximumAttempts = 1
        let storage = GQLStorage(
            endpoint: "http://127.0.0.1:\(hostile.port)", accessKey: "AKIDEXAMPLE", secretKey: "s3cr3t-key",
            sessionToken: "SESSION-SECRET-tok\r\n", configuration: configuration)
        let (error, _) = await H.failure { _ = try await storage.list("bucket").first { _ in true } }
        let text = error.map { "\($0) \($0.message)" } ?? ""
        #expect(error != nil)
        #expect(!text.contains("SESSION-SECRET"), "\(text)")
        #expect(hostile.requestCount == 0)
        try await storage.shutdown()
        hostile.stop()
    }
}

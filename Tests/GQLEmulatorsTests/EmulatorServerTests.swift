import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLEmulators

/// The server plumbing every emulator shares (the dev server's connection guards): a started emulator's handle,
/// answers to what the HTTP parser refuses in the service's own shape, header timeouts, shutdown.
@Suite("Emulator server plumbing")
struct EmulatorServerTests {
    static func storage(_ change: (inout GQLStorageEmulator.Configuration) -> Void = { _ in }) throws
        -> GQLStorageEmulator
    {
        var configuration = GQLStorageEmulator.Configuration()
        configuration.port = 0
        change(&configuration)
        return try GQLStorageEmulator(configuration: configuration)
    }

    @Test func aStartedEmulatorListensOnLoopbackAndStops() async throws {
        let started = try await Self.storage().start()
        #expect(started.url == "http://127.0.0.1:\(started.port)")
        #expect(started.port > 0)
        let reply = await (try RawConnection(port: started.port, sending: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
            .readAnswers(1)
        #expect(reply.first?.status != nil)
        await started.shutdown()
        await started.shutdown()  // a second call returns at once
        #expect(throws: (any Error).self) { try RawConnection(port: started.port) }
    }

    @Test func headersOverTheLimitGet431InS3sShape() async throws {
        let started = try await Self.storage { $0.limits.maxHeaderBytes = 4096 }.start()
        defer { Task { await started.shutdown() } }
        let big = String(repeating: "a", count: 8192)
        let connection = try RawConnection(
            port: started.port, sending: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")
        let reply = await connection.readUntilClosed()
        #expect(reply.status == 431)
        #expect(reply.text.contains("<Code>RequestHeaderSectionTooLarge</Code>"))
        #expect(reply.closed)
    }

    @Test func garbageGets400AndAClose() async throws {
        let started = try await Self.storage().start()
        defer { Task { await started.shutdown() } }
        let reply = await (try RawConnection(port: started.port, sending: "NOT HTTP AT ALL\r\n\r\n")).readUntilClosed()
        #expect(reply.status == 400)
        #expect(reply.text.contains("<Error><Code>InvalidRequest</Code>"))
        #expect(reply.closed)
    }

    /// The deadline is a bound, not the outcome: the test decides by the 408 and the close.
    @Test func headersThatNeverEndGet408() async throws {
        let started = try await Self.storage { $0.limits.headerTimeout = .milliseconds(200) }.start()
        defer { Task { await started.shutdown() } }
        let reply = await (try RawConnection(port: started.port, sending: "GET / HTTP/1.1\r\nHost: x\r\n"))
            .readUntilClosed()
        #expect(reply.status == 408)
        #expect(reply.text.contains("<Code>RequestTimeout</Code>"))
        #expect(reply.closed)
    }

    @Test func aPortInUseFailsStart() async throws {
        let first = try await Self.storage().start()
        defer { Task { await first.shutdown() } }
        let second = try Self.storage { $0.port = first.port }
        await #expect(throws: (any Error).self) { try await second.start() }
    }
}

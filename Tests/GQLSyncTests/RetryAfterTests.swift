import Foundation
import GQLCore
import GQLNet
import GQLTestSupport
import Testing

@testable import GQLSync

/// A server that answers 429 or 503 with `Retry-After` is not asked again before the time it gave, when that is
/// longer than the engine's own backoff (20 ms here); a value that cannot be read leaves the backoff alone.
@Suite(.timeLimit(.minutes(1))) struct RetryAfterDeliveryTests {
    /// The delay of the first retry the engine announces for an item the server answers with `reply`.
    static func firstDelay(_ reply: HostileServer.Reply) async throws -> Duration? {
        let hostile = try HostileServer { _, _ in reply }
        defer { hostile.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let client = GQLServer(HTTP: hostile.url)
        let sync = try GQLSync(
            client, path: directory.path("outbox.sqlite"), configuration: try HostileAnswerTests.configuration())
        var statuses = sync.status.makeAsyncIterator()
        try await sync.steady("CreateNote", ["n": 1])
        var delay: Duration?
        while let status = await statuses.next() {
            if case .retrying(_, _, let wait, _)? = status.event {
                delay = wait
                break
            }
        }
        try await sync.shutdown()
        try await client.shutdown()
        return delay
    }

    @Test func theServersWaitIsHonoured() async throws {
        #expect(try await Self.firstDelay(.http(429, "slow down", headers: ["Retry-After: 7"])) == .seconds(7))
        #expect(
            try await Self.firstDelay(.http(503, "busy", headers: ["Retry-After: 1000000000000"])) == .seconds(3600))
        // A date: GQLNet reads it against the wall clock when the answer arrives (RetryAfterTests in GQLNetTests
        // check the arithmetic at a fixed instant), some moment between `before` and `after`; the wait must be the
        // date minus that moment, whatever the machine's load made of the time in between (milliseconds, truncated).
        let before = Date()
        let date = Int(before.timeIntervalSince1970) + 30
        let dated = try #require(
            try await Self.firstDelay(.http(503, "busy", headers: ["Retry-After: \(HTTPDate.format(date))"])))
        let after = Date()
        #expect(dated <= .seconds(Double(date) - before.timeIntervalSince1970))
        #expect(dated >= .seconds(Double(date) - after.timeIntervalSince1970) - .milliseconds(1))
    }

    @Test(arguments: ["-5", "soon", "0", "Wed, 21 Oct 2015 07:28:00 GMT"])
    func aWaitThatCannotBeReadOrIsOverLeavesTheBackoff(value: String) async throws {
        let delay = try #require(try await Self.firstDelay(.http(429, "slow down", headers: ["Retry-After: \(value)"])))
        #expect(delay <= .milliseconds(20))
    }
}

/// An IMF-fixdate for a test's `Retry-After`.
enum HTTPDate {
    static func format(_ seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

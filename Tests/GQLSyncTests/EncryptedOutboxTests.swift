import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// `GQLSync(server, path:, key:)`: the outbox file is encrypted (no queued value in its bytes, a plain outbox as
/// the control), reopens with its key with the items still queued, refuses a wrong key and a missing one, and the
/// engine delivers through it.
@Suite(.timeLimit(.minutes(1))) struct EncryptedOutboxTests {
    static let key = GQLDatabase.Key.raw(Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }))

    /// The bytes of the database file and its WAL and journal, whichever exist.
    static func bytes(_ path: String) -> Data {
        ["", "-wal", "-journal"].reduce(into: Data()) { all, suffix in
            all += (try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data()
        }
    }

    @Test func anEncryptedOutboxHoldsNoQueuedValueAndDeliversAfterReopening() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let title = "SECRET-title-91c3"
        let marker = 73_461_927
        let secrets = [title, String(marker)]

        // The control: a plain outbox holds the queued values, so the search below can find them.
        let plainPath = fixture.directory.path("plain.sqlite")
        let plain = try GQLSync(
            fixture.client, path: plainPath, configuration: fixture.configuration { $0.name = "plain" })
        try await plain.steady("CreateNote", ["title": title, "n": marker])
        try await plain.shutdown()
        for secret in secrets { #expect(Self.bytes(plainPath).range(of: Data(secret.utf8)) != nil, "\(secret)") }

        let path = fixture.directory.path("outbox.sqlite")
        let sync = try GQLSync(fixture.client, path: path, key: Self.key, configuration: fixture.configuration())
        try await sync.steady("CreateNote", ["title": title, "n": marker])
        #expect(sync.pendingCount == 1)
        for secret in secrets { #expect(Self.bytes(path).range(of: Data(secret.utf8)) == nil, "\(secret)") }
        try await sync.shutdown()
        for secret in secrets { #expect(Self.bytes(path).range(of: Data(secret.utf8)) == nil, "\(secret)") }
        let closed = Self.bytes(path)

        // A wrong key and no key are refused, the file untouched.
        let wrong = #expect(throws: GQLError.self) {
            try GQLSync(
                fixture.client, path: path, key: .raw(Data(repeating: 2, count: 32)),
                configuration: fixture.configuration())
        }
        #expect(wrong?.code == .wrongKey)
        let keyless = #expect(throws: GQLError.self) {
            try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        }
        #expect(keyless?.code == .keyRequired)
        #expect(Self.bytes(path) == closed)

        // The key reopens it with the item queued, and the engine delivers it once the server is up.
        let again = try GQLSync(fixture.client, path: path, key: Self.key, configuration: fixture.configuration())
        #expect(again.pendingCount == 1)
        try await fixture.server.start()
        again.resume()
        try await again.drain()
        #expect(try fixture.server.appliedNumbers() == [marker])
        #expect(again.pendingCount == 0)
        await fixture.finish(again)
    }
}

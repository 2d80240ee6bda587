import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// The delivery journal: delivered items recorded by an append, deleted from the outbox in one commit now and then,
/// and by the next engine when a run stopped before it did.
@Suite(.timeLimit(.minutes(2))) struct OutboxJournalTests {
    @Test func aRecordedItemIsDeletedByTheNextEngineAndNotSentAgain() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let queue = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...3 { try await queue.steady("CreateNote", ["n": n]) }
        // What the loop does once item 1 is answered; then the run ends before the outbox deletes it.
        let journal = try #require(queue.outbox.journal)
        #expect(try journal.append(1) == 1)
        try await queue.shutdown()
        let journalPath = try #require(OutboxJournal.path(database: path, engine: queue.name))
        #expect(FileManager.default.fileExists(atPath: journalPath))

        // The next engine deletes the recorded item when it opens. One that does not deliver shows the count
        // (a delivering one may already have sent item 2 when the count is read).
        let reader = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(reader.pendingCount == 2)
        try await reader.shutdown()
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [2, 3])
        // The recorded id is not given again.
        #expect(try await sync.steady("CreateNote", ["n": 4]) == 4)
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [2, 3, 4])
        try await sync.shutdown()
        // Drained, the journal was emptied into the outbox, and the engine removed the empty file.
        #expect(!FileManager.default.fileExists(atPath: journalPath))
        await fixture.finish(sync)
    }

    @Test func aTornLastRecordIsIgnored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("journal")
        do {
            let journal = try OutboxJournal(path: path, identity: 42)
            #expect(try journal.append(7) == 1)
            #expect(try journal.append(8) == 2)
        }
        // Half a record right after the last one, as a process killed between the two words of a record leaves
        // it (the id, without the word that completes it); and bytes past the end of the file.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 16 + 2 * 16)
        try handle.write(contentsOf: withUnsafeBytes(of: UInt64(9).littleEndian) { Data($0) })
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1, 2, 3, 4, 5]))
        try handle.close()
        let reopened = try OutboxJournal(path: path, identity: 42)
        #expect(reopened.recorded == [7, 8])
        // A record appended now replaces the half one.
        #expect(try reopened.append(10) == 3)
        #expect(try OutboxJournal(path: path, identity: 42).recorded == [7, 8, 10])
        try reopened.drop(first: 1)
        #expect(try OutboxJournal(path: path, identity: 42).recorded == [8, 10])
        // Another outbox's identity: the records are not its own, and are dropped unread.
        #expect(try OutboxJournal(path: path, identity: 43).recorded.isEmpty)
        #expect(try OutboxJournal(path: path, identity: 42).recorded.isEmpty)
    }

    @Test func aJournalLeftBesideADeletedDatabaseDeletesNothingOfTheNewOne() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        let old = try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...2 { try await old.steady("CreateNote", ["n": n]) }
        #expect(try #require(old.outbox.journal).append(1) == 1)
        try await old.shutdown()
        // The app deletes its data, the journal stays behind.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let new = try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(try await new.steady("CreateNote", ["n": 10]) == 1)
        try await new.shutdown()
        let again = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(again.pendingCount == 1)
        await fixture.finish(again)
    }

    @Test func recordsPastTheMappedPartAreKeptAndDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("journal")
        let journal = try OutboxJournal(path: path, identity: 7)
        // More records than the loop ever keeps (it consolidates at `capacity`): the last ones go past the mapping.
        let ids = (1...Int64(OutboxJournal.capacity + 300)).map { $0 * 3 }
        for id in ids { _ = try journal.append(id) }
        #expect(try OutboxJournal(path: path, identity: 7).recorded == Set(ids))
        try journal.drop(first: ids.count - 2)
        #expect(try OutboxJournal(path: path, identity: 7).recorded == Set(ids.suffix(2)))
        try journal.drop(first: 2)
        #expect(try OutboxJournal(path: path, identity: 7).recorded.isEmpty)
    }

    @Test func aDatabaseWithoutAFileHasNoJournal() {
        #expect(OutboxJournal.path(database: ":memory:", engine: "e") == nil)
        let path = OutboxJournal.path(database: "/tmp/app.sqlite", engine: "a/b c")
        #expect(path == "/tmp/app.sqlite-gqlsync-a%2Fb%20c.journal")
    }
}

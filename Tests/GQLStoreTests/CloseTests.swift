import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// `GQLDatabase.close()`: idempotent, in-flight work finishes, everything after fails with `.closed`.
@Suite struct CloseTests {
    private func expectClosed(_ work: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try work()
            Issue.record("expected a .closed error", sourceLocation: sourceLocation)
        } catch let error as GQLError {
            #expect(error.code == .closed, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains("closed"), sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyCallAfterCloseFailsWithClosedAndCloseIsIdempotent() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        try db.close()
        try db.close()  // a second close is harmless

        expectClosed { _ = try User.count(db) }
        expectClosed { _ = try User.fetchOne(db, key: 1) }
        expectClosed { try makeUser(2).insert(db) }
        expectClosed { try db.write { tx in try makeUser(2).insert(tx) } }
        expectClosed { _ = try db.read { tx in try User.count(tx) } }
        expectClosed { try db.execute("DELETE FROM User") }
        expectClosed { _ = try db.fetchAll(sql: "SELECT 1") }

        // Every connection is closed, so SQLite checkpointed and removed the WAL; the row is in the file.
        #expect(!FileManager.default.fileExists(atPath: temp.path + "-wal"))
        let reopened = try GQLDatabase(path: temp.path)
        #expect(try User.fetchAll(reopened).map(\.userId) == [1])
    }

    @Test func closeFromInsideOwnWorkIsAnErrorAndTheDatabaseStaysOpen() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let inWrite = try #require(throws: GQLError.self) {
            try db.write { tx in
                try makeUser(1).insert(tx)
                try db.close()
            }
        }
        #expect(inWrite.code == .nestedWrite)
        let inRead = try #require(throws: GQLError.self) { try db.read { _ in try db.close() } }
        #expect(inRead.code == .invalidArgument)
        #expect(inRead.message.contains("close"))
        try makeUser(2).insert(db)
        #expect(try User.fetchAll(db).map(\.userId) == [2])  // the failed write rolled back, the next one ran
    }

    @Test func aWriteInProgressFinishesBeforeCloseReturns() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writeDone = DispatchSemaphore(value: 0)
        let writeResult = TestLocked<String?>(nil)
        DispatchQueue.global().async {
            do {
                try db.write { tx in
                    try makeUser(1).insert(tx)
                    inside.signal()
                    release.wait()
                    try makeUser(2).insert(tx)
                }
                writeResult.withLock { $0 = "committed" }
            } catch {
                writeResult.withLock { $0 = "\(error)" }
            }
            writeDone.signal()
        }
        // The test's own waits block threads of their own, not one the tests running in parallel share.
        await onThread { inside.wait() }
        let closeDone = DispatchSemaphore(value: 0)
        let closeResult = TestLocked<String?>(nil)
        DispatchQueue.global().async {
            do {
                try db.close()
                // close() returns only after the write committed: another connection sees both rows now.
                let count = try User.count(try GQLDatabase(path: temp.path))
                closeResult.withLock { $0 = "closed, then \(count) rows" }
            } catch {
                closeResult.withLock { $0 = "\(error)" }
            }
            closeDone.signal()
        }
        release.signal()
        await onThread {
            writeDone.wait()
            closeDone.wait()
        }
        #expect(writeResult.value == "committed")
        #expect(closeResult.value == "closed, then 2 rows")
        let reopened = try GQLDatabase(path: temp.path)
        #expect(try User.fetchAll(reopened, order: "userId").map(\.userId) == [1, 2])
    }

    @Test func asyncCloseAndObserverCallbacksOfEarlierCommits() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let changes = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, changes.callback)
        try makeUser(1).insert(db)
        try await db.close()
        await db.observersIdle()
        #expect(changes.all == [.insert(1)])
        await #expect(throws: GQLError.self) { try await db.write { tx in try makeUser(2).insert(tx) } }
        try await db.close()
    }
}

import Foundation
import GQLCore
import GQLStore
import Testing

/// `db.write(origin:)` tags every change of the write; observers get the tag, untagged writes report `nil`.
@Suite struct ChangeOriginTests {
    private struct Refused: Error {}

    /// Records every change an observer hears, origin included.
    private final class Heard: Sendable {
        private let changes = TestLocked<[GQLChange]>([])
        var all: [GQLChange] { changes.value }
        var callback: @Sendable (GQLChange) -> Void { { change in self.changes.withLock { $0.append(change) } } }
    }

    @Test func observersReceiveTheTagOfTheWriteThatMadeEachChange() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let heard = Heard()
        let legacy = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, heard.callback)
        _ = try User.createObserver(db, .all, nil, legacy.callback)  // the (type, key) form still works

        try await db.write(origin: "sync") { tx in
            try makeUser(1).insert(tx)
            try makeUser(2).insert(tx)
        }
        try makeUser(3).insert(db)  // a verb on the database: untagged
        try await db.write { tx in try User.deleteOne(tx, key: 1) }
        try? await db.write(origin: "rolled back") { tx in
            try makeUser(4).insert(tx)
            throw Refused()
        }
        try await db.write(origin: "async") { tx in try User.updateOne(tx, ["age": 50], key: 2) }
        await db.observersIdle()

        #expect(
            heard.all == [
                GQLChange(type: .insert, key: 1, origin: "sync"), GQLChange(type: .insert, key: 2, origin: "sync"),
                .insert(3), .delete(1), GQLChange(type: .update, key: 2, origin: "async"),
            ])
        #expect(legacy.all == [.insert(1), .insert(2), .insert(3), .delete(1), .update(2)])
    }

    @Test func theDictionaryAPIAndAsyncSequencesCarryTheOriginToo() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let heard = Heard()
        _ = try db.createObserver("User", [.insert], nil, heard.callback)
        let observation = User.observe(db, [.insert])

        try await db.write(origin: "sync") { tx in try makeUser(1).insert(tx) }
        try await db.write { tx in try makeUser(2).insert(tx) }

        var received: [GQLChange] = []
        for try await change in observation {
            received.append(change)
            if received.count == 2 { break }
        }
        await db.observersIdle()
        let expected = [GQLChange(type: .insert, key: 1, origin: "sync"), .insert(2)]
        #expect(received == expected)
        #expect(heard.all == expected)
    }

    @Test func anObserverCanTellPulledRowsFromLocalEdits() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let localEdits = TestLocked<[GQLValue]>([])
        _ = try User.createObserver(db, [.insert, .update]) { change in
            if change.origin != "sync" { localEdits.withLock { $0.append(change.key) } }
        }
        try await db.write(origin: "sync") { tx in try makeUser(1).insertUpdate(tx) }
        try makeUser(2).insert(db)
        try await db.write(origin: "sync") { tx in try User.updateOne(tx, ["age": 40], key: 2) }
        try await db.write { tx in try User.updateOne(tx, ["age": 41], key: 1) }
        await db.observersIdle()
        #expect(localEdits.value == [2, 1])
    }
}

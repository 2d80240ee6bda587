import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Delivery journals (the file beside the outbox) that are zero-filled, cut short, of another outbox, of a later
/// layout, or far longer than the loop ever writes: the engine opens, reads at most a bounded number of records,
/// and delivers every pending item.
@Suite(.timeLimit(.minutes(2))) struct JournalFileAttackTests {
    /// A journal file's bytes: the header of `identity` and a record for each of `ids`.
    static func journal(identity: UInt64, ids: some Sequence<Int64>) -> Data {
        var words = [identity, identity ^ 0x6771_7379_6e63_6831]
        for id in ids {
            let raw = UInt64(bitPattern: id)
            words += [raw, raw ^ 0x6771_7379_6e63_6a31]
        }
        return words.map(\.littleEndian).withUnsafeBytes { Data($0) }
    }

    @Test func aJournalFarLongerThanTheLoopWritesIsReadOnlyUpToItsLimit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("journal")
        let count = OutboxJournal.readLimit + 1000
        try writeFile(path, Self.journal(identity: 42, ids: 1...Int64(count)))
        let journal = try OutboxJournal(path: path, identity: 42)
        #expect(journal.recorded.count == OutboxJournal.readLimit)
        // Emptied, the file is cut back to its mapping.
        try journal.drop(first: OutboxJournal.readLimit)
        #expect(journal.recorded.isEmpty)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 8192)
    }

    @Test func enginesWhoseNamesDifferOnlyInOtherCharactersKeepTheirJournalsApart() async throws {
        let names = ["notes v1", "notes_v1", "notes/v1", "notes%2Fv1", "notes\u{0}v1", "notes✓v1", "notes.v1"]
        let paths = names.map { OutboxJournal.path(database: "/tmp/app.sqlite", engine: $0) }
        #expect(Set(paths).count == names.count, "\(paths)")
        // A name of letters, digits, '.', '-' and '_' (every default name) keeps the file it had.
        #expect(paths[1] == "/tmp/app.sqlite-gqlsync-notes_v1.journal")
        #expect(paths[0] == "/tmp/app.sqlite-gqlsync-notes%20v1.journal")

        // Two engines in one database: opening the second leaves the first's record alone.
        let fixture = try await SyncFixture.make(started: false)
        let db = try fixture.appDatabase()
        let first = try GQLSync(
            fixture.client, database: db,
            configuration: fixture.configuration {
                $0.name = "notes v1"
                $0.delivers = false
            })
        try await first.steady("CreateNote", ["n": 1])
        #expect(try first.outbox.journal?.append(1) == 1)
        let second = try GQLSync(
            fixture.client, database: db,
            configuration: fixture.configuration {
                $0.name = "notes_v1"
                $0.delivers = false
            })
        #expect(first.outbox.journal?.path != second.outbox.journal?.path)
        let reread = try OutboxJournal(
            path: try #require(first.outbox.journal?.path), identity: try identity(db, "notes v1"))
        #expect(reread.recorded == [1])
        await fixture.finish(first, second)
    }

    @Test func enginesWithNamesTooLongForAFileNameGetJournalsTheyCanOpen() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        // 300 letters; the same with another last letter; 40 ticks, each 9 bytes once written as %E2%9C%93.
        let long = String(repeating: "n", count: 300)
        let names = [long, String(long.dropLast()) + "m", String(repeating: "✓", count: 40)]
        let paths = try names.map { try #require(OutboxJournal.path(database: db.path, engine: $0)) }
        #expect(Set(paths).count == names.count, "\(paths)")
        for path in paths {
            let file = URL(fileURLWithPath: path).lastPathComponent
            #expect(file.utf8.count <= 255 && file.hasSuffix(".journal") && file.contains("~"), "\(file)")
        }
        // The same name, the same file (the next run finds the records).
        #expect(OutboxJournal.path(database: db.path, engine: long) == paths[0])
        // A name that fits keeps its file name, even one just short of the limit.
        let fits = String(repeating: "f", count: 255 - "app.sqlite-gqlsync-.journal".utf8.count)
        #expect(OutboxJournal.path(database: db.path, engine: fits) == "\(db.path)-gqlsync-\(fits).journal")

        // Every such engine opens (it failed with ENAMETOOLONG) and delivers through its journal.
        var engines: [GQLSync] = []
        for (index, name) in names.enumerated() {
            let sync = try GQLSync(
                fixture.client, database: db, configuration: fixture.configuration { $0.name = name })
            #expect(sync.outbox.journal?.path == paths[index])
            try await sync.steady("CreateNote", ["n": index + 1])
            try await sync.drain()
            engines.append(sync)
        }
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3])
        #expect(paths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        for engine in engines { try await engine.shutdown() }
        await fixture.finish()
    }

    /// The journal identity of engine `name` in `db`.
    func identity(_ db: GQLDatabase, _ name: String) throws -> UInt64 {
        let row = try db.fetchAll(sql: "SELECT last_id FROM _gqlsync_sequence WHERE name = ?", ["journal " + name])
            .first
        return UInt64(bitPattern: try #require(row?["last_id"]?.intValue))
    }

    @Test func aJournalThatIsASymbolicLinkIsRefusedAndItsTargetLeftAlone() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        let victim = fixture.directory.path("precious.txt")
        try writeFile(victim, Data("the app's other data\n".utf8))
        let journalPath = try #require(OutboxJournal.path(database: path, engine: "notes"))
        try FileManager.default.createSymbolicLink(atPath: journalPath, withDestinationPath: victim)
        let error = #expect(throws: GQLError.self) {
            try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.name = "notes" })
        }
        #expect(error?.message.contains(journalPath) == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "the app's other data\n")
        await fixture.finish()
    }

    @Test(arguments: ["zeros", "short", "header only", "foreign", "later layout", "garbage", "directory"])
    func anEngineOnADamagedJournalDeliversEveryPendingItem(kind: String) async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let queue = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...5 { try await queue.steady("CreateNote", ["n": n]) }
        let journalPath = try #require(OutboxJournal.path(database: path, engine: queue.name))
        let identity = try #require(
            try queue.database.fetchAll(sql: "SELECT last_id FROM _gqlsync_sequence WHERE name LIKE 'journal %'")
                .first?["last_id"]?.intValue)
        try await queue.shutdown()
        let own = Self.journal(identity: UInt64(bitPattern: identity), ids: [])
        switch kind {
        case "zeros": try writeFile(journalPath, Data(count: 8192))
        case "short": try writeFile(journalPath, own.prefix(7))
        case "header only": try writeFile(journalPath, own)
        case "foreign":
            // Another outbox's journal naming every item as delivered: ignored, not obeyed.
            try writeFile(journalPath, Self.journal(identity: 7, ids: 1...5))
        case "later layout":
            var later = own
            later[8] ^= 0xFF
            later.append(Self.journal(identity: 0, ids: [1, 2]).dropFirst(16))
            try writeFile(journalPath, later)
        case "garbage": try writeFile(journalPath, Data((0..<100_000).map { UInt8($0 % 251) }))
        default: try FileManager.default.createDirectory(atPath: journalPath, withIntermediateDirectories: false)
        }
        guard kind != "directory" else {
            // A journal that cannot be opened is an error naming it.
            let error = #expect(throws: GQLError.self) {
                try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
            }
            #expect(error?.message.contains(journalPath) == true)
            await fixture.finish()
            return
        }
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        // The engine starts delivering as it opens (the server is up), so the count may already be lower than 5:
        // every item applied once, in order, after the drain decides.
        #expect(sync.pendingCount <= 5)
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3, 4, 5])
        await fixture.finish(sync)
    }
}

/// Writes `data` to the file at `path`, replacing it.
func writeFile(_ path: String, _ data: Data) throws {
    try data.write(to: URL(fileURLWithPath: path))
}

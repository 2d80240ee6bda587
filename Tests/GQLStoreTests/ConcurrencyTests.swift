import Dispatch
import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// An account whose balance moves between accounts; the sum over all accounts never changes.
struct LedgerAccount: GQLObject, Equatable {
    var accountId = 0
    var balance = 0
    static func primaryKey() -> String { "accountId" }
}

/// One committed transfer, written in the same transaction as the two balance changes.
struct LedgerTransfer: GQLObject, Equatable {
    var transferId = 0
    var from = 0
    var to = 0
    var amount = 0
    static func primaryKey() -> String { "transferId" }
}

@Suite(.timeLimit(.minutes(5))) struct ConcurrencyTests {
    static let accounts = 10
    static let startingBalance = 1_000
    static var total: Int { accounts * startingBalance }

    private func openLedger() throws -> TempDatabase {
        let temp = try TempDatabase()
        try temp.db.write { tx in
            for id in 1...Self.accounts {
                try LedgerAccount(accountId: id, balance: Self.startingBalance).insert(tx)
            }
        }
        try temp.db.register(LedgerTransfer.self)
        return temp
    }

    /// The balance each account must have after `flows` (from, to, sum of amounts).
    private static func balances(after flows: [(from: Int, to: Int, amount: Int)]) -> [Int: Int] {
        var balances = Dictionary(uniqueKeysWithValues: (1...accounts).map { ($0, startingBalance) })
        for flow in flows {
            balances[flow.from, default: 0] -= flow.amount
            balances[flow.to, default: 0] += flow.amount
        }
        return balances
    }

    /// One transfer: both balances and its log row, in one transaction; `abort` rolls it back at the end.
    private static func transfer(
        _ db: GQLDatabase, id: Int, using generator: inout SplitMix64, abort: Bool
    ) async throws {
        let from = Int.random(in: 1...accounts, using: &generator)
        let other = Int.random(in: 1...accounts - 1, using: &generator)
        let to = other >= from ? other + 1 : other
        let amount = Int.random(in: 1...50, using: &generator)
        struct Abort: Error {}
        do {
            try await db.write { tx in
                guard var source = try LedgerAccount.fetchOne(tx, key: from),
                    var target = try LedgerAccount.fetchOne(tx, key: to)
                else { throw GQLError(.notFound, "account \(from) or \(to) is missing") }
                source.balance -= amount
                try source.update(tx)
                target.balance += amount
                try target.update(tx)
                try LedgerTransfer(transferId: id, from: from, to: to, amount: amount).insert(tx)
                if abort { throw Abort() }
            }
        } catch is Abort {
            return
        }
    }

    @Test("writeIfFree commits when the writer is free, and runs nothing (nil) while another thread writes")
    func writeIfFree() async throws {
        let temp = try openLedger()
        let db = temp.db
        let first = try db.writeIfFree { tx in
            try LedgerTransfer(transferId: 1, from: 1, to: 2, amount: 5).insert(tx)
            return 1
        }
        #expect(first == 1)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = DispatchGroup()
        DispatchQueue.global().async(group: holder) {
            try? db.write { _ in
                entered.signal()
                release.wait()
            }
        }
        // The test's own waits block threads of their own, not one the tests running in parallel share.
        await onThread { entered.wait() }
        var ran = false
        let second = try db.writeIfFree { tx in
            ran = true
            try LedgerTransfer(transferId: 2, from: 1, to: 2, amount: 5).insert(tx)
            return 2
        }
        release.signal()
        await onThread { holder.wait() }
        #expect(second == nil && !ran)
        #expect(try LedgerTransfer.fetchAll(db).map(\.transferId) == [1])
        // Inside a write on the same thread it is a nested write, refused like any other.
        #expect(throws: GQLError.self) { try db.write { _ in try db.writeIfFree { _ in 0 } } }
    }

    @Test func concurrentTransfersNeverShowATornState() async throws {
        let temp = try openLedger()
        let db = temp.db
        let writers = 8, transactionsPerWriter = 200
        let writersDone = TestLocked(false)
        let readsDone = TestLocked(0)
        let snapshots = TestLocked<Set<Int>>([])  // distinct (from, to) flow counts seen: proof reads overlapped writes
        let failures = Failures()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in 0..<8 {
                group.addTask {
                    var reads = 0
                    // Keep reading while the writers write (and at least a few times in any case).
                    while !writersDone.value || reads < 5 {
                        reads += 1
                        // Two statements in one read transaction must see the same snapshot.
                        let (accounts, flows) = try await db.read { tx in
                            (
                                try LedgerAccount.fetchAll(tx),
                                try tx.fetchAll(
                                    sql:
                                        #"SELECT "from", "to", SUM(amount) AS amount FROM "LedgerTransfer" GROUP BY 1, 2"#
                                )
                            )
                        }
                        snapshots.withLock { _ = $0.insert(flows.count) }
                        let sum = accounts.reduce(0) { $0 + $1.balance }
                        if accounts.count != Self.accounts || sum != Self.total {
                            failures.record("reader \(reader): \(accounts.count) accounts totalling \(sum)")
                        }
                        let expected = Self.balances(
                            after: flows.map {
                                (
                                    Int($0["from"]?.intValue ?? 0), Int($0["to"]?.intValue ?? 0),
                                    Int($0["amount"]?.intValue ?? 0)
                                )
                            })
                        for account in accounts where expected[account.accountId] != account.balance {
                            failures.record(
                                "reader \(reader): account \(account.accountId) has \(account.balance), its transfers say \(expected[account.accountId] ?? 0)"
                            )
                        }
                        // A single statement outside a transaction is consistent too.
                        let row = try db.fetchAll(sql: #"SELECT SUM(balance) AS total FROM "LedgerAccount""#).first
                        if row?["total"]?.intValue != Int64(Self.total) {
                            failures.record("reader \(reader): SUM(balance) = \(String(describing: row?["total"]))")
                        }
                    }
                    readsDone.withLock { $0 += reads }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                for writer in 0..<writers {
                    writersGroup.addTask {
                        var generator = SplitMix64(seed: UInt64(writer + 1))
                        for i in 0..<transactionsPerWriter {
                            try await Self.transfer(
                                db, id: writer * 10_000 + i, using: &generator, abort: i % 10 == 9)
                        }
                    }
                }
                try await writersGroup.waitForAll()
            }
            writersDone.withLock { $0 = true }
            try await group.waitForAll()
        }

        #expect(failures.all == [])
        #expect(readsDone.value >= 8 * 5)
        #expect(snapshots.value.count > 1, "the readers never saw the writers at work")
        // Every writer's committed transfers are there, and none of the rolled-back ones.
        let transfers = try LedgerTransfer.fetchAll(db)
        #expect(transfers.count == writers * transactionsPerWriter * 9 / 10)
        #expect(transfers.allSatisfy { $0.transferId % 10_000 % 10 != 9 })
        let accounts = try LedgerAccount.fetchAll(db, order: "accountId")
        #expect(accounts.reduce(0) { $0 + $1.balance } == Self.total)
        let expected = Self.balances(after: transfers.map { ($0.from, $0.to, $0.amount) })
        #expect(accounts.map(\.balance) == (1...Self.accounts).map { expected[$0] ?? 0 })
    }

    @Test func everyReadSeesEveryWriteThatReturnedBeforeIt() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let tasks = 8, writesPerTask = 100
        let returnedWrites = TestLocked(0)
        let failures = Failures()

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    do {
                        for i in 0..<writesPerTask {
                            let id = task * 1_000 + i
                            // Half the tasks use the synchronous verbs, half the async transaction.
                            if task % 2 == 0 {
                                try makeUser(id, age: i).insert(db)
                            } else {
                                try await db.write { tx in try makeUser(id, age: i).insert(tx) }
                            }
                            returnedWrites.withLock { $0 += 1 }

                            // The task's own write, right away, through every read path.
                            if try User.fetchOne(db, key: id)?.age != i {
                                failures.record("fetchOne missed \(id)")
                            }
                            if try !User.check(db, key: id) { failures.record("check missed \(id)") }
                            if try await !db.read({ tx in try User.check(tx, key: id) }) {
                                failures.record("read { } missed \(id)")
                            }
                            // Every write any task saw return before this read began.
                            let floor = returnedWrites.value
                            let count = try User.count(db)
                            if count < floor { failures.record("count \(count) < \(floor) returned writes") }
                        }
                    } catch {
                        failures.record("task \(task): \(error)")
                    }
                }
            }
        }

        #expect(failures.all == [])
        #expect(try User.count(db) == tasks * writesPerTask)
    }

    @Test func synchronousCallsFromManyThreads() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try LedgerAccount(accountId: 1, balance: 0).insert(db)
        let threads = 16, iterations = 50
        let failures = Failures()

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                for i in 0..<iterations {
                    // Read-modify-write in one transaction: a lost update would leave the counter short.
                    try db.write { tx in
                        guard var counter = try LedgerAccount.fetchOne(tx, key: 1) else {
                            throw GQLError(.notFound, "the counter is missing")
                        }
                        counter.balance += 1
                        try counter.update(tx)
                    }
                    let id = thread * 1_000 + i
                    try makeUser(id, age: thread).insert(db)
                    if try User.fetchOne(db, key: id) == nil { failures.record("thread \(thread) missed \(id)") }
                    let seen = try db.read { tx in try User.count(tx, "age = ?", [thread]) }
                    if seen != i + 1 { failures.record("thread \(thread) saw \(seen) of its \(i + 1) rows") }
                }
            } catch {
                failures.record("thread \(thread): \(error)")
            }
        }

        #expect(failures.all == [])
        #expect(try LedgerAccount.fetchOne(db, key: 1)?.balance == threads * iterations)
        #expect(try User.count(db) == threads * iterations)
    }

    @Test func firstUseOfATypeFromManyThreadsCreatesItsTableOnce() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let failures = Failures()

        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                try LedgerTransfer(transferId: thread, from: thread, to: thread + 1, amount: 1).insert(db)
                _ = try LedgerAccount.count(db)
            } catch {
                failures.record("thread \(thread): \(error)")
            }
        }

        #expect(failures.all == [])
        #expect(try LedgerTransfer.count(db) == 8)
        #expect(try db.tableNames().filter { $0.hasPrefix("Ledger") } == ["LedgerAccount", "LedgerTransfer"])
    }

    @Test func twoDatabaseObjectsOnOneFileWriteAndReadConsistently() async throws {
        let temp = try TempDatabase()
        let first = temp.db
        try first.register(User.self)
        let second = try GQLDatabase(path: temp.path)
        try second.register(User.self)
        let failures = Failures()

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    // Even tasks write through the first object and read through the second, odd ones the reverse.
                    let (writer, reader) = task % 2 == 0 ? (first, second) : (second, first)
                    do {
                        for i in 0..<100 {
                            let id = task * 1_000 + i
                            try await writer.write { tx in try makeUser(id, age: task).insert(tx) }
                            if try User.fetchOne(reader, key: id) == nil {
                                failures.record("task \(task): the other database object missed \(id)")
                            }
                        }
                    } catch {
                        failures.record("task \(task): \(error)")
                    }
                }
            }
        }

        #expect(failures.all == [])
        #expect(try User.count(first) == 800)
        #expect(try User.count(second) == 800)
        #expect(try first.fetchAll(sql: "PRAGMA integrity_check").first?["integrity_check"] == "ok")
    }

    @Test func readsDuringAnOpenWriteSeeTheLastCommitWithoutWaiting() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let seenDuringWrite = TestLocked<(count: Int, exists: Bool)?>(nil)

        // The transaction stays open while it waits for the reader: on a thread of its own, not one the tests
        // running in parallel share.
        let seenInside = try await onThread {
            try db.write { tx in
                try makeUser(2).insert(tx)
                let inside = try User.count(tx)
                // Another thread reads while this transaction is open; waiting for it here would deadlock if
                // reads waited for the writer.
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    let result = try? (User.count(db), User.check(db, key: 2))
                    seenDuringWrite.withLock { $0 = result.map { (count: $0.0, exists: $0.1) } }
                    done.signal()
                }
                done.wait()
                return inside
            }
        }
        #expect(seenInside == 2)  // the transaction sees itself

        let seen = seenDuringWrite.withLock { $0 }
        #expect(seen?.count == 1)
        #expect(seen?.exists == false)
        #expect(try User.count(db) == 2)
    }

    @Test func observersHearExactlyOneEventPerCommittedRowUnderConcurrentWrites() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let tasks = 8, transactionsPerTask = 50, rowsPerTransaction = 3
        let all = ObservedChanges(), even = ObservedChanges()
        _ = try User.createObserver(db, [.insert], nil, all.callback)
        _ = try User.createObserver(db, [.insert], "OBJ.age % 2 = 0", even.callback)
        let stream = User.observe(db, [.insert])
        let committed = TestLocked<Set<Int>>([])

        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    struct Abort: Error {}
                    for t in 0..<transactionsPerTask {
                        let ids = (0..<rowsPerTransaction).map { task * 10_000 + t * 10 + $0 }
                        let abort = t % 5 == 4
                        do {
                            try await db.write { tx in
                                for id in ids { try makeUser(id, age: id).insert(tx) }
                                if abort { throw Abort() }
                            }
                            committed.withLock { $0.formUnion(ids) }
                        } catch is Abort {}
                    }
                }
            }
            try await group.waitForAll()
        }
        await db.observersIdle()

        let expected = committed.withLock { $0 }
        #expect(expected.count == tasks * transactionsPerTask * 4 / 5 * rowsPerTransaction)
        let keys = all.all.compactMap { $0.key.intValue.map(Int.init) }
        #expect(keys.count == expected.count)
        #expect(Set(keys) == expected)
        #expect(all.all.allSatisfy { $0.type == .insert })
        let evenKeys = even.all.compactMap { $0.key.intValue.map(Int.init) }
        #expect(evenKeys.count == expected.filter { $0 % 2 == 0 }.count)
        #expect(Set(evenKeys) == expected.filter { $0 % 2 == 0 })
        // Callbacks run in commit order, so each task's rows arrive in the order it wrote them.
        for task in 0..<tasks {
            let own = keys.filter { $0 / 10_000 == task }
            #expect(own == own.sorted(), "task \(task)'s rows arrived out of commit order")
        }

        // The AsyncSequence saw the same changes, in the same order.
        var streamed: [Int] = []
        for try await change in stream {
            streamed.append(Int(change.key.intValue ?? -1))
            if streamed.count == expected.count { break }
        }
        #expect(streamed == keys)
    }
}

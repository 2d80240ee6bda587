import Foundation
import GQLCore

/// A small pool of read-only connections. WAL lets them read while the writer writes; each statement
/// starts a fresh snapshot, so a read sees every write that returned before it began.
final class ReaderPool: @unchecked Sendable {
    // Safety: `idle`, `open`, `holders`, `isClosed` and `isSuspended` are only touched with `condition` locked; a
    // checked-out connection is used by one thread until it is returned. The lock already makes every access to
    // them exclusive, so the runtime's exclusivity check of each access (`swift_beginAccess`, about 40 instructions
    // a time, ten a read) is turned off for them: no access to them is held across a call.
    private let condition = NSCondition()
    @exclusivity(unchecked) private var idle: [Connection] = []
    @exclusivity(unchecked) private var open = 0
    /// The reader each thread holds while inside `read` (at most ``maximum`` entries: a short list is searched
    /// faster than a dictionary is hashed).
    @exclusivity(unchecked) private var holders: [(thread: UInt, connection: Connection)] = []
    @exclusivity(unchecked) private var isClosed = false
    /// Set while ``suspend()`` holds the pool: reads wait for ``resume()``.
    @exclusivity(unchecked) private var isSuspended = false
    private let maximum: Int
    private let makeConnection: () throws -> Connection

    init(maximum: Int, makeConnection: @escaping () throws -> Connection) {
        self.maximum = max(1, maximum)
        self.makeConnection = makeConnection
    }

    /// Runs `body` with a reader. A read nested in another read on the same thread (say, a verb called with
    /// the database inside `db.read { }`) shares the outer reader instead of waiting for a second one, which
    /// could wait forever once every reader is held by an outer read.
    ///
    /// The lock is taken once to check a reader out (the nested-read check, the wait, the hand-out) and once to
    /// check it back in: every read of the dev server's event loops passes here, and at 16 connections the two
    /// loops meet on this lock.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let thread = Writer.currentThread
        condition.lock()
        if let held = holders.first(where: { $0.thread == thread })?.connection {
            condition.unlock()
            return try body(held)
        }
        let connection = try checkOut(for: thread)
        defer { checkIn(connection, from: thread) }
        return try body(connection)
    }

    /// Takes an idle reader (or opens one) for `thread`; called with `condition` locked, returns with it unlocked.
    private func checkOut(for thread: UInt) throws -> Connection {
        while (isSuspended || (idle.isEmpty && open >= maximum)) && !isClosed { condition.wait() }
        guard !isClosed else {
            condition.unlock()
            throw GQLError(.closed, "the database was closed", operation: "read")
        }
        if let connection = idle.popLast() {
            holders.append((thread, connection))
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        let connection: Connection
        do {
            connection = try makeConnection()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
        condition.lock()
        holders.append((thread, connection))
        condition.unlock()
        return connection
    }

    private func checkIn(_ connection: Connection, from thread: UInt) {
        condition.lock()
        if let index = holders.firstIndex(where: { $0.thread == thread }) {
            holders.swapAt(index, holders.count - 1)
            holders.removeLast()
        }
        idle.append(connection)
        // A close() or suspend() waits for every reader to come back; wake it along with any read.
        if isClosed || isSuspended { condition.broadcast() } else { condition.signal() }
        condition.unlock()
    }

    /// Refuses new reads, waits for the reads in progress to end, and closes every connection.
    func close() throws {
        condition.lock()
        defer { condition.unlock() }
        if holders.contains(where: { $0.thread == Writer.currentThread }) {
            throw GQLError(
                .invalidArgument, "the database cannot be closed from inside one of its own reads",
                operation: "close")
        }
        isClosed = true
        condition.broadcast()
        while idle.count < open { condition.wait() }
        for connection in idle { connection.close() }
        open = 0
        idle.removeAll()
    }

    /// Waits for the reads in progress, closes every connection and holds new reads until ``resume()``: for a change
    /// of the file under the pool (rekey).
    func suspend() throws {
        condition.lock()
        defer { condition.unlock() }
        if holders.contains(where: { $0.thread == Writer.currentThread }) {
            throw GQLError(
                .invalidArgument, "the database cannot be rekeyed from inside one of its own reads", operation: "rekey")
        }
        isSuspended = true
        while idle.count < open { condition.wait() }
        for connection in idle { connection.close() }
        open = 0
        idle.removeAll()
    }

    /// Lets reads go on after ``suspend()``; they open new connections.
    func resume() {
        condition.lock()
        isSuspended = false
        condition.broadcast()
        condition.unlock()
    }

    /// Closes the idle connections (they reopen on demand), e.g. after the schema changed.
    func drain() {
        condition.lock()
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}

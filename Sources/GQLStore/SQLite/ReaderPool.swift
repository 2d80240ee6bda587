import Foundation
import GQLCore

/// A small pool of read-only connections. WAL lets them read while the writer writes; each statement
/// starts a fresh snapshot, so a read sees every write that returned before it began.
final class ReaderPool: @unchecked Sendable {
    // Safety: `idle`, `open` and `holders` are only touched with `condition` locked; a checked-out connection is
    // used by one thread until it is returned.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    /// The reader each thread holds while inside `read`.
    private var holders: [UInt: Connection] = [:]
    private var isClosed = false
    /// Set while ``suspend()`` holds the pool: reads wait for ``resume()``.
    private var isSuspended = false
    private let maximum: Int
    private let makeConnection: () throws -> Connection

    init(maximum: Int, makeConnection: @escaping () throws -> Connection) {
        self.maximum = max(1, maximum)
        self.makeConnection = makeConnection
    }

    /// Runs `body` with a reader. A read nested in another read on the same thread (say, a verb called with
    /// the database inside `db.read { }`) shares the outer reader instead of waiting for a second one, which
    /// could wait forever once every reader is held by an outer read.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let thread = Writer.currentThread
        condition.lock()
        if let held = holders[thread] {
            condition.unlock()
            return try body(held)
        }
        condition.unlock()
        let connection = try checkOut()
        condition.lock()
        holders[thread] = connection
        condition.unlock()
        defer {
            condition.lock()
            holders[thread] = nil
            condition.unlock()
            checkIn(connection)
        }
        return try body(connection)
    }

    private func checkOut() throws -> Connection {
        condition.lock()
        while (isSuspended || (idle.isEmpty && open >= maximum)) && !isClosed { condition.wait() }
        guard !isClosed else {
            condition.unlock()
            throw GQLError(.closed, "the database was closed", operation: "read")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try makeConnection()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: Connection) {
        condition.lock()
        idle.append(connection)
        // A close() or suspend() waits for every reader to come back; wake it along with any read.
        if isClosed || isSuspended { condition.broadcast() } else { condition.signal() }
        condition.unlock()
    }

    /// Refuses new reads, waits for the reads in progress to end, and closes every connection.
    func close() throws {
        condition.lock()
        defer { condition.unlock() }
        if holders[Writer.currentThread] != nil {
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
        if holders[Writer.currentThread] != nil {
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

import Foundation
import GQLCore

/// A small pool of read-only connections. WAL lets them read while the writer writes; each statement
/// starts a fresh snapshot, so a read sees every write that returned before it began.
final class ReaderPool: @unchecked Sendable {
    // Safety: `idle` and `open` are only touched with `condition` locked; a checked-out connection is
    // used by one thread until it is returned.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private let maximum: Int
    private let makeConnection: () throws -> Connection

    init(maximum: Int, makeConnection: @escaping () throws -> Connection) {
        self.maximum = max(1, maximum)
        self.makeConnection = makeConnection
    }

    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws -> Connection {
        condition.lock()
        while idle.isEmpty && open >= maximum { condition.wait() }
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
        condition.signal()
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

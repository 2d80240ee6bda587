import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The delivery loop's record of delivered items between two outbox commits: a small file beside the database,
/// `<database>-gqlsync-<engine>.journal`: a 16-byte header naming the outbox, then one 16-byte record appended per
/// delivered item.
///
/// "At most one repeat per crash" asks that an answered item be recorded before the next one leaves. A SQLite
/// commit per item did that at about a tenth of a loopback round trip; an append (`pwrite`, no flush) does it for a
/// fraction of that, and is as safe against a killed process as a commit at `synchronous = NORMAL`: the bytes are in
/// the operating system's cache when the call returns. The outbox deletes the recorded items in one transaction
/// now and then (``OutboxStore/consolidate(in:)``), then empties the file; an engine opened on the outbox deletes
/// whatever the file still names first, so a record outlives a crash. A power loss may take back the last records
/// (then those items are sent again, with their idempotency keys), as it may the `NORMAL` commits.
///
/// It also keeps the loop's read-ahead: the next pending items, read in one query, handed out one by one while they
/// are `steady` (an item no call can merge into, so nothing about it changes before it is sent).
final class DeliveryJournal: Sendable {
    /// An item read ahead, with its mode when it was read (`lazy` may have turned `steady` since, never back).
    struct Ahead: Sendable {
        var mode: OutboxMode
        var item: OutboxItem
    }

    struct State {
        /// The recorded ids, in order, and as a set.
        var ids: [Int64] = []
        var recorded: Set<Int64> = []
        /// Items read ahead, in call order, all with ids above `cursor`.
        var window: [Ahead] = []
        /// The largest id handed out or read ahead; the next read starts after it.
        var cursor: Int64 = 0
        /// The item handed out by the read-ahead whose attempt is not in the outbox yet.
        var unrecorded: Int64?
        /// The items the last step handed out: the next step may go without the outbox only when they all came
        /// back delivered (one kept for a retry must be sent again before anything behind it).
        var handedOut: [Int64] = []
        /// Something was put back in the queue (a retry): read from the start again.
        var stale = false
    }

    /// How many records make the loop consolidate them into the outbox.
    static let capacity = 256
    private static let magic: UInt64 = 0x6771_7379_6e63_6a31  // "gqsyncj1"
    private static let headerMagic: UInt64 = 0x6771_7379_6e63_6831  // "gqsynch1"

    let path: String
    let state: GQLLocked<State>
    private let descriptor: Int32

    /// Opens (or creates) the journal at `path` and reads the records a previous run of the same outbox left.
    ///
    /// The file starts with the outbox's `identity` (a random number kept in the outbox's tables): a journal
    /// left beside a database that was deleted and made again names ids of another outbox, and is emptied
    /// unread rather than allowed to delete the new outbox's items.
    init(path: String, identity: UInt64) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw GQLError(.io, "cannot open the delivery journal \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        self.path = path
        var state = State()
        var record = [UInt64](repeating: 0, count: 2)
        let header = [identity.littleEndian, (identity ^ Self.headerMagic).littleEndian]
        let headerRead = record.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
        if headerRead == 16, record == header {
            var offset: off_t = 16
            while true {
                let read = record.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, offset) }
                // A short or foreign last record was never completed, so its item was never followed by a send.
                guard read == 16, record[1] == UInt64(littleEndian: record[0]) ^ Self.magic else { break }
                let id = Int64(bitPattern: UInt64(littleEndian: record[0]))
                state.ids.append(id)
                state.recorded.insert(id)
                offset += 16
            }
        } else {
            let written = header.withUnsafeBytes { bytes -> Int in
                guard ftruncate(fd, 0) == 0 else { return -1 }
                return pwrite(fd, bytes.baseAddress, 16, 0)
            }
            guard written == 16 else {
                close(fd)
                throw GQLError(.io, "cannot start the delivery journal \(path): \(String(cString: strerror(errno)))")
            }
        }
        self.state = GQLLocked(state)
    }

    deinit { close(descriptor) }

    /// The journal of `engine` for the database at `databasePath`, or nil for a database without a file.
    static func path(database databasePath: String, engine: String) -> String? {
        guard !databasePath.isEmpty, databasePath != ":memory:", !databasePath.hasPrefix("file:") else { return nil }
        let safe = String(engine.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        return "\(databasePath)-gqlsync-\(safe).journal"
    }

    /// Appends a record of `id`; returns how many records there are now.
    func append(_ id: Int64) throws -> Int {
        try state.withLock { state in
            try write(id, into: &state)
            return state.ids.count
        }
    }

    /// Writes the record of `id` after the others (lock held).
    private func write(_ id: Int64, into state: inout State) throws {
        let raw = UInt64(bitPattern: id)
        let record = [raw.littleEndian, (raw ^ Self.magic).littleEndian]
        let offset = off_t(16 + state.ids.count * 16)
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 16, offset) }
        guard written == 16 else {
            throw GQLError(.io, "cannot append to the delivery journal \(path): \(String(cString: strerror(errno)))")
        }
        state.ids.append(id)
        state.recorded.insert(id)
    }

    /// Forgets the first `count` records (the outbox deleted their items): the file is emptied but for its
    /// header, and records appended since are written again.
    func drop(first count: Int) throws {
        try state.withLock { state in
            let kept = Array(state.ids.dropFirst(count))
            guard ftruncate(descriptor, 16) == 0 else {
                throw GQLError(.io, "cannot empty the delivery journal \(path): \(String(cString: strerror(errno)))")
            }
            state.ids = []
            state.recorded = []
            for id in kept { try write(id, into: &state) }
        }
    }

    /// The recorded ids.
    var recorded: Set<Int64> { state.withLock { $0.recorded } }

    /// Drops the read-ahead: the queue changed behind it (an item was put back).
    func invalidate() {
        state.withLock { $0.stale = true }
    }

    /// Removes the file when it holds no record (an engine shutting down).
    func removeIfEmpty() {
        state.withLock { state in
            if state.ids.isEmpty { unlink(path) }
        }
    }
}

import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The outbox's record of removed (delivered) items between two of its commits: a small file beside the database,
/// `<database>-gqlsync-<engine>.journal`: a 16-byte header naming the outbox, then one 16-byte record per removed
/// item, after the others; the rest of the file is zeros.
///
/// "At most one repeat per crash" asks that an answered item be recorded before the next one leaves. A SQLite
/// commit per item did that at about a tenth of a loopback round trip; a record written into the file's shared
/// memory mapping (two stores, no system call; `pwrite` past the mapping) does it for a fraction of that, and is as
/// safe against a killed process as a commit at `synchronous = NORMAL`: the bytes are in the operating system's
/// cache of the file once stored, whatever happens to the process. The outbox deletes the recorded items in one transaction
/// now and then (``OutboxStore/advance(remove:setAside:claim:)``), then empties the file; an engine opened on the outbox deletes
/// whatever the file still names first, so a record outlives a crash. A power loss may take back the last records
/// (then those items are sent again, with their idempotency keys), as it may the `NORMAL` commits.
///
/// It also keeps the claim's read-ahead: the next pending items, read in one query, handed out one by one while they
/// are `steady` (an item no call can merge into, so nothing about it changes before it is sent).
///
/// The journal belongs to the outbox (``OutboxStore``), which alone calls it; its state stays behind its own lock,
/// and every step of a claim that reads or changes it is one method here, under one lock.
final class OutboxJournal: Sendable {
    /// An item read ahead, with its mode when it was read (`lazy` may have turned `steady` since, never back).
    struct Ahead: Sendable {
        var mode: OutboxMode
        var item: OutboxItem
    }

    private struct State {
        /// The recorded ids, in order, and as a set.
        var ids: [Int64] = []
        var recorded: Set<Int64> = []
        /// Items read ahead, in reverse call order (the next one last), all with ids up to `cursor`.
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
    /// How many records an engine reads at open, at most.
    static let readLimit = 16 * capacity
    private static let magic: UInt64 = 0x6771_7379_6e63_6a31  // "gqsyncj1"
    private static let headerMagic: UInt64 = 0x6771_7379_6e63_6831  // "gqsynch1"

    let path: String
    private let state: GQLLocked<State>
    private let descriptor: Int32
    /// The first `Self.mappedSize` bytes of the file, mapped shared. Read and written only with `state`'s lock
    /// held (``write(_:into:)``, ``drop(first:)``), and unmapped only in `deinit`, when nothing else can reach
    /// it: this is what makes the raw pointer safe to keep in a `Sendable` class.
    nonisolated(unsafe) private let mapping: UnsafeMutableRawPointer
    /// The header and `capacity` records, rounded up to whole pages.
    private static let mappedSize = 8192

    /// Opens (or creates) the journal at `path` and reads the records a previous run of the same outbox left.
    ///
    /// The file starts with the outbox's `identity` (a random number kept in the outbox's tables): a journal
    /// left beside a database that was deleted and made again names ids of another outbox, and is emptied
    /// unread rather than allowed to delete the new outbox's items.
    init(path: String, identity: UInt64) throws {
        // Not through a symbolic link: a journal that is not its outbox's is emptied, and the link's target with it.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw GQLError(.io, "cannot open the delivery journal \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        var state = State()
        var record = [UInt64](repeating: 0, count: 2)
        let header = [identity.littleEndian, (identity ^ Self.headerMagic).littleEndian]
        let headerRead = record.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
        if headerRead == 16, record == header {
            var offset: off_t = 16
            // The loop never writes many more than `capacity` records; a longer file was not written by it, and
            // reading it all could take any amount of memory. Records past the limit are left unread: their items,
            // if they are in the outbox, are sent again, with their idempotency keys.
            while state.ids.count < Self.readLimit {
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
        // The mapping must not reach past the end of the file; the zeros read as "no record".
        var status = stat()
        guard fstat(fd, &status) == 0,
            status.st_size >= off_t(Self.mappedSize) || ftruncate(fd, off_t(Self.mappedSize)) == 0,
            let address = mmap(nil, Self.mappedSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw GQLError(.io, "cannot map the delivery journal \(path): \(reason)")
        }
        descriptor = fd
        mapping = address
        self.state = GQLLocked(state)
    }

    deinit {
        munmap(mapping, Self.mappedSize)
        close(descriptor)
    }

    /// The journal of `engine` for the database at `databasePath`, or nil for a database without a file.
    ///
    /// Two engines never share a file: letters, digits, `.`, `-` and `_` stand for themselves (so a name made of
    /// them, as every default name is, keeps the file it always had), and every other character is written as `%`
    /// and the hex of its UTF-8 bytes. (Writing them all as `_` gave `notes v1` and `notes_v1` one journal, each
    /// engine emptying the other's at open.)
    ///
    /// A file name longer than 255 bytes (which file systems refuse: opening failed with ENAMETOOLONG) keeps the
    /// start of the written name that fits, then `~` (always `%7E` in a written name, so never the name of a shorter
    /// engine's journal) and 32 hex digits of two 64-bit FNV-1a hashes of the whole engine name. They tell apart the
    /// names an app gives its engines, not names made to collide.
    static func path(database databasePath: String, engine: String) -> String? {
        guard !databasePath.isEmpty, databasePath != ":memory:", !databasePath.hasPrefix("file:") else { return nil }
        var safe = ""
        for character in engine {
            if character.isLetter || character.isNumber || character == "." || character == "-" || character == "_" {
                safe.append(character)
            } else {
                for byte in String(character).utf8 {
                    safe += (byte < 16 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
                }
            }
        }
        let base = databasePath.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        let (prefix, suffix) = ("-gqlsync-", ".journal")
        let nameMax = 255
        guard base.utf8.count + prefix.utf8.count + safe.utf8.count + suffix.utf8.count > nameMax else {
            return "\(databasePath)\(prefix)\(safe)\(suffix)"
        }
        let digest = NameDigest.tilde(engine)
        let room = nameMax - base.utf8.count - prefix.utf8.count - suffix.utf8.count - digest.utf8.count
        var kept = ""
        for character in safe {
            guard kept.utf8.count + character.utf8.count <= room else { break }
            kept.append(character)
        }
        return "\(databasePath)\(prefix)\(kept)\(digest)\(suffix)"
    }

    /// Appends a record of `id`; returns how many records there are now.
    func append(_ id: Int64) throws -> Int {
        try state.withLock { state in try append(id, into: &state) }
    }

    /// ``append(_:)`` for a caller that holds the lock and passes its `state`.
    private func append(_ id: Int64, into state: inout State) throws -> Int {
        try write(id, into: &state)
        return state.ids.count
    }

    /// Writes the record of `id` after the others (lock held): the id first, then the word that completes it, so a
    /// process killed between the two leaves a record that reads as never written.
    private func write(_ id: Int64, into state: inout State) throws {
        let raw = UInt64(bitPattern: id)
        let offset = 16 + state.ids.count * 16
        if offset + 16 <= Self.mappedSize {
            mapping.storeBytes(of: raw.littleEndian, toByteOffset: offset, as: UInt64.self)
            mapping.storeBytes(of: (raw ^ Self.magic).littleEndian, toByteOffset: offset + 8, as: UInt64.self)
        } else {
            let record = [raw.littleEndian, (raw ^ Self.magic).littleEndian]
            let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 16, off_t(offset)) }
            guard written == 16 else {
                throw GQLError(
                    .io, "cannot append to the delivery journal \(path): \(String(cString: strerror(errno)))")
            }
        }
        state.ids.append(id)
        state.recorded.insert(id)
    }

    /// Forgets the first `count` records (the outbox deleted their items): every record is cleared (and the file
    /// cut back to the mapping, should records have gone past it), and records appended since are written again.
    func drop(first count: Int) throws {
        try state.withLock { state in
            let kept = Array(state.ids.dropFirst(count))
            if 16 + state.ids.count * 16 > Self.mappedSize, ftruncate(descriptor, off_t(Self.mappedSize)) != 0 {
                throw GQLError(.io, "cannot empty the delivery journal \(path): \(String(cString: strerror(errno)))")
            }
            (mapping + 16).initializeMemory(as: UInt8.self, repeating: 0, count: Self.mappedSize - 16)
            state.ids = []
            state.recorded = []
            for id in kept { try write(id, into: &state) }
        }
    }

    /// The recorded ids.
    var recorded: Set<Int64> { state.withLock { $0.recorded } }

    /// The recorded ids, in the order they were recorded.
    var recordedInOrder: [Int64] { state.withLock { $0.ids } }

    /// Whether no record waits for the outbox's next commit.
    var isEmpty: Bool { state.withLock { $0.ids.isEmpty } }

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

    // MARK: The claim's steps

    /// What the usual step of a one-per-request drain found, under one lock (``step(delivered:)``).
    enum Step {
        /// The next item, from the read-ahead, its attempt counted in memory.
        case item(OutboxItem)
        /// The read-ahead is used up: read the items after `after`, leaving out the recorded ones
        /// (``handOut(readAhead:)``).
        case readAhead(after: Int64, excluding: Set<Int64>)
        /// The step needs an outbox commit.
        case needsOutbox
    }

    /// The usual step of a one-per-request drain without a commit: `delivered` (the items the last step handed
    /// out, when they all came back delivered: none or one) is recorded, and the next item comes from the
    /// read-ahead when it is `steady`. `.needsOutbox` when an item handed out was kept for a retry, the journal is
    /// full, something was put back, or the next item is `lazy`.
    func step(delivered: [Int64]) throws -> Step {
        try state.withLock { state in
            guard state.handedOut.allSatisfy(delivered.contains) else { return .needsOutbox }
            if let delivered = delivered.first {
                state.unrecorded = nil
                guard try append(delivered, into: &state) < Self.capacity else { return .needsOutbox }
            }
            guard !state.stale else { return .needsOutbox }
            guard !state.window.isEmpty else { return .readAhead(after: state.cursor, excluding: state.recorded) }
            return Self.handOut(&state).map(Step.item) ?? .needsOutbox
        }
    }

    /// Keeps `ahead` (items read after ``Step/readAhead(after:excluding:)``, in call order) as the read-ahead and
    /// hands out the first; nil when there is none, or it is `lazy`.
    func handOut(readAhead ahead: [Ahead]) -> OutboxItem? {
        guard let last = ahead.last else { return nil }
        return state.withLock { state in
            state.window = ahead.reversed()
            state.cursor = last.item.id
            return Self.handOut(&state)
        }
    }

    /// The next read-ahead item when it is `steady`, its attempt counted in memory; nil (and the read-ahead
    /// dropped) when it is `lazy`.
    private static func handOut(_ state: inout State) -> OutboxItem? {
        guard let next = state.window.popLast(), next.mode == .steady else {
            state.window = []
            return nil
        }
        state.unrecorded = next.item.id
        state.handedOut.removeAll(keepingCapacity: true)
        state.handedOut.append(next.item.id)
        var item = next.item
        item.attempts += 1
        return item
    }

    /// What the outbox's next commit takes over: the recorded ids (to delete) and the item the read-ahead handed
    /// out whose attempt is not in the outbox yet (to count). The read-ahead is dropped: the commit claims anew.
    func beginCommit() -> (ids: [Int64], unrecorded: Int64?) {
        state.withLock { state in
            defer {
                state.unrecorded = nil
                state.window = []
                state.stale = false
            }
            return (state.ids, state.unrecorded)
        }
    }

    /// That commit is done: its first `deleted` records are forgotten, and the items it `claimed` (in call order)
    /// are the ones handed out.
    func endCommit(deleted: Int, claimed: [Int64]) throws {
        try drop(first: deleted)
        state.withLock { state in
            state.cursor = claimed.last ?? 0
            state.handedOut = claimed
        }
    }
}

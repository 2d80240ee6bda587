import Dispatch
import Foundation
import GQLCore
import GQLCrypto
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The temporary file a streamed download writes, on a thread of its own: the response's chunks are handed over as
/// they arrive (``append(_:)``) and written (with write(2), straight from the response's buffers) and, when the
/// answer allows a check of its body (``BodyCheck``: the MD5 its ETag is, or S3's whole-object CRC), hashed there,
/// so that receiving the next chunks and writing the last ones run side by side rather than in turn. At most ``limit`` bytes wait to be written; past it ``append(_:)`` waits for room, so memory
/// stays flat however large the object. While the writer keeps up, each chunk costs one lock, no wake-up: the
/// thread is only woken when it had run dry.
///
/// Every download ends with ``finish()`` (all written; the digest when one was asked for) or ``abandon()`` (what is
/// queued is dropped); both return once the thread is done with the file, which is then closed.
final class DownloadFile: Sendable {
    /// The most bytes waiting to be written at once.
    static let limit = 4 << 20

    private struct State {
        var chunks: [ByteBuffer] = []
        var queuedBytes = 0
        /// No more chunks come: the thread writes what is queued, then ends.
        var isFinished = false
        /// Stop at once, writing nothing more.
        var isAbandoned = false
        /// Whether the thread waits for ``wake``.
        var isIdle = false
        /// The thread's failure; later appends throw it.
        var failure: GQLError?
        /// The end: the digest when one was asked for, or the failure.
        var outcome: Result<[UInt8]?, GQLError>?
        var waitingForRoom: CheckedContinuation<Void, Never>?
        var waitingForEnd: CheckedContinuation<Result<[UInt8]?, GQLError>, Never>?
    }

    let path: String
    private let descriptor: Int32
    private let operation: String
    private let state = GQLLocked(State())
    private let wake = DispatchSemaphore(value: 0)

    /// Creates `path` (mode 0666 less the umask, as `FileManager.createFile` does), or empties it, and starts its
    /// writer; with a `check`, it also computes that digest (``BodyCheck``) of everything written.
    init(creating path: String, check: BodyCheck.Kind?, operation: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw GQLError(.io, "cannot create \(path): \(String(cString: strerror(errno)))", operation: operation)
        }
        self.path = path
        self.descriptor = descriptor
        self.operation = operation
        let thread = Thread { [self] in run(check: check) }
        thread.name = "GQLStorage download"
        thread.start()
    }

    deinit { close(descriptor) }

    /// Queues `chunk` for the file, first waiting while ``limit`` bytes wait already.
    /// - Throws: the writer's ``GQLError`` `.io` once a write failed.
    func append(_ chunk: ByteBuffer) async throws {
        let (wakes, full) = try state.withLock { state in
            if let failure = state.failure { throw failure }
            state.chunks.append(chunk)
            state.queuedBytes += chunk.readableBytes
            defer { state.isIdle = false }
            return (state.isIdle, state.queuedBytes > Self.limit)
        }
        if wakes { wake.signal() }
        guard full else { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.queuedBytes > Self.limit, state.failure == nil else { return true }
                state.waitingForRoom = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Waits until everything queued is written; the digest of the whole body when the file was made with a check.
    func finish() async throws -> [UInt8]? {
        try await end(abandoning: false).get()
    }

    /// Drops what is queued and waits until the writer has stopped.
    func abandon() async {
        _ = await end(abandoning: true)
    }

    private func end(abandoning: Bool) async -> Result<[UInt8]?, GQLError> {
        await withCheckedContinuation { continuation in
            let (outcome, wakes) = state.withLock { state in
                state.isFinished = true
                if abandoning { state.isAbandoned = true }
                if let outcome = state.outcome { return (Optional(outcome), false) }
                state.waitingForEnd = continuation
                defer { state.isIdle = false }
                return (nil, state.isIdle)
            }
            if let outcome { continuation.resume(returning: outcome) }
            if wakes { wake.signal() }
        }
    }

    /// The writer thread: takes what is queued, writes and hashes it, until ``finish()`` or ``abandon()``.
    private func run(check: BodyCheck.Kind?) {
        var running: BodyCheck.Running?
        var failure: GQLError?
        if let check {
            do { running = try BodyCheck.Running(check) } catch {
                failure = error as? GQLError ?? GQLError(.crypto, "\(error)")
            }
        }
        while failure == nil {
            let (batch, ends) = state.withLock { state -> ([ByteBuffer], Bool) in
                if state.isAbandoned { return ([], true) }
                if state.chunks.isEmpty {
                    state.isIdle = !state.isFinished
                    return ([], state.isFinished)
                }
                defer { state.chunks.removeAll(keepingCapacity: true) }
                return (state.chunks, false)
            }
            if ends { break }
            if batch.isEmpty {
                wake.wait()
                continue
            }
            var written = 0
            do {
                for chunk in batch {
                    try write(chunk)
                    try chunk.withUnsafeReadableBytes { try running?.update($0) }
                    written += chunk.readableBytes
                }
            } catch {
                failure = error as? GQLError ?? GQLError(.io, "cannot write \(path): \(error)", operation: operation)
            }
            let room = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.queuedBytes -= written
                guard failure != nil || state.queuedBytes <= Self.limit / 2 else { return nil }
                defer { state.waitingForRoom = nil }
                return state.waitingForRoom
            }
            room?.resume()
        }
        var digest: [UInt8]?
        if failure == nil, let finished = running.take() {
            do { digest = try finished.finalize() } catch { failure = error as? GQLError }
        }
        let outcome: Result<[UInt8]?, GQLError> = failure.map { .failure($0) } ?? .success(digest)
        let (room, end) = state.withLock { state in
            state.failure = failure
            state.outcome = outcome
            state.chunks = []
            defer { (state.waitingForRoom, state.waitingForEnd) = (nil, nil) }
            return (state.waitingForRoom, state.waitingForEnd)
        }
        room?.resume()
        end?.resume(returning: outcome)
    }

    /// Writes the readable bytes of `buffer` at the end of the file.
    private func write(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            guard var next = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let written = Self.systemWrite(descriptor, next, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw GQLError(
                        .io, "cannot write \(path): \(String(cString: strerror(errno)))", operation: operation)
                }
                next += written
                left -= written
            }
        }
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
        #else
            Darwin.write(descriptor, bytes, count)
        #endif
    }
}

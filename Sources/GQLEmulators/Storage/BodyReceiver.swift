import Foundation
import GQLCore
import GQLCrypto
import Hummingbird
import NIOCore

/// What an upload's body came to: a temporary file in the data folder and its digests.
struct ReceivedBody: Sendable {
    var temporary: URL
    var size: Int64
    var md5: [UInt8]
    var crc32: CRC32
    /// The CRC-64/NVME, S3's default checksum for an upload that sends none; `nil` when not asked for.
    var crc64: CRC64NVME?
    /// `aws-chunked` trailing headers (a checksum), names lowercased.
    var trailers: [(name: String, value: String)]
}

/// Streams a request body to a temporary file in the data folder — decoding `aws-chunked` and checking its
/// signatures on the way — while computing its MD5, its CRC-32, when asked its CRC-64/NVME and, when the signature
/// covers it, its SHA-256; memory stays at one write buffer whatever the size. A body that stalls longer than the body timeout, trickles
/// (fewer than `minimumRate` bytes a second over a whole body timeout), runs past its limit or its declared length,
/// or does not match its signed hash leaves nothing behind.
struct BodyReceiver: Sendable {
    let folder: GQLDataFolder
    let bodyTimeout: Duration
    /// The fewest bytes a second a body must average over each body timeout (a client sending a byte a second
    /// never stalls, yet would hold its connection and temporary file for days).
    let minimumRate: Int64
    let maxBytes: Int64
    /// Whether to compute the body's CRC-64/NVME (the upload sends one, or will get S3's default).
    var computesCRC64 = false

    /// When the last byte came, and how many came since the current window of one body timeout began.
    private struct Progress {
        var lastByte = ContinuousClock.now
        var windowStart = ContinuousClock.now
        var windowBytes: Int64 = 0
    }

    /// How much is gathered before one write to the file.
    static let writeSize = 1 << 20

    func receive(
        _ body: RequestBody, payload: SigV4Verifier.Payload, declaredLength: Int64?
    ) async throws(S3Error) -> ReceivedBody {
        let temporary: URL
        do {
            temporary = try folder.temporaryFileURL()
        } catch {
            throw S3Error(.internalError, "The upload could not be stored: \(error)")
        }
        let progress = GQLLocked(Progress())
        let (timeout, minimumBytes) = (bodyTimeout, Self.bytes(minimumRate, over: bodyTimeout))
        do {
            return try await withThrowingTaskGroup(of: ReceivedBody?.self) { group in
                group.addTask {
                    try await write(
                        body, to: temporary, payload: payload, declaredLength: declaredLength, progress: progress)
                }
                group.addTask {
                    // The watchdog: ends the upload when no byte came for `timeout`, or fewer than `minimumBytes`
                    // in a window of `timeout` (checked four times a timeout).
                    while true {
                        try await Task.sleep(for: timeout / 4)
                        let tooSlow = progress.withLock { progress in
                            let now = ContinuousClock.now
                            if now - progress.lastByte >= timeout { return true }
                            guard now - progress.windowStart >= timeout else { return false }
                            if progress.windowBytes < minimumBytes { return true }
                            (progress.windowStart, progress.windowBytes) = (now, 0)
                            return false
                        }
                        if tooSlow {
                            throw S3Error(
                                .requestTimeout,
                                "Your socket connection to the server was not read from or written to within the "
                                    + "timeout period. Idle connections will be closed.")
                        }
                    }
                }
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    if let finished { return finished }
                }
                throw S3Error(.internalError, "The upload ended without a result.")
            }
        } catch let error as S3Error {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if error is CancellationError { throw S3Error(.incompleteBody, "The upload was cancelled.") }
            throw S3Error(
                .incompleteBody, "You did not provide the number of bytes specified by the Content-Length HTTP header.")
        }
    }

    /// `rate` bytes a second over `duration`; `Int64.max` when that is more (a configured rate or timeout too
    /// large to multiply asks for more bytes than any body has), 0 for no rate.
    static func bytes(_ rate: Int64, over duration: Duration) -> Int64 {
        guard rate > 0 else { return 0 }
        let (seconds, attoseconds) = duration.components
        let (whole, wholeOverflow) = rate.multipliedReportingOverflow(by: seconds)
        let (part, partOverflow) = rate.multipliedReportingOverflow(by: attoseconds / 1_000_000_000_000_000)
        let (sum, sumOverflow) = whole.addingReportingOverflow(part / 1000)
        return wholeOverflow || partOverflow || sumOverflow ? .max : sum
    }

    private func write(
        _ body: RequestBody, to temporary: URL, payload: SigV4Verifier.Payload, declaredLength: Int64?,
        progress: GQLLocked<Progress>
    ) async throws -> ReceivedBody {
        let file = try OpenFile.creating(temporary)
        let sink = try BodySink(
            hashesSHA256: { if case .sha256 = payload { true } else { false } }(), computesCRC64: computesCRC64)
        let decoder: AWSChunkedDecoder? =
            switch payload {
            case .signedChunks(let signer, let trailer): AWSChunkedDecoder(signer: signer, signsTrailer: trailer)
            case .unsignedChunks: AWSChunkedDecoder(signer: nil, signsTrailer: false)
            case .unsigned, .sha256: nil
            }
        let (limit, maxBytes) = (min(maxBytes, declaredLength ?? maxBytes), maxBytes)
        let take: (ByteBuffer) throws(S3Error) -> Void = { (piece: ByteBuffer) throws(S3Error) in
            try sink.take(piece)
            guard sink.size <= limit else {
                if let declaredLength, sink.size > declaredLength {
                    throw S3Error(.invalidRequest, "The body is longer than its declared length.")
                }
                throw S3Error(
                    .entityTooLarge, "Your proposed upload exceeds the maximum allowed size",
                    details: [("MaxSizeAllowed", String(maxBytes))])
            }
        }
        for try await buffer in body {
            progress.withLock { progress in
                progress.lastByte = .now
                progress.windowBytes += Int64(buffer.readableBytes)
            }
            if let decoder {
                try decoder.feed(buffer, emit: take)
            } else {
                try take(buffer)
            }
            if sink.pending.readableBytes >= Self.writeSize {
                let chunk = sink.drain()
                try await offload { try chunk.withUnsafeReadableBytes { try file.writeAll($0) } }
            }
        }
        if let decoder, !decoder.isDone {
            throw S3Error(.incompleteBody, "The aws-chunked body ended before its last chunk.")
        }
        let rest = sink.drain()
        try await offload {
            try rest.withUnsafeReadableBytes { try file.writeAll($0) }
            try file.synchronize()
        }
        if let declaredLength, sink.size != declaredLength {
            throw S3Error(
                .incompleteBody, "You did not provide the number of bytes specified by the Content-Length HTTP header.")
        }
        let (md5, sha256) = try sink.finish()
        if case .sha256(let expected) = payload, let sha256 {
            let computed = Bytes.hex(sha256)
            guard computed == expected else {
                throw S3Error(
                    .xAmzContentSHA256Mismatch,
                    "The provided 'x-amz-content-sha256' header does not match what was computed.",
                    details: [("ClientComputedContentSHA256", expected), ("S3ComputedContentSHA256", computed)])
            }
        }
        return ReceivedBody(
            temporary: temporary, size: sink.size, md5: md5, crc32: sink.crc, crc64: sink.crc64,
            trailers: decoder?.trailers ?? [])
    }
}

/// An upload's running digests and its write buffer; used by the one task that reads the body.
private final class BodySink {
    private var md5: Digest?
    private var sha256: Digest?
    private(set) var crc = CRC32()
    private(set) var crc64: CRC64NVME?
    private(set) var size: Int64 = 0
    private(set) var pending = ByteBuffer()

    init(hashesSHA256: Bool, computesCRC64: Bool) throws {
        crc64 = computesCRC64 ? CRC64NVME() : nil
        md5 = try Digest(.md5)
        sha256 = hashesSHA256 ? try Digest(.sha256) : nil
    }

    func take(_ piece: ByteBuffer) throws(S3Error) {
        size += Int64(piece.readableBytes)
        do {
            try piece.withUnsafeReadableBytes { bytes in
                try md5?.update(bytes)
                try sha256?.update(bytes)
                crc.update(bytes)
                crc64?.update(bytes)
            }
        } catch {
            throw S3Error(.internalError, "The body could not be hashed.")
        }
        var piece = piece
        pending.writeBuffer(&piece)
    }

    /// The bytes gathered so far, handed over for writing.
    func drain() -> ByteBuffer {
        defer { pending = ByteBuffer() }
        return pending
    }

    /// The MD5 and (when asked for) the SHA-256 of everything taken.
    func finish() throws -> (md5: [UInt8], sha256: [UInt8]?) {
        let md5 = try self.md5.take()?.finalize() ?? []
        let sha256 = try self.sha256.take()?.finalize()
        return (md5, sha256)
    }
}

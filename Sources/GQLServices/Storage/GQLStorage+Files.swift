import Foundation
import GQLCore
import GQLCrypto
import GQLHTTP

extension GQLStorage {
    /// Called as a transfer moves: bytes done so far and the total.
    public typealias Progress = @Sendable (_ done: Int64, _ total: Int64) -> Void

    /// Uploads the file at `file` as the object `key`; files of ``Configuration/multipartThreshold`` bytes or more
    /// go in parts, several at a time, each retried on its own. A failed multipart upload is aborted, so no
    /// orphaned parts are left (and billed).
    ///
    /// ```swift
    /// try await storage.upload("bucket", "big.bin", file: URL(fileURLWithPath: "big.bin")) { sent, total in
    ///     print("\(sent) of \(total)")
    /// }
    /// ```
    /// - Returns: the object's ETag, without quotes.
    @discardableResult
    public func upload(
        _ bucket: String, _ key: String, file: URL, contentType: String? = nil, progress: Progress? = nil
    ) async throws -> String {
        let size = try Self.fileSize(file, operation: "upload")
        guard size >= Int64(max(configuration.multipartThreshold, 1)) else {
            let data = try Self.read(file, offset: 0, count: Int(size))
            let etag = try await upload(bucket, key, data, contentType: contentType)
            progress?(size, size)
            return etag
        }
        return try await MultipartUpload(storage: self, bucket: bucket, key: key, file: file, size: size)
            .run(contentType: contentType, progress: progress)
    }

    /// Downloads the object `key` into the file at `file`, a chunk at a time (memory stays flat however large the
    /// object). The file is written beside its destination and moved into place once complete and checked, so a
    /// failed download never leaves a partial file under the destination's name; the temporary file is removed
    /// whatever ends the download (an error, a refusal, the task's cancellation).
    ///
    /// ```swift
    /// try await storage.download("bucket", "big.bin", to: URL(fileURLWithPath: "big.bin")) { received, total in
    ///     print("\(received) of \(total)")
    /// }
    /// ```
    public func download(_ bucket: String, _ key: String, to file: URL, progress: Progress? = nil) async throws {
        var call = Call(method: "GET", bucket: bucket, key: key, operation: "download")
        call.headers.append(Self.checksumMode)
        let partial = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).\(UInt64.random(in: 0...UInt64.max)).part")
        defer { try? FileManager.default.removeItem(at: partial) }
        try await retrying(call.operation) {
            try await exchange.stream(try signedRequest(call), target: target(call), operation: call.operation) {
                status, headers, body in
                guard (200..<300).contains(status) else {
                    let (error, _) = try await exchange.readErrorBody(body)
                    throw serviceError(.init(status: status, headers: headers, body: error), call: call)
                }
                try BodyCheck.requireWholeObject(status: status, headers, call: call)
                let total = headers.first(name: "Content-Length").flatMap(Int64.init) ?? -1
                // Hashed only when the ETag is the body's MD5 (a single-part object) or S3 answered the whole
                // object's CRC: most large objects are multipart, and their ETags are no digest of the body.
                let check = BodyCheck(headers)
                let output = try DownloadFile(creating: partial.path, check: check?.kind, operation: call.operation)
                let digest: [UInt8]?
                do {
                    var received: Int64 = 0
                    for try await chunk in body {
                        try await output.append(chunk)
                        received += Int64(chunk.readableBytes)
                        progress?(received, total)
                    }
                    // A cancelled body may end early without an error: what arrived is not the object.
                    if Task.isCancelled {
                        throw GQLError(
                            .cancelled, "the download of \(bucket)/\(key) was cancelled", operation: call.operation)
                    }
                    if total >= 0, received != total {
                        throw GQLError(
                            .connection, "the download of \(bucket)/\(key) ended after \(received) of \(total) bytes",
                            operation: call.operation)
                    }
                    digest = try await output.finish()
                } catch {
                    await output.abandon()
                    throw error
                }
                if let check, let digest { try check.verify(digest, call: call) }
            }
        }
        // rename(2) replaces the destination atomically.
        guard rename(partial.path, file.path) == 0 else {
            throw GQLError(
                .io, "cannot move the download into \(file.path): \(String(cString: strerror(errno)))",
                operation: call.operation)
        }
    }

    // MARK: - Files

    static func fileSize(_ file: URL, operation: String) throws -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw GQLError(.invalidArgument, "\(file.path) is not a regular file", operation: operation)
            }
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch let error as GQLError {
            throw error
        } catch {
            throw GQLError(.io, "cannot read \(file.path): \(error.localizedDescription)", operation: operation)
        }
    }

    /// `count` bytes of `file` from `offset`.
    static func read(_ file: URL, offset: Int64, count: Int) throws -> Data {
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(offset))
            let data = try handle.read(upToCount: count) ?? Data()
            guard data.count == count else {
                throw GQLError(
                    .io, "\(file.path) changed while it was read: \(data.count) of \(count) bytes at \(offset)")
            }
            return data
        } catch let error as GQLError {
            throw error
        } catch {
            throw GQLError(.io, "cannot read \(file.path): \(error.localizedDescription)")
        }
    }
}

import Foundation
import GQLCore
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open file descriptor, closed when the last reference to it goes: a response body that never runs (the
/// client went away) cannot leak it. Reads and writes are blocking calls made through GQLCore's `offload`, never on
/// a cooperative thread.
///
/// `@unchecked Sendable`: the descriptor is an immutable `Int32`; `pread` and `write` on it are thread-safe system
/// calls, and every writer of a file is one task (the upload that created it).
package final class OpenFile: @unchecked Sendable {
    package let descriptor: Int32
    package let url: URL

    private init(_ descriptor: Int32, _ url: URL) {
        self.descriptor = descriptor
        self.url = url
    }

    deinit { close(descriptor) }

    /// Opens `url` for reading; `nil` when there is no such file.
    package static func reading(_ url: URL) throws -> OpenFile? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw GQLError(.io, "Could not open a file of the data folder: \(String(cString: strerror(errno))).")
        }
        return OpenFile(descriptor, url)
    }

    /// Creates `url`, which must not exist, for writing.
    package static func creating(_ url: URL) throws -> OpenFile {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw GQLError(.io, "Could not create a file in the data folder: \(String(cString: strerror(errno))).")
        }
        return OpenFile(descriptor, url)
    }

    /// The file's size in bytes.
    package func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw GQLError(.io, "Could not read a file's size: \(String(cString: strerror(errno))).")
        }
        return Int64(info.st_size)
    }

    /// Appends `bytes` (blocking; call it through `offload`).
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return }
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw GQLError(.io, "Could not write to the data folder: \(String(cString: strerror(errno))).")
            }
            offset += written
        }
    }

    /// Flushes what was written to the disk (blocking).
    package func synchronize() throws {
        guard fsync(descriptor) == 0 else {
            throw GQLError(.io, "Could not flush a file of the data folder: \(String(cString: strerror(errno))).")
        }
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the file), off the cooperative pool.
    package func read(at offset: Int64, count: Int) async throws -> ByteBuffer {
        try await offload { [self] in
            var buffer = ByteBuffer()
            buffer.reserveCapacity(count)
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                var total = 0
                while total < count {
                    guard let base = pointer.baseAddress else { break }
                    let got = pread(descriptor, base + total, count - total, off_t(offset) + off_t(total))
                    if got < 0 {
                        if errno == EINTR { continue }
                        throw GQLError(
                            .io, "Could not read a file of the data folder: \(String(cString: strerror(errno))).")
                    }
                    if got == 0 { break }
                    total += got
                }
                return total
            }
            _ = read
            return buffer
        }
    }
}

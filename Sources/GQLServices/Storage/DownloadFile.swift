import Foundation
import GQLCore
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The temporary file a streamed download writes into: created (or emptied) when made, written straight from the
/// response's buffers with write(2) (no copy into a `Data` and no `FileHandle` between them), closed when it goes.
struct DownloadFile: ~Copyable {
    let path: String
    private let descriptor: Int32
    private let operation: String

    /// Creates `path` (mode 0666 less the umask, as `FileManager.createFile` does), or empties it.
    init(creating path: String, operation: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw GQLError(.io, "cannot create \(path): \(String(cString: strerror(errno)))", operation: operation)
        }
        self.path = path
        self.descriptor = descriptor
        self.operation = operation
    }

    deinit { close(descriptor) }

    /// Appends the readable bytes of `buffer`.
    func write(_ buffer: ByteBuffer) throws {
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

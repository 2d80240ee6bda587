import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension GQLDataFolder {
    /// An exclusive hold on a data folder: an `flock` on its `.lock` file, so that a second emulator of the same
    /// kind cannot open the folder while the first runs (each would remove the other's temporaries at its start and
    /// overwrite the other's records). The kernel drops the lock when the process ends, however it ends, so a killed
    /// emulator never leaves the folder locked.
    package final class Lock: Sendable {
        private let descriptor: GQLLocked<Int32?>

        fileprivate init(_ descriptor: Int32) { self.descriptor = GQLLocked(descriptor) }

        /// Lets the folder go (closing the file drops the lock); later calls do nothing.
        package func release() {
            descriptor.withLock { held in
                if let fd = held { close(fd) }
                held = nil
            }
        }

        deinit { release() }
    }

    /// Locks the folder for `owner` (for instance "storage emulator", named in the refusal).
    ///
    /// - Throws: ``GQLError`` `.io` naming the folder when another holder has it (in this process or another; the
    ///   message says which process id the holder wrote in `.lock`), or when `.lock` cannot be opened.
    package func lockExclusively(for owner: String) throws -> Lock {
        let path = url.appendingPathComponent(".lock").path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw GQLError(
                .io, "Could not open \(path) to lock the \(owner)'s data folder: \(String(cString: strerror(errno))).")
        }
        var status: Int32
        repeat { status = flock(fd, LOCK_EX | LOCK_NB) } while status != 0 && errno == EINTR
        guard status == 0 else {
            let code = errno
            let pid = Self.holder(fd)
            close(fd)
            guard code == EWOULDBLOCK else {
                throw GQLError(
                    .io, "Could not lock the \(owner)'s data folder \(url.path): \(String(cString: strerror(code))).")
            }
            throw GQLError(
                .io,
                "The \(owner)'s data folder \(url.path) is in use by another \(owner)"
                    + (pid.map { " (process \($0))" } ?? "")
                    + ", which holds its .lock: stop that one, or give this one another folder.")
        }
        // Which process holds it, for the refusal above (informative only: the lock is what counts).
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pwrite(fd, text, text.count, 0) }
        return Lock(fd)
    }

    /// The process id the holder of `.lock` (open as `fd`) wrote in it, when there is one yet.
    private static func holder(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = pread(fd, &bytes, bytes.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

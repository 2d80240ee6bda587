import Foundation

extension FileHandle {
    /// The lines this pipe delivers, read on a dispatch thread until it closes. Lines that arrive after the
    /// consumer stopped are dropped.
    ///
    /// ```swift
    /// for await line in pipe.fileHandleForReading.lines() where line.hasPrefix("READY") { break }
    /// ```
    public func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            DispatchQueue.global().async {
                var pending = Data()
                while true {
                    let chunk = self.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending.removeSubrange(...newline)
                    }
                }
                continuation.finish()
            }
        }
    }
}

import Foundation

extension FileHandle {
    /// The lines this pipe delivers, read on a thread of their own until it closes (reads interrupted by a signal
    /// are retried, where `availableData` would trap). Lines that arrive after the consumer stopped are dropped.
    ///
    /// ```swift
    /// for await line in pipe.fileHandleForReading.lines() where line.hasPrefix("READY") { break }
    /// ```
    public func lines() -> AsyncStream<String> {
        ChildProcess.lines(fileDescriptor, owner: self)
    }
}

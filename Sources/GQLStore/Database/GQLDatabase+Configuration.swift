extension GQLDatabase {
    /// How a database opens its connections.
    ///
    /// ```swift
    /// var configuration = GQLDatabase.Configuration()
    /// configuration.maximumReaders = 8
    /// let db = try GQLDatabase(path: "app.sqlite", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// SQLite's `synchronous` setting for the writer connection.
        public enum Synchronous: String, Sendable {
            /// Durable against power loss; the slowest.
            case full = "FULL"
            /// With WAL: durable against crashes of the app, may lose the last commits on power loss.
            case normal = "NORMAL"
            /// No syncs at all; for tests and throwaway data.
            case off = "OFF"
        }

        /// The most reader connections kept open at once. Reads wait when all are busy. Default 4.
        public var maximumReaders = 4
        /// How long a connection waits for a lock held by another process, in milliseconds. Default 5 s.
        public var busyTimeoutMilliseconds = 5_000
        /// The writer's `synchronous` mode. Default `.normal`, which WAL makes crash-safe.
        public var synchronous = Synchronous.normal
        /// Whether SQLite enforces `FOREIGN KEY` clauses. Default `true`.
        public var foreignKeys = true
        /// Open an existing file for reading only: nothing is created, no journal mode is changed, and every
        /// write fails with SQLite's "readonly" error. Default `false`.
        public var readOnly = false
        /// The most decrypted or read pages each connection keeps in memory, in KiB (SQLite's `cache_size`, taken
        /// as a size). `nil`, the default: 8,000 KiB on encrypted files, where reading a page again costs a
        /// decryption (SQLCipher 4's default), and SQLite's own 2,000 KiB on plain files, where the OS file cache
        /// makes a re-read cheap. Pages are allocated as they are read, so this is a bound, not an allocation.
        public var pageCacheKiB: Int? = nil
        /// The page size, in bytes, of a file this database creates (SQLite's `page_size`: a power of two from 512
        /// to 65,536). `nil`, the default: SQLite's own (4,096). A file that already has pages keeps the size it
        /// was created with (in WAL mode SQLite cannot change it), so any file opens and reads as before. Larger
        /// pages mean fewer, larger reads of a table read whole (each page is one `pread`) and more bytes written
        /// per page a commit changes.
        public var pageSize: Int? = nil
        /// Keep SQLite's rollback journal instead of switching the file to WAL (tests of the journal's encryption).
        package var rollbackJournal = false

        public init() {}
    }
}

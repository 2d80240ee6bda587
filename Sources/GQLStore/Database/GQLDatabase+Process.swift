import CSQLite
import CStoreCrypt

extension GQLDatabase {
    /// Sets SQLite's process-wide memory statistics, once, at the app's launch: call it before anything in the
    /// process uses SQLite (before the first ``GQLDatabase`` is opened, and before any other library opens a
    /// database), from one thread.
    ///
    /// GQLStore never makes this call on its own: the setting applies to every user of SQLite in the process, and
    /// SQLite does not allow it while SQLite is in use on another thread.
    ///
    /// With `memoryStatistics: false` (what SQLite's list of recommended options does for speed) SQLite stops
    /// counting its allocations: the system's SQLite is built without lookaside memory, so each of its allocations (a
    /// few per read) goes to `malloc`, and with the statistics on each also takes a process-wide mutex to count it.
    /// `sqlite3_memory_used()` and `sqlite3_memory_highwater()` then stay at zero and the soft and hard heap limits
    /// are not enforced, for every user of SQLite in the process.
    ///
    /// ```swift
    /// // First thing at launch, before any database is opened:
    /// GQLDatabase.configureSQLiteProcess(memoryStatistics: false)
    /// ```
    ///
    /// - Returns: `true` when SQLite took the setting; `false` when SQLite was already initialized in this process
    ///   (a database was opened, or another library used SQLite first), in which case nothing changed.
    @discardableResult
    public static func configureSQLiteProcess(memoryStatistics: Bool) -> Bool {
        gqlstore_sqlite_config_memory_statistics(memoryStatistics ? 1 : 0) == SQLITE_OK
    }
}

import ArgumentParser
import Foundation
import GQLCache
import GQLStore

/// `gql-cli cache stats|gc|clear --db FILE`: looks after a GQLCache's records in a SQLite file.
///
/// ```
/// gql-cli cache stats --db cache.sqlite
/// gql-cli cache gc --db cache.sqlite --json
/// gql-cli cache clear --db cache.sqlite
/// ```
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and tidy a GQLCache's records (the app's database or the cache's own file).",
        subcommands: [Stats.self, GC.self, Clear.self, WriteLoop.self]
    )

    /// The file holding the records, and the output format.
    struct Options: ParsableArguments {
        @Option(name: .customLong("db"), help: ArgumentHelp("The database file holding the cache.", valueName: "file"))
        var path: String

        @Flag(help: "Print JSON instead of text.")
        var json = false

        /// The cache in the file, after checking the file exists and holds a cache, so no command makes a
        /// database or a cache table where there was none.
        func open() throws -> GQLCache {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else {
                throw CLIError("no database file at \(path)")
            }
            var configuration = GQLDatabase.Configuration()
            configuration.maximumReaders = 1
            let db = try CLIError.guarding("cannot open \(path)") {
                try GQLDatabase(path: path, configuration: configuration)
            }
            let tables = try CLIError.guarding("cannot read \(path)") { try db.tableNames() }
            guard tables.contains("_gqlcache_records") else {
                throw CLIError("\(path) holds no GQLCache (no _gqlcache_records table)")
            }
            return try CLIError.guarding("cannot open the cache in \(path)") { try GQLCache(database: db) }
        }

        func printJSON(_ value: GQLValue) throws {
            print(try CLIError.guarding("cannot write JSON") { try value.jsonString() })
        }
    }

    /// `gql-cli cache stats --db FILE`: records, bytes and records per type.
    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print how many records the cache holds, their bytes, and the records of each type.",
            discussion: """
                Text: `records N`, `bytes N`, `damaged rows N` when the file holds rows that are not records (a
                key that is not text or not UTF-8: gc and clear remove them), then one line per type (`(nested)`:
                objects stored under their parent's path). With --json: {"records": N, "bytes": N,
                "damagedRows": N, "types": {"User": N, …}}.
                """
        )

        @OptionGroup var options: Options

        func run() throws {
            let stats = try CLIError.guarding("cannot count the records") { try options.open().statistics() }
            if options.json {
                try options.printJSON([
                    "records": .int(Int64(stats.records)), "bytes": .int(Int64(stats.bytes)),
                    "damagedRows": .int(Int64(stats.damagedRows)),
                    "types": .object(stats.types.mapValues { .int(Int64($0)) }),
                ])
                return
            }
            print("records \(stats.records)")
            print("bytes \(stats.bytes)")
            if stats.damagedRows > 0 { print("damaged rows \(stats.damagedRows)") }
            for (type, count) in stats.types.sorted(by: { $0.key < $1.key }) {
                print("  \(TerminalText.escaped(type, limit: 200)) \(count)")
            }
        }
    }

    /// `gql-cli cache gc --db FILE`: runs `GQLCache.gc()`.
    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Remove references to missing records, then the records no query can reach.",
            discussion: """
                Prints `removed N records, M references`; with --json {"removedRecords": N, "removedReferences": M}.
                """
        )

        @OptionGroup var options: Options

        func run() throws {
            let report = try CLIError.guarding("garbage collection failed") { try options.open().gc() }
            if options.json {
                try options.printJSON([
                    "removedRecords": .int(Int64(report.removedRecords)),
                    "removedReferences": .int(Int64(report.removedReferences)),
                ])
            } else {
                print("removed \(report.removedRecords) records, \(report.removedReferences) references")
            }
        }
    }

    /// `gql-cli cache clear --db FILE`: removes every record (the sign-out of `GQLCache.clear()`).
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every record of the cache; the rest of the file is left alone.",
            discussion: """
                Prints `removed N records` (with `and M damaged rows` when the file held rows that are not
                records); with --json {"removedRecords": N, "removedDamagedRows": M}.
                """
        )

        @OptionGroup var options: Options

        func run() throws {
            let removed = try CLIError.guarding("cannot clear the cache") { () throws -> GQLCache.Statistics in
                let cache = try options.open()
                let stats = try cache.statistics()
                try cache.clear()
                return stats
            }
            if options.json {
                try options.printJSON([
                    "removedRecords": .int(Int64(removed.records)),
                    "removedDamagedRows": .int(Int64(removed.damagedRows)),
                ])
            } else if removed.damagedRows > 0 {
                print("removed \(removed.records) records and \(removed.damagedRows) damaged rows")
            } else {
                print("removed \(removed.records) records")
            }
        }
    }
}

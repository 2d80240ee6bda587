import ArgumentParser
import Foundation
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db write-loop PATH [--batch 10]`: commits batches of ``CrashRow`` until killed.
    ///
    /// A crash-safety test runs it as a child process, reads the committed batch numbers from its standard
    /// output, kills it at a random moment and checks that every batch it was told about is in the file,
    /// whole. Hidden from help.
    struct WriteLoop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write-loop",
            abstract: "Commit batches of CrashRow rows until killed, printing each committed batch number.",
            discussion: """
                Each transaction inserts --batch rows with ids continuing from the largest id in the file and \
                batch = the previous largest batch + 1. After each commit the batch number is written to \
                standard output on its own line, unbuffered. The file is created if missing.
                """,
            shouldDisplay: false
        )

        @Argument(help: "The database file; created if missing.")
        var path: String

        @Option(help: "Rows per transaction.")
        var batch = 10

        @Option(help: "Stop after this many transactions (default: never).")
        var limit: Int?

        @OptionGroup var key: DatabaseKeyOptions

        func validate() throws {
            guard batch > 0 else { throw ValidationError("--batch must be at least 1") }
            if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        }

        func run() throws {
            let db = try CLIError.guarding("cannot open \(path)") {
                let db = try key.openDatabase(path)
                try db.register(CrashRow.self)
                return db
            }
            let size = batch
            var committed = 0
            while limit.map({ committed < $0 }) ?? true {
                let number = try CLIError.guarding("the write failed") {
                    try db.write { tx -> Int in
                        // The row with the largest id carries the latest batch: one index lookup, not a scan.
                        let last = try tx.fetchAll(sql: "SELECT id, batch FROM \"CrashRow\" ORDER BY id DESC LIMIT 1")
                        let lastID = Int(last.first?["id"]?.intValue ?? 0)
                        let number = Int(last.first?["batch"]?.intValue ?? 0) + 1
                        for i in 1...size {
                            try CrashRow(id: lastID + i, batch: number, payload: "batch \(number) row \(i)").insert(tx)
                        }
                        return number
                    }
                }
                // FileHandle writes straight to the descriptor: the parent sees the line as soon as it is here.
                try CLIError.guarding("cannot write to standard output") {
                    try FileHandle.standardOutput.write(contentsOf: Data("\(number)\n".utf8))
                }
                committed += 1
            }
        }
    }
}

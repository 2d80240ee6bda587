import BenchKit
import Foundation
import GQLStore
import GQLSync

extension SyncWorkloads {
    /// The plain mutation loop, plus what any sender that repeats at most one call per crash must do between an
    /// answer and the next call: commit a record of it (here: the answered row deleted, the next one's attempt
    /// counted, in a WAL file at `synchronous = NORMAL`, the engine's own level for these records). Not a goal's
    /// peer: the floor under one-per-request delivery, so the table shows what that record costs on this machine.
    func recordedLoop(_ prefix: String, round: Int, client: GQLServer) async throws -> Double {
        let n = options.mutations
        let records = try GQLDatabase(path: path("recorded-\(round).sqlite"))
        try await records.execute("CREATE TABLE record (id INTEGER PRIMARY KEY, attempts INTEGER NOT NULL)")
        try await records.write { tx in
            for i in 0..<n { try tx.execute("INSERT INTO record (id, attempts) VALUES (?, 0)", [i]) }
        }
        flushToDisk()  // as before the engine's timed drain: the set-up's dirty pages are written back first
        // A synchronous closure, so the write runs on the loop's task as the engine's own file does.
        let record: (Int) throws -> Void = { i in
            try records.write { tx in
                _ = try tx.fetchAll(sql: "DELETE FROM record WHERE id = ? RETURNING id", [i - 1])
                _ = try tx.fetchAll(sql: "UPDATE record SET attempts = attempts + 1 WHERE id = ? RETURNING id", [i])
            }
        }
        let seconds = try await timed {
            for i in 0..<n {
                try record(i)
                let result = try await client.mutation(
                    Self.create,
                    [
                        "input": GQLValue.object([
                            "objectId": .string("\(prefix)\(i)"), "text": "t", "number": .int(Int64(i)),
                        ])
                    ])
                guard result.errors.isEmpty else { throw BenchError("recorded loop: \(result.errors)") }
            }
        }
        guard
            try await records.read({ tx in try tx.fetchAll(sql: "SELECT COUNT(*) AS n FROM record") }).first?["n"] == 1
        else { throw BenchError("recorded loop: the records are not all settled") }
        try await records.close()
        return Double(n) / seconds
    }
}

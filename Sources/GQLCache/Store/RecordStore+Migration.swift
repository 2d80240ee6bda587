import Foundation
import GQLCore
import GQLStore

/// The record table's migrations (namespace `gqlcache`, each step one transaction).
extension RecordStore {
    static var migrator: GQLMigrator {
        var migrator = GQLMigrator(namespace: namespace)
        migrator.step(1, "records") { tx in
            // `updated_at` (seconds since 1970) is there for expiry and trimming.
            try tx.execute(
                """
                CREATE TABLE \(table) (
                    key TEXT PRIMARY KEY NOT NULL,
                    fields TEXT NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID
                """)
        }
        migrator.step(2, "read times") { tx in
            // When each record was last read (written in batches), for trimming to a byte budget.
            try tx.execute("ALTER TABLE \(table) ADD COLUMN read_at REAL")
        }
        migrator.step(3, "binary records") { tx in
            _ = try RecordRowConversion.convert(tx, batchSize: RecordRowConversion.batchSize)
        }
        return migrator
    }
}

/// Migration step 3: the JSON text rows of a file written before ``RecordCodec``'s format, converted in place to
/// its bytes (a cold read then decodes rather than parses).
///
/// The rows go in batches of at most ``batchSize``, in key order, inside the step's one transaction: however
/// large the cache, the step holds one batch of converted rows in memory, not the whole table. Rows that do not
/// parse as JSON, or nest too deep to encode, stay as they are (read as misses, or as JSON text, like before).
package enum RecordRowConversion {
    /// Rows converted per batch.
    package static let batchSize = 256

    /// What a conversion did: the rows it converted, and the most converted rows it held at once.
    package struct Report: Sendable, Equatable {
        package var converted = 0
        package var mostHeld = 0

        package init(converted: Int = 0, mostHeld: Int = 0) {
            self.converted = converted
            self.mostHeld = mostHeld
        }
    }

    /// Converts every JSON text row of the record table, `batchSize` rows at a time.
    package static func convert(_ tx: GQLTransaction, batchSize: Int) throws -> Report {
        let table = RecordStore.table
        var report = Report()
        // Keys past the last one read: rows left as text (they did not parse) are not read again. Kept as the
        // key's bytes (bound as a BLOB, compared as text): a key that is not UTF-8 (a damaged file's), read
        // repaired, could sort before itself and be read again for ever. Rows whose key is not text come after
        // every text key and are never read.
        var after: Data?
        repeat {
            var batch: [(key: String, bytes: [UInt8])] = []
            var last: Data?
            let sql =
                "SELECT key, fields FROM \(table) WHERE typeof(fields) = 'text' AND typeof(key) = 'text'"
                + (after == nil ? "" : " AND key > CAST(? AS TEXT)") + " ORDER BY key LIMIT ?"
            let values: [GQLValue] = (after.map { [.data($0)] } ?? []) + [.int(Int64(max(batchSize, 1)))]
            try tx.forEachRow(sql: sql, values, table: table) { row in
                last = row.withText(0) { Data($0) }
                // A key that is not UTF-8 is not a record's: its row is left as it is.
                guard let key = row.recordKey(0), let fields = RecordStore.decode(row, 1),
                    let bytes = try? RecordCodec.encode(fields, key: key.text)
                else { return }
                batch.append((key.text, bytes))
            }
            report.mostHeld = max(report.mostHeld, batch.count)
            for (key, bytes) in batch {
                _ = try tx.change(
                    sql: "UPDATE \(table) SET fields = ? WHERE key = ?", [.data(Data(bytes)), .string(key)],
                    table: table)
            }
            report.converted += batch.count
            after = last
        } while after != nil
        return report
    }
}

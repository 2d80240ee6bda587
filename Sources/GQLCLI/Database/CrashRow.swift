import GQLStore

/// The row `gql-cli db write-loop` writes, for crash-safety tests: the table is `CrashRow`, `id` the key,
/// `batch` the number of the transaction that wrote the row.
struct CrashRow: GQLObject {
    var id = 0
    var batch = 0
    var payload = ""

    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "CrashRow" }
}

import Foundation
import GQLNet
import GQLStore

/// The local table of `gql-cli sync pull`, made from the server's schema when the file does not have it yet.
///
/// The server is asked (introspection) for the type of the sync field's `items` (`syncNotes` → `ModelNoteConnection`
/// → `Note`): each field of a scalar or enum type becomes a column (`Int`, `AWSTimestamp` → INTEGER, `Float` →
/// REAL, `Boolean` → INTEGER, anything else → TEXT), lists and objects are left out. The key is the one argument
/// of `get<Table>` (AppSync's and `gql-cli serve`'s single-item query), else a field called `id`, unless `--key`
/// names it.
struct PullTable {
    struct Column: Equatable {
        var name: String
        /// The SQLite type.
        var type: String
    }

    /// The local table, also the item type's expected name in `get<Table>`.
    let table: String
    /// The sync field of the query type (`syncNotes`).
    let field: String

    /// The columns (the key first) and the key the table gets, read from the server's schema.
    func describe(on server: GQLServer, key chosen: String?) async throws -> (columns: [Column], key: String) {
        let query = try await fields(of: "Query", on: server)
        guard let sync = query.first(where: { $0["name"]?.stringValue == field }) else {
            throw CLIError("the server has no query field \(field); give it with --field or the query with --query")
        }
        guard let connection = Self.namedType(sync["type"]),
            let items = try await fields(of: connection, on: server).first(where: { $0["name"] == "items" }),
            let itemType = Self.namedType(items["type"])
        else { throw CLIError("\(field) does not answer items (an AppSync-style delta query)") }
        let columns = try await fields(of: itemType, on: server).compactMap(Self.column)
        guard !columns.isEmpty else { throw CLIError("the server's type \(itemType) has no scalar fields") }
        let getter = query.first(where: { $0["name"]?.stringValue == "get" + table })?["args"]?.arrayValue ?? []
        let key: String
        if let chosen {
            key = chosen
        } else if getter.count == 1, let argument = getter.first?["name"]?.stringValue {
            key = argument
        } else if columns.contains(where: { $0.name == "id" }) {
            key = "id"
        } else {
            throw CLIError("cannot tell the key of \(itemType) (no get\(table)(key:) query, no id field); give --key")
        }
        guard columns.contains(where: { $0.name == key }) else {
            throw CLIError("the server's type \(itemType) has no scalar field \(key) to use as the key")
        }
        return (columns.filter { $0.name == key } + columns.filter { $0.name != key }, key)
    }

    /// `CREATE TABLE "<table>" (…)`, the columns in their order.
    func createSQL(_ columns: [Column], key: String) -> String {
        let definitions = columns.map { column in
            "\"\(column.name)\" \(column.type)" + (column.name == key ? " PRIMARY KEY NOT NULL" : "")
        }
        return "CREATE TABLE \"\(table)\" (\(definitions.joined(separator: ", ")))"
    }

    // MARK: Introspection

    private static let typeQuery = """
        query PullTableShape($name: String!) {
          __type(name: $name) {
            fields { name args { name } type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }
          }
        }
        """

    private func fields(of type: String, on server: GQLServer) async throws -> [GQLValue] {
        let result = try await server.query(Self.typeQuery, ["name": type])
        guard result.errors.isEmpty else {
            throw CLIError("the server refused introspection of \(type): \(result.errors.map(\.message))")
        }
        guard let fields = result.data?["__type"]?["fields"]?.arrayValue else {
            throw CLIError("the server's schema has no type \(type) with fields")
        }
        return fields
    }

    /// The named type under NON_NULL and LIST wrappers.
    static func namedType(_ reference: GQLValue?) -> String? {
        var reference = reference
        while let current = reference, current["name"]?.stringValue == nil { reference = current["ofType"] }
        return reference?["name"]?.stringValue
    }

    /// A column for a field of a scalar or enum type (not null or not); nil for lists, objects and other names.
    static func column(_ field: GQLValue) -> Column? {
        guard let name = field["name"]?.stringValue, OperationOptions.isGraphQLName(name) else { return nil }
        var type = field["type"]
        if type?["kind"] == "NON_NULL" { type = type?["ofType"] }
        guard let kind = type?["kind"]?.stringValue, kind == "SCALAR" || kind == "ENUM",
            let scalar = type?["name"]?.stringValue
        else { return nil }
        switch scalar {
        case "Int", "AWSTimestamp": return Column(name: name, type: "INTEGER")
        case "Float": return Column(name: name, type: "REAL")
        case "Boolean": return Column(name: name, type: "INTEGER")
        default: return Column(name: name, type: "TEXT")
        }
    }
}

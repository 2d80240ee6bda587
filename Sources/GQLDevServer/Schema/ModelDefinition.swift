import GQLCore

/// One `type X @model { … }` declaration: the table it stores, its key and its fields, including the fields
/// the server keeps (`createdAt`, `updatedAt`, `_version`, `_deleted`, `_lastChangedAt`).
struct ModelDefinition: Sendable {
    /// The type of a field's values (of each element, for a list field).
    enum Scalar: Sendable, Hashable {
        case id, string, int, float, boolean, awsDateTime, awsTimestamp, awsJSON
        case enumeration(String)

        /// The scalars an input SDL may name, by GraphQL name.
        static let byName: [String: Scalar] = [
            "ID": .id, "String": .string, "Int": .int, "Float": .float, "Boolean": .boolean,
            "AWSDateTime": .awsDateTime, "AWSTimestamp": .awsTimestamp, "AWSJSON": .awsJSON,
        ]

        /// The scalars the generated schema declares itself.
        static let awsScalars = ["AWSDateTime", "AWSTimestamp", "AWSJSON"]

        var graphQLName: String {
            switch self {
            case .id: "ID"
            case .string: "String"
            case .int: "Int"
            case .float: "Float"
            case .boolean: "Boolean"
            case .awsDateTime: "AWSDateTime"
            case .awsTimestamp: "AWSTimestamp"
            case .awsJSON: "AWSJSON"
            case .enumeration(let name): name
            }
        }

        /// The declared SQL type of a column holding one value.
        var sqlType: String {
            switch self {
            case .int, .awsTimestamp: "INTEGER"
            case .float: "REAL"
            case .boolean: "BOOLEAN"
            case .id, .string, .awsDateTime, .awsJSON, .enumeration: "TEXT"
            }
        }

        /// The filter input of `list`/`sync` queries and mutation conditions (AppSync's `Model…Input`).
        var filterInput: String {
            switch self {
            case .id: "ModelIDInput"
            case .int, .awsTimestamp: "ModelIntInput"
            case .float: "ModelFloatInput"
            case .boolean: "ModelBooleanInput"
            case .string, .awsDateTime, .awsJSON: "ModelStringInput"
            case .enumeration(let name): "Model\(name)Input"
            }
        }

        /// The filter input of subscriptions (AppSync's `ModelSubscription…Input`).
        var subscriptionFilterInput: String {
            switch self {
            case .id: "ModelSubscriptionIDInput"
            case .int, .awsTimestamp: "ModelSubscriptionIntInput"
            case .float: "ModelSubscriptionFloatInput"
            case .boolean: "ModelSubscriptionBooleanInput"
            case .string, .awsDateTime, .awsJSON, .enumeration: "ModelSubscriptionStringInput"
            }
        }

        var isNumeric: Bool {
            switch self {
            case .int, .float, .awsTimestamp: true
            default: false
            }
        }
    }

    /// One field of the model, stored in one column.
    struct Field: Sendable {
        var name: String
        var scalar: Scalar
        var isList: Bool
        var nonNull: Bool
        var elementNonNull: Bool
        /// Kept by the server; not part of the create and update inputs (unless the SDL declares it).
        var isServerKept: Bool
        /// The 1-based line of the declaration in the input SDL (0 for generated fields).
        var line: Int

        /// The field's GraphQL type, e.g. `[String!]!`.
        var typeText: String { typeText(nonNull: nonNull) }

        func typeText(nonNull: Bool) -> String {
            var text = scalar.graphQLName
            if isList { text = "[" + text + (elementNonNull ? "!" : "") + "]" }
            return nonNull ? text + "!" : text
        }

        /// The column definition for `CREATE TABLE`.
        var columnDefinition: String {
            let type = isList ? "TEXT" : scalar.sqlType
            return name.sqlIdentifier + " " + type
        }
    }

    /// The model's type name, which is also its table's name.
    var name: String
    /// `pluralize(name)`, used by `list` and `sync`.
    var plural: String
    /// The name of the key field.
    var key: String
    /// Every field, declared ones first, then the server-kept ones.
    var fields: [Field]
    /// The 1-based line of the declaration in the input SDL.
    var line: Int
    /// Field index by name.
    let fieldIndex: [String: Int]
    /// The UTF-8 bytes of every field's name together: what an item's names cost in a ``ResponseBudget``.
    let nameBytes: Int
    /// The field holding each item's owner when the type has `@auth(rules: [{ allow: owner }])` (`owner`, or the
    /// rule's `ownerField`): its items are then the caller's alone (see ``OwnerScope``). `nil`: no owner rule.
    var ownerField: String?

    init(name: String, key: String, fields: [Field], line: Int, ownerField: String? = nil) {
        self.name = name
        self.plural = Pluralizer.plural(of: name)
        self.key = key
        self.fields = fields
        self.line = line
        self.ownerField = ownerField
        var index: [String: Int] = [:]
        for (i, field) in fields.enumerated() { index[field.name] = i }
        self.fieldIndex = index
        self.nameBytes = fields.reduce(0) { $0 + $1.name.utf8.count }
    }

    func field(_ name: String) -> Field? { fieldIndex[name].map { fields[$0] } }

    var keyField: Field { fields[fieldIndex[key] ?? 0] }

    /// The server-kept fields every model has; `createdAt`/`updatedAt` only when the SDL does not declare them.
    static func serverFields(declared: Set<String>) -> [Field] {
        var fields: [Field] = []
        for name in ["createdAt", "updatedAt"] where !declared.contains(name) {
            fields.append(
                Field(
                    name: name, scalar: .awsDateTime, isList: false, nonNull: true, elementNonNull: false,
                    isServerKept: true, line: 0))
        }
        fields.append(
            Field(
                name: "_version", scalar: .int, isList: false, nonNull: true, elementNonNull: false,
                isServerKept: true, line: 0))
        fields.append(
            Field(
                name: "_deleted", scalar: .boolean, isList: false, nonNull: false, elementNonNull: false,
                isServerKept: true, line: 0))
        fields.append(
            Field(
                name: "_lastChangedAt", scalar: .awsTimestamp, isList: false, nonNull: true, elementNonNull: false,
                isServerKept: true, line: 0))
        return fields
    }

    /// Names a model may not declare itself.
    static let reservedNames: Set<String> = ["_version", "_deleted", "_lastChangedAt"]

    // MARK: SQL

    var table: String { name.sqlIdentifier }
    var selectList: String { fields.map(\.name.sqlIdentifier).joined(separator: ", ") }

    /// The insert of a new item, every field bound in ``fields`` order. With `keyIsPrimary` (the key column is the
    /// table's primary key) it changes nothing when the key is taken; a clash on any other constraint is still an
    /// error.
    func insertSQL(keyIsPrimary: Bool) -> String {
        let insert = "INSERT INTO \(table) (\(selectList)) VALUES (\(fields.map { _ in "?" }.joined(separator: ", ")))"
        return keyIsPrimary ? insert + " ON CONFLICT(\(key.sqlIdentifier)) DO NOTHING" : insert
    }

    /// `CREATE TABLE IF NOT EXISTS` plus an index for delta sync.
    var createSQL: String {
        let columns = fields.map { field -> String in
            var definition = field.columnDefinition
            switch field.name {
            case key: definition += " PRIMARY KEY NOT NULL"
            case "_version": definition += " NOT NULL DEFAULT 1"
            case "_deleted": definition += " NOT NULL DEFAULT 0"
            case "_lastChangedAt":
                definition += " NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))"
            case "createdAt", "updatedAt":
                definition += " DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
            default: break
            }
            return definition
        }
        let index = "\(name)_lastChangedAt".sqlIdentifier
        return "CREATE TABLE IF NOT EXISTS \(table) (\(columns.joined(separator: ", ")));\n"
            + "CREATE INDEX IF NOT EXISTS \(index) ON \(table) (\"_lastChangedAt\");"
    }
}

extension String {
    /// The string as an SQL identifier in double quotes, inner quotes doubled.
    var sqlIdentifier: String { "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}

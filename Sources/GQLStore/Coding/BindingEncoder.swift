import CSQLite
import Foundation
import GQLCore

/// Encodes an object straight into the parameters of a prepared INSERT, UPDATE or upsert statement whose
/// parameters are the schema's columns in order — no intermediate values.
///
/// Keys normally arrive in the schema's order, so each is first compared with the expected column and only
/// looked up by name when the order differs. Columns no key was encoded for (a `nil` optional) are bound
/// to NULL at the end, since bindings persist between uses of a statement.
final class BindingEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let schema: TableSchema
    let statement: Statement
    /// Also bind the primary key to this parameter (the WHERE of an UPDATE).
    let keyParameter: Int32?
    fileprivate var cursor = 0
    fileprivate var written: [Bool]
    fileprivate var problem: GQLError?

    init(schema: TableSchema, statement: Statement, keyParameter: Int32? = nil) {
        self.schema = schema
        self.statement = statement
        self.keyParameter = keyParameter
        self.written = Array(repeating: false, count: schema.columns.count)
    }

    /// Binds every column of `object`.
    func bind<T: Encodable>(_ object: T) throws {
        try object.encode(to: self)
        if let problem { throw problem }
        for (index, done) in written.enumerated() where !done {
            try bindValue(.null, column: index)
        }
    }

    /// The column index for `key`, marked as written; `nil` (and a problem noted) for an unknown key.
    @inline(__always)
    fileprivate func column(_ key: some CodingKey) -> Int? {
        let name = key.stringValue
        let names = schema.columnNames
        let c = cursor
        let index: Int
        if c < names.count, names[c] == name {
            index = c
        } else if let found = schema.columnIndex[name] {
            index = found
        } else {
            problem = GQLError(
                .encoding, "\(schema.name) encoded the key '\(name)', which its table has no column for",
                table: schema.name, column: name)
            return nil
        }
        cursor = index + 1
        written[index] = true
        return index
    }

    @inline(__always)
    fileprivate func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw statement.connection.error(rc, sql: statement.sql, table: schema.name) }
    }

    @inline(__always)
    fileprivate func bindInt(_ value: Int64, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        try check(sqlite3_bind_int64(statement.stmt, Int32(index + 1), value))
        if index == schema.primaryKeyIndex, let keyParameter {
            try check(sqlite3_bind_int64(statement.stmt, keyParameter, value))
        }
    }

    fileprivate func bindValue(_ value: GQLValue, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        try bindValue(value, column: index)
    }

    private func bindValue(_ value: GQLValue, column index: Int) throws {
        do {
            try statement.bind(value, at: Int32(index + 1))
            if index == schema.primaryKeyIndex, let keyParameter { try statement.bind(value, at: keyParameter) }
        } catch var error as GQLError {
            error.table = schema.name
            error.column = schema.columnNames[index]
            throw error
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(BindingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        problem = GQLError(.encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopUnkeyed(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        problem = GQLError(.encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopSingle()
    }
}

private struct BindingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BindingEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try encoder.bindValue(.null, key: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encoder.bindInt(value ? 1 : 0, key: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encoder.bindValue(.string(value), key: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try encoder.bindValue(.double(value), key: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try encoder.bindValue(.double(Double(value)), key: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encoder.bindInt(value, key: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encode(UInt64(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encoder.bindInt(Int64(value), key: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        guard let exact = Int64(exactly: value) else {
            throw GQLError(
                .invalidValue, "\(value) is too large for an SQLite integer",
                table: encoder.schema.name, column: key.stringValue)
        }
        try encoder.bindInt(exact, key: key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.bindValue(try ColumnValue.encode(value), key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return KeyedEncodingContainer(BindingContainer<NestedKey>(encoder: encoder))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return NoopUnkeyed(encoder: encoder)
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

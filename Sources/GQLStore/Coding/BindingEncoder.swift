import CSQLite
import Foundation
import GQLCore

/// Encodes an object straight into the parameters of a prepared INSERT, UPDATE or upsert statement whose
/// parameters are the schema's columns in order — no intermediate values.
///
/// Keys normally arrive in the schema's order, so each is first compared with the expected column and only
/// looked up by name when the order differs. Columns no key was encoded for (a `nil` optional) are bound
/// to NULL at the end, since bindings persist between uses of a statement.
///
/// One encoder is kept per statement and reused for every row. Its per-row state lives in memory it owns
/// through a pointer, so the hot path pays no dynamic exclusivity checks on class properties.
final class BindingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let schema: TableSchema
    fileprivate let stmt: OpaquePointer
    /// For errors: the statement's SQL and its connection's handle. No reference back to the statement, which
    /// keeps its encoder.
    private let sql: String
    private let db: OpaquePointer?
    fileprivate let names: [String]
    /// Also bind the primary key to this parameter (the WHERE of an UPDATE).
    fileprivate let keyParameter: Int32
    fileprivate let keyColumn: Int

    /// Per-row state: the expected next column, the row's generation, and each column's last generation.
    fileprivate struct State {
        var cursor = 0
        var generation: UInt32 = 0
        var problem: GQLError?
    }
    fileprivate let state: UnsafeMutablePointer<State>
    fileprivate let written: UnsafeMutablePointer<UInt32>

    init(schema: TableSchema, statement: Statement, keyParameter: Int32?) {
        self.schema = schema
        self.stmt = statement.stmt
        self.sql = statement.sql
        self.db = sqlite3_db_handle(statement.stmt)
        self.names = schema.columnNames
        self.keyParameter = keyParameter ?? 0
        self.keyColumn = schema.primaryKeyIndex
        state = .allocate(capacity: 1)
        state.initialize(to: State())
        written = .allocate(capacity: max(1, schema.columns.count))
        written.initialize(repeating: 0, count: max(1, schema.columns.count))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        written.deallocate()
    }

    /// The statement's encoder, made once and reused for every row it binds.
    static func reused(for statement: Statement, schema: TableSchema, keyParameter: Int32?) -> BindingEncoder {
        if let encoder = statement.binder, encoder.schema === schema { return encoder }
        let encoder = BindingEncoder(schema: schema, statement: statement, keyParameter: keyParameter)
        statement.binder = encoder
        return encoder
    }

    /// Binds every column of `object`.
    func bind<T: Encodable>(_ object: T) throws {
        state.pointee.cursor = 0
        state.pointee.problem = nil
        state.pointee.generation &+= 1
        if state.pointee.generation == 0 {  // wrapped: no column may look written
            written.update(repeating: 0, count: names.count)
            state.pointee.generation = 1
        }
        try object.encode(to: self)
        if let problem = state.pointee.problem { throw problem }
        let generation = state.pointee.generation
        for index in 0..<names.count where written[index] != generation {
            try bind(.null, column: index)
        }
    }

    /// The column index for `key`, marked as written; `nil` (and a problem noted) for an unknown key.
    @inline(__always)
    fileprivate func column(_ key: some CodingKey) -> Int? {
        let name = key.stringValue
        let c = state.pointee.cursor
        let index: Int
        if c < names.count, names[c] == name {
            index = c
        } else if let found = schema.columnIndex[name] {
            index = found
        } else {
            state.pointee.problem = GQLError(
                .encoding, "\(schema.name) encoded the key '\(name)', which its table has no column for",
                table: schema.name, column: name)
            return nil
        }
        state.pointee.cursor = index + 1
        written[index] = state.pointee.generation
        return index
    }

    @inline(__always)
    fileprivate func check(_ rc: Int32, _ index: Int) throws {
        guard rc == SQLITE_OK else {
            var error = Connection.error(db, rc, sql: sql, table: schema.name)
            error.column = names[index]
            throw error
        }
    }

    /// Binds to the column's parameter, and to the key parameter too when the column is the key.
    @inline(__always)
    fileprivate func bindEach(_ index: Int, _ body: (Int32) -> Int32) throws {
        try check(body(Int32(index + 1)), index)
        if index == keyColumn && keyParameter > 0 { try check(body(keyParameter), index) }
    }

    @inline(__always)
    fileprivate func bindInt(_ value: Int64, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        try bindEach(index) { sqlite3_bind_int64(stmt, $0, value) }
    }

    @inline(__always)
    fileprivate func bindDouble(_ value: Double, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        guard value.isFinite else {
            throw GQLError(
                .invalidValue, "cannot store the number \(value)", table: schema.name, column: names[index])
        }
        try bindEach(index) { sqlite3_bind_double(stmt, $0, value) }
    }

    @inline(__always)
    fileprivate func bindText(_ value: String, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        var value = value
        try value.withUTF8 { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { chars in
                // A NULL pointer would bind SQL NULL; an empty string needs a real (empty) buffer.
                let base = chars.baseAddress
                try bindEach(index) { parameter in
                    guard let base else { return sqlite3_bind_text(stmt, parameter, "", 0, SQLITE_TRANSIENT) }
                    return sqlite3_bind_text(stmt, parameter, base, Int32(chars.count), SQLITE_TRANSIENT)
                }
            }
        }
    }

    fileprivate func bindValue(_ value: GQLValue, key: some CodingKey) throws {
        guard let index = column(key) else { return }
        try bind(value, column: index)
    }

    private func bind(_ value: GQLValue, column index: Int) throws {
        do {
            try Statement.bind(value, at: Int32(index + 1), to: stmt, sql: sql)
            if index == keyColumn && keyParameter > 0 {
                try Statement.bind(value, at: keyParameter, to: stmt, sql: sql)
            }
        } catch var error as GQLError {
            error.table = schema.name
            error.column = names[index]
            throw error
        }
    }

    /// Holds the container made for the first row, so later rows reuse it: making one costs several generic
    /// metadata lookups and an allocation.
    private final class Reused<Key: CodingKey> {
        let container: KeyedEncodingContainer<Key>
        init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
    }
    private var reusedKey: ObjectIdentifier?
    private var reused: AnyObject?

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if reusedKey == ObjectIdentifier(Key.self), let reused {
            // The key type matched, so the holder is a Reused<Key>.
            return unsafeDowncast(reused, to: Reused<Key>.self).container
        }
        let container = KeyedEncodingContainer(BindingContainer<Key>(encoder: self))
        reused = Reused(container)
        reusedKey = ObjectIdentifier(Key.self)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        state.pointee.problem = GQLError(
            .encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopUnkeyed(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        state.pointee.problem = GQLError(
            .encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopSingle()
    }
}

private struct BindingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    /// The encoder that binds the values (a counted reference; Docs/Performance.md has what it costs).
    let encoder: BindingEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try encoder.bindValue(.null, key: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encoder.bindInt(value ? 1 : 0, key: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encoder.bindText(value, key: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try encoder.bindDouble(value, key: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try encoder.bindDouble(Double(value), key: key) }
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

    // Optionals: a nil leaves the column unwritten, and `bind` sets it to NULL at the end.
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encoder.bindText(value, key: key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encoder.bindInt(Int64(value), key: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encoder.bindDouble(value, key: key) }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encoder.bindInt(value ? 1 : 0, key: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.state.pointee.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return KeyedEncodingContainer(BindingContainer<NestedKey>(encoder: encoder))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.state.pointee.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return NoopUnkeyed(encoder: encoder)
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

import CSQLite
import Foundation
import GQLCore

/// Decodes an object straight from the current row of a statement that selects the schema's columns in
/// schema order. One decoder serves every row of a fetch; nothing is copied into dictionaries.
final class RowDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let statement: Statement
    let schema: TableSchema
    /// Copied out of the statement and schema so the per-field work touches no other object.
    private let stmt: OpaquePointer
    private let names: [String]
    private var cursor = 0

    init(statement: Statement, schema: TableSchema) {
        self.statement = statement
        self.schema = schema
        self.stmt = statement.stmt
        self.names = schema.columnNames
    }

    /// Decodes the current row: with ``GQLRowDecodable/init(row:)`` when the type adopts it, else `Decodable`.
    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        cursor = 0
        if let fast = T.self as? any GQLRowDecodable.Type, let value = try fast.init(row: GQLRow(self)) as? T {
            return value
        }
        return try T(from: self)
    }

    /// Decodes every remaining row.
    ///
    /// Rows go into a buffer of raw memory that grows by doubling and become an array once at the end:
    /// appending to an `Array` of a generic element in unspecialized code looks up the array's metadata on
    /// every append, which costs more than decoding a small row.
    func decodeAll<T: Decodable>(_ type: T.Type) throws -> [T] {
        if let fast = T.self as? any GQLRowDecodable.Type { return try decodeAll(fast, as: T.self) }
        return try collect { () throws -> T in
            cursor = 0
            return try T(from: self)
        }
    }

    /// Decodes every remaining row with `R.init(row:)`, where `R` is `T` itself (checked, not assumed).
    private func decodeAll<R: GQLRowDecodable, T>(_ fast: R.Type, as type: T.Type) throws -> [T] {
        guard R.self == T.self else { return [] }
        let rows = try collect { () throws -> R in
            cursor = 0
            return try R(row: GQLRow(self))
        }
        // R and T are the same type (checked above), so the arrays are the same type too.
        return unsafeBitCast(rows, to: [T].self)
    }

    /// Makes one value per remaining row.
    @inline(__always)
    private func collect<T>(_ make: () throws -> T) throws -> [T] {
        var capacity = 64
        var count = 0
        var buffer = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        defer {
            buffer.deinitialize(count: count)
            buffer.deallocate()
        }
        while try statement.step() {
            if count == capacity {
                let larger = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
                larger.moveInitialize(from: buffer, count: count)
                buffer.deallocate()
                buffer = larger
                capacity *= 2
            }
            (buffer + count).initialize(to: try make())
            count += 1
        }
        let rows = count
        count = 0  // moved out below; nothing left for the deferred deinitialize
        // No rows: the empty array, without writing a count into the storage every empty array shares (which
        // ThreadSanitizer reports as a race between threads that decode no rows at once).
        guard rows > 0 else { return [] }
        return [T](unsafeUninitializedCapacity: rows) { target, initialized in
            target.baseAddress?.moveInitialize(from: buffer, count: rows)
            initialized = rows
        }
    }

    /// The column named `name`, or `nil` when the table has none. Fields usually come in column order, so the
    /// expected next column is compared first.
    @inline(__always)
    func index(_ name: String) -> Int32? {
        let c = cursor
        if c < names.count, names[c] == name {
            cursor = c + 1
            return Int32(c)
        }
        if c > 0, names[c - 1] == name { return Int32(c - 1) }
        guard let index = schema.columnIndex[name] else { return nil }
        cursor = index + 1
        return Int32(index)
    }

    func mismatch(_ name: String, _ type: Any.Type, found: GQLValue, detail: String? = nil) -> GQLError {
        var message: String
        if found.isNull {
            message = "column '\(name)' of \(schema.name) is NULL, but \(type) is not optional"
        } else {
            message = "column '\(name)' of \(schema.name): expected \(type), found \(found.storedDescription)"
        }
        if let detail { message += " (\(detail))" }
        return GQLError(.decoding, message, table: schema.name, column: name)
    }

    func missing(_ name: String, _ type: Any.Type) -> GQLError {
        GQLError(
            .decoding, "\(schema.name) has no column '\(name)' for a \(type) value", table: schema.name, column: name)
    }

    /// A reader of this decoder's current row, for containers and ``GQLRow``.
    var reader: ColumnReader { ColumnReader(stmt: stmt, decoder: self) }

    /// Holds the container made for the first row, so later rows reuse it: making one costs several generic
    /// metadata lookups and an allocation, more than decoding a row's fields.
    private final class Reused<Key: CodingKey> {
        let container: KeyedDecodingContainer<Key>
        init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
    }
    private var reusedKey: ObjectIdentifier?
    private var reused: AnyObject?

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if reusedKey == ObjectIdentifier(Key.self), let reused {
            // The key type matched, so the holder is a Reused<Key>.
            return unsafeDowncast(reused, to: Reused<Key>.self).container
        }
        let container = KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
        reused = Reused(container)
        reusedKey = ObjectIdentifier(Key.self)
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }
}

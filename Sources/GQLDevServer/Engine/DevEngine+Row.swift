import GQLCore
import GQLStore
import GraphQL

extension DevEngine {
    /// A `getT` root field's value written straight from its row's columns, charged to `budget` as
    /// ``ModelResolvers/get(_:key:budget:)`` charges its item: no row or item dictionary, and no ``GQLValue`` for a
    /// column in one of the common forms (plain ASCII text, an integer, a boolean, a finite real, each in its field's
    /// own kind). Every query of that shape answers this way, whatever its transport or headers.
    ///
    /// The bytes, errors and budget are those of the item ``ModelStore/get(_:)`` reads written by
    /// ``writeObject(_:_:path:errors:into:)``: a column in any other form (another storage class, text that needs an
    /// escape or is not ASCII, an `Int` out of its range) becomes the same item value and goes through the same
    /// member writer (``member(_:_:path:errors:into:)``).
    static func written(
        _ field: OperationPlan.RootField, _ source: OperationPlan.RowSource, key: GQLValue?, budget: ResponseBudget
    ) throws -> FieldAnswer {
        let store = source.store
        let key = try store.codec.key(key)
        var answer: FieldAnswer?
        var size = 0
        try store.withRows(key) { columns in
            guard answer == nil else { return }  // the first row, as `get` takes it
            size = itemSize(columns, source)
            var out = ResponseJSON(capacity: 128)
            var errors: [GraphQLError] = []
            if !writeObject(columns, field, store, errors: &errors, into: &out) {
                out = ResponseJSON(capacity: 4)
                out.raw("null")
            }
            answer = .written(out, errors)
        }
        // After every row is read, as `get` charges its item after `fetchAll`; no row charges nothing (0 bytes).
        try budget.charge(bytes: size)
        return answer ?? .item(nil)
    }

    /// The item's members in selection order; `false` when a non-null member makes it null (part of it written).
    private static func writeObject(
        _ columns: GQLColumns, _ field: OperationPlan.RootField, _ store: ModelStore,
        errors: inout [GraphQLError], into out: inout ResponseJSON
    ) -> Bool {
        out.raw(ascii: UInt8(ascii: "{"))
        for (n, output) in field.outputs.enumerated() {
            if n > 0 { out.raw(ascii: UInt8(ascii: ",")) }
            out.raw(output.keyJSON)
            let column = field.columns[n]
            if let index = column.index {
                // A NULL column is a null item value (``ModelCodec/itemValue(_:_:)``), which the member writer
                // writes as `null` for a nullable output; a non-null one takes its error path below.
                if column.nullable, columns.kind(Int32(index)) == .null {
                    out.raw(Self.null)
                    continue
                }
                if writeColumn(columns, Int32(index), column.form, into: &out) { continue }
            }
            // Any other form: the item's value, as `codec.item` makes it, through the dictionary path's writer.
            let value: (String) -> GQLValue? = { name in
                (column.index ?? store.model.fieldIndex[name]).map {
                    store.codec.itemValue(columns.value(Int32($0)), store.model.fields[$0])
                }
            }
            guard member(output, value, path: { [field.key] }, errors: &errors, into: &out) else { return false }
        }
        out.raw(ascii: UInt8(ascii: "}"))
        return true
    }

    private static let null: [UInt8] = Array("null".utf8)
    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)

    /// Writes a column in its output's common form as the dictionary path writes its item value; `false`, nothing
    /// written, for a value in any other (a NULL included: the member writer decides what a null means for the
    /// item).
    @inline(__always)
    private static func writeColumn(
        _ columns: GQLColumns, _ index: Int32, _ form: OperationPlan.ColumnOutput.Form, into out: inout ResponseJSON
    ) -> Bool {
        switch form {
        case .text:
            return columns.withASCIIText(index) { out.plainASCII($0) }
        case .int32:
            // Outside Int32 GraphQL's `Int` refuses it: the member writer gives its error.
            guard let i = columns.integer(index), Int64(Int32.min) <= i, i <= Int64(Int32.max) else { return false }
            out.integer(i)
            return true
        case .timestamp:
            guard let i = columns.integer(index) else { return false }
            out.integer(i)
            return true
        case .boolean:
            guard let i = columns.integer(index) else { return false }
            out.raw(i != 0 ? Self.trueBytes : Self.falseBytes)
            return true
        case .real:
            guard let d = columns.real(index), d.isFinite else { return false }
            return (try? out.value(.double(d))) != nil
        case .none:
            return false
        }
    }

    /// What ``ResponseBudget/charge(_:)`` counts for the item of this row: every field's name and value, each value
    /// read from its column without making it in the common forms (``OperationPlan/RowSource/ItemSize``).
    private static func itemSize(_ columns: GQLColumns, _ source: OperationPlan.RowSource) -> Int {
        var bytes = source.store.model.nameBytes
        for (i, size) in source.sizes.enumerated() {
            let index = Int32(i)
            switch size {
            case .text:
                // ASCII: the item's `String` has exactly these bytes.
                if let count = columns.asciiTextCount(index) {
                    bytes += count + 2
                    continue
                }
            case .integer:
                if columns.kind(index) == .integer {
                    bytes += 8  // an int or a bool
                    continue
                }
            case .number:
                let kind = columns.kind(index)
                if kind == .integer || kind == .real {
                    bytes += 8  // a double
                    continue
                }
            case .other:
                break
            }
            if columns.kind(index) == .null {
                bytes += 8  // a null item value, list or not
                continue
            }
            let store = source.store
            bytes += ResponseBudget.size(of: store.codec.itemValue(columns.value(index), store.model.fields[i]))
        }
        return bytes
    }
}

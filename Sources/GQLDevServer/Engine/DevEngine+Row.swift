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
        _ field: OperationPlan.RootField, _ store: ModelStore, key: GQLValue?, budget: ResponseBudget
    ) throws -> FieldAnswer {
        let key = try store.codec.key(key)
        var answer: FieldAnswer?
        var size = 0
        try store.withRows(key) { columns in
            guard answer == nil else { return }  // the first row, as `get` takes it
            size = itemSize(columns, store)
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
        let fields = store.model.fields
        out.raw(ascii: UInt8(ascii: "{"))
        for (n, output) in field.outputs.enumerated() {
            if n > 0 { out.raw(ascii: UInt8(ascii: ",")) }
            out.raw(output.keyJSON)
            let index = field.columns[n]
            if let index, case .column(_, _, let scalar, let nonNull) = output.value {
                // A NULL column is a null item value (``ModelCodec/itemValue(_:_:)``), which the member writer
                // writes as `null` for a nullable output; a non-null one takes its error path below.
                if !nonNull, columns.kind(Int32(index)) == .null {
                    out.raw(Self.null)
                    continue
                }
                if writeColumn(columns, Int32(index), fields[index], scalar.kind, into: &out) { continue }
            }
            // Any other form: the item's value, as `codec.item` makes it, through the dictionary path's writer.
            let value: (String) -> GQLValue? = { name in
                (index ?? store.model.fieldIndex[name]).map {
                    store.codec.itemValue(columns.value(Int32($0)), fields[$0])
                }
            }
            guard member(output, value, path: { [field.key] }, errors: &errors, into: &out) else { return false }
        }
        out.raw(ascii: UInt8(ascii: "}"))
        return true
    }

    private static let null: [UInt8] = Array("null".utf8)

    /// Writes a column in one of the common forms as the dictionary path writes its item value; `false`, nothing
    /// written, for any other (a NULL included: the member writer decides what a null means for the item).
    @inline(__always)
    private static func writeColumn(
        _ columns: GQLColumns, _ index: Int32, _ field: ModelDefinition.Field, _ kind: OperationPlan.Scalar.Kind,
        into out: inout ResponseJSON
    ) -> Bool {
        guard !field.isList else { return false }
        switch (columns.kind(index), field.scalar, kind) {
        case (.text, .id, .id), (.text, .string, .string), (.text, .awsDateTime, .awsDateTime),
            (.text, .awsJSON, .awsJSON):
            return columns.withText(index) { out.plainASCII($0) } ?? false
        case (.integer, .int, .int):
            // Outside Int32 GraphQL's `Int` refuses it: the member writer gives its error.
            guard let i = columns.integer(index), Int64(Int32.min) <= i, i <= Int64(Int32.max) else { return false }
            out.raw(String(i))
            return true
        case (.integer, .awsTimestamp, .awsTimestamp):
            guard let i = columns.integer(index) else { return false }
            out.raw(String(i))
            return true
        case (.integer, .boolean, .boolean):
            guard let i = columns.integer(index) else { return false }
            out.raw(i != 0 ? "true" : "false")
            return true
        case (.real, .float, .float):
            guard let d = columns.real(index), d.isFinite else { return false }
            return (try? out.value(.double(d))) != nil
        default:
            return false
        }
    }

    /// What ``ResponseBudget/charge(_:)`` counts for the item of this row: every field's name and value.
    private static func itemSize(_ columns: GQLColumns, _ store: ModelStore) -> Int {
        var bytes = store.model.nameBytes
        for (i, field) in store.model.fields.enumerated() {
            bytes += valueSize(columns, Int32(i), field, store.codec)
        }
        return bytes
    }

    /// ``ResponseBudget/size(of:)`` of the field's item value, read from the column without making the value in
    /// the common forms.
    private static func valueSize(
        _ columns: GQLColumns, _ index: Int32, _ field: ModelDefinition.Field, _ codec: ModelCodec
    ) -> Int {
        let kind = columns.kind(index)
        if kind == .null { return 8 }  // a null item value, list or not
        if !field.isList {
            switch (kind, field.scalar) {
            case (.text, .id), (.text, .string), (.text, .awsDateTime), (.text, .awsJSON), (.text, .enumeration):
                // ASCII: the item's `String` has exactly these bytes.
                if let count = columns.withText(index, { $0.allSatisfy { $0 < 0x80 } ? $0.count : nil }) ?? nil {
                    return count + 2
                }
            case (.integer, .int), (.integer, .awsTimestamp), (.integer, .boolean), (.integer, .float), (.real, .float):
                return 8  // an int, a bool or a double
            default:
                break
            }
        }
        return ResponseBudget.size(of: codec.itemValue(columns.value(index), field))
    }
}

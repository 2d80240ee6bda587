import Foundation
import GQLCore

/// How a model's values move between GraphQL and SQLite: rows (raw SQLite values) become typed items
/// (booleans as `Bool`, lists as arrays), and input values become column values (lists as JSON text).
struct ModelCodec: Sendable {
    let model: ModelDefinition

    // MARK: Rows to items

    /// A fetched row as the item GraphQL returns.
    func item(_ row: GQLValues) -> GQLValues {
        var item = GQLValues(minimumCapacity: model.fields.count)
        for field in model.fields {
            item[field.name] = itemValue(row[field.name] ?? .null, field)
        }
        return item
    }

    /// One column's raw value as the item holds it (what ``item(_:)`` stores under the field's name).
    func itemValue(_ raw: GQLValue, _ field: ModelDefinition.Field) -> GQLValue {
        if raw.isNull { return .null }
        if field.isList {
            guard let text = raw.stringValue, let parsed = try? GQLValue(json: text), let elements = parsed.arrayValue
            else { return .null }
            return .array(elements.map { $0.isNull ? .null : scalarValue($0, field.scalar) })
        }
        return scalarValue(raw, field.scalar)
    }

    private func scalarValue(_ raw: GQLValue, _ scalar: ModelDefinition.Scalar) -> GQLValue {
        switch scalar {
        case .boolean:
            if let b = raw.boolValue { return .bool(b) }
            return .bool((raw.intValue ?? 0) != 0)
        case .int, .awsTimestamp:
            return raw.intValue.map(GQLValue.int) ?? raw
        case .float:
            return raw.doubleValue.map(GQLValue.double) ?? raw
        case .awsJSON:
            if case .string = raw { return raw }
            return .string((try? raw.jsonString()) ?? "null")
        case .id, .string, .awsDateTime, .enumeration:
            switch raw {
            case .string: return raw
            case .int(let i): return .string(String(i))
            case .double(let d): return .string(String(d))
            default: return .string(raw.description)
            }
        }
    }

    // MARK: Inputs to columns

    /// An input value as the column stores it.
    ///
    /// - Throws: ``ResolverError`` for a value of the wrong kind or a null in a non-null field.
    func column(_ value: GQLValue, _ field: ModelDefinition.Field) throws -> GQLValue {
        if value.isNull {
            guard !field.nonNull else {
                throw ResolverError.badRequest("\(model.name).\(field.name) is non-null and cannot be set to null")
            }
            return .null
        }
        if field.isList {
            guard let elements = value.arrayValue else {
                throw ResolverError.badRequest("\(model.name).\(field.name) expects a list, got \(value.kindName)")
            }
            let coerced = try elements.map { $0.isNull ? GQLValue.null : try scalar($0, field) }
            return .string(try GQLValue.array(coerced).jsonString())
        }
        return try scalar(value, field)
    }

    /// A scalar input value (filter operand, key, field value) in the field's kind.
    func scalar(_ value: GQLValue, _ field: ModelDefinition.Field) throws -> GQLValue {
        func wrong() -> ResolverError {
            ResolverError.badRequest(
                "\(model.name).\(field.name) expects \(field.scalar.graphQLName), got \(value.kindName) \(value)")
        }
        switch field.scalar {
        case .boolean:
            guard let b = value.boolValue else { throw wrong() }
            return .bool(b)
        case .int, .awsTimestamp:
            guard let i = value.intValue else { throw wrong() }
            return .int(i)
        case .float:
            guard let d = value.doubleValue else { throw wrong() }
            return .double(d)
        case .awsJSON:
            if let text = value.stringValue {
                guard (try? GQLValue(json: text)) != nil else {
                    throw ResolverError.badRequest("\(model.name).\(field.name): '\(text)' is not valid JSON")
                }
                return .string(text)
            }
            return .string(try value.jsonString())
        case .id, .string, .awsDateTime, .enumeration:
            switch value {
            case .string: return value
            case .int(let i) where field.scalar == .id: return .string(String(i))
            default: throw wrong()
            }
        }
    }

    /// A key argument in the key field's kind.
    func key(_ value: GQLValue?) throws -> GQLValue {
        guard let value, !value.isNull else {
            throw ResolverError.badRequest("\(model.key), the key of \(model.name), is required")
        }
        return try scalar(value, model.keyField)
    }
}

extension ModelCodec {
    /// Milliseconds since 1970, as `_lastChangedAt` and `startedAt` hold them.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}

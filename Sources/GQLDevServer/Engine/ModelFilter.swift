import GQLCore

/// A parsed `filter` or `condition` argument: translated to an SQL `WHERE` with bound arguments for queries,
/// or evaluated in Swift against an item for subscriptions and mutation conditions. Both follow DynamoDB's
/// meaning: a missing attribute is not equal, not less and not greater than anything, and `ne`/`notContains`
/// hold for it.
indirect enum ModelFilter: Sendable {
    case all([ModelFilter])
    case any([ModelFilter])
    case not(ModelFilter)
    case compare(ModelDefinition.Field, Operator, GQLValue)

    enum Operator: String, Sendable, CaseIterable {
        case eq, ne, gt, ge, lt, le, contains, notContains, beginsWith, between, attributeExists, `in`, notIn
    }

    // MARK: Parsing

    /// Parses a filter input object; `nil` or `null` is no filter.
    ///
    /// Its nesting is bounded by ``GQLDevServer/Limits/maxValueDepth`` before it gets here; its size by
    /// `maxTerms`, comparisons and list elements counted, so the SQL built from it stays within SQLite's limits.
    ///
    /// - Throws: ``ResolverError`` naming the unknown field or operator, or the bad operand; ``LimitExceeded``
    ///   (`FILTER_LIMIT_EXCEEDED`) for a filter of more than `maxTerms` terms.
    static func parse(_ value: GQLValue?, codec: ModelCodec, maxTerms: Int = 1_000) throws -> ModelFilter? {
        guard let value, !value.isNull else { return nil }
        let terms = countTerms(value)
        guard terms <= maxTerms else {
            throw LimitExceeded(
                .filter, "The filter has \(terms) terms (comparisons and list elements); the limit is \(maxTerms).",
                limit: maxTerms)
        }
        return try parseObject(value, codec: codec)
    }

    /// Comparisons and list elements in a filter value, before it is parsed: each operator of a field counts 1, and
    /// each element of its list operand 1 more.
    private static func countTerms(_ value: GQLValue) -> Int {
        guard let members = value.objectValue else { return 0 }
        var terms = 0
        for (name, member) in members {
            switch name {
            case "and", "or": terms += (member.arrayValue ?? []).reduce(0) { $0 + countTerms($1) }
            case "not": terms += countTerms(member)
            default:
                for operand in (member.objectValue ?? [:]).values { terms += 1 + (operand.arrayValue?.count ?? 0) }
            }
        }
        return terms
    }

    private static func parseObject(_ value: GQLValue, codec: ModelCodec) throws -> ModelFilter {
        guard let members = value.objectValue else {
            throw ResolverError.badRequest("a filter must be an object, got \(value.kindName)")
        }
        var parts: [ModelFilter] = []
        for name in members.keys.sorted() {
            guard let member = members[name], !member.isNull else { continue }
            switch name {
            case "and", "or":
                guard let elements = member.arrayValue else {
                    throw ResolverError.badRequest("filter '\(name)' expects a list of filters")
                }
                let inner = try elements.filter { !$0.isNull }.map { try parseObject($0, codec: codec) }
                parts.append(name == "and" ? .all(inner) : .any(inner))
            case "not":
                let inner = try parseObject(member, codec: codec)
                // not(not(x)) holds exactly where x holds: no nesting for SQLite's parser to count.
                if case .not(let twice) = inner { parts.append(twice) } else { parts.append(.not(inner)) }
            default:
                guard let field = codec.model.field(name) else {
                    throw ResolverError.badRequest("\(codec.model.name) has no field '\(name)' to filter on")
                }
                parts.append(try parseField(field, member, codec: codec))
            }
        }
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    private static func parseField(_ field: ModelDefinition.Field, _ value: GQLValue, codec: ModelCodec) throws
        -> ModelFilter
    {
        guard let operators = value.objectValue else {
            throw ResolverError.badRequest("the filter on '\(field.name)' must be an object such as {eq: …}")
        }
        var parts: [ModelFilter] = []
        for name in operators.keys.sorted() {
            guard let operand = operators[name] else { continue }
            guard let op = Operator(rawValue: name) else {
                throw ResolverError.badRequest("unknown filter operator '\(name)' on '\(field.name)'")
            }
            parts.append(.compare(field, op, try operandValue(op, operand, field, codec)))
        }
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    private static func operandValue(
        _ op: Operator, _ operand: GQLValue, _ field: ModelDefinition.Field, _ codec: ModelCodec
    ) throws -> GQLValue {
        switch op {
        case .attributeExists:
            guard let b = operand.boolValue else {
                throw ResolverError.badRequest("attributeExists on '\(field.name)' expects a Boolean")
            }
            return .bool(b)
        case .between, .in, .notIn:
            guard let elements = operand.arrayValue else {
                throw ResolverError.badRequest("\(op.rawValue) on '\(field.name)' expects a list")
            }
            if op == .between, elements.count != 2 {
                throw ResolverError.badRequest("between on '\(field.name)' expects two values, got \(elements.count)")
            }
            return .array(try elements.map { try codec.scalar($0, field) })
        case .eq, .ne:
            if operand.isNull { return .null }
            if field.isList {
                throw ResolverError.badRequest(
                    "\(op.rawValue) is not supported on the list field '\(field.name)'; use contains")
            }
            return try codec.scalar(operand, field)
        case .gt, .ge, .lt, .le, .beginsWith:
            if field.isList {
                throw ResolverError.badRequest("\(op.rawValue) is not supported on the list field '\(field.name)'")
            }
            guard !operand.isNull else {
                throw ResolverError.badRequest("\(op.rawValue) on '\(field.name)' needs a value, not null")
            }
            return try codec.scalar(operand, field)
        case .contains, .notContains:
            guard !operand.isNull else {
                throw ResolverError.badRequest("\(op.rawValue) on '\(field.name)' needs a value, not null")
            }
            return try codec.scalar(operand, field)
        }
    }

    // MARK: SQL

    /// The condition as SQL, appending its operands to `arguments` in order.
    func sql(_ arguments: inout [GQLValue]) -> String {
        switch self {
        case .all(let parts):
            guard !parts.isEmpty else { return "1" }
            return Self.balanced(parts.map { $0.sql(&arguments) }[...], "AND")
        case .any(let parts):
            guard !parts.isEmpty else { return "0" }
            return Self.balanced(parts.map { $0.sql(&arguments) }[...], "OR")
        case .not(let inner):
            return "NOT coalesce(" + inner.sql(&arguments) + ", 0)"
        case .compare(let field, let op, let value):
            return Self.compareSQL(field, op, value, &arguments)
        }
    }

    /// `terms` joined by `op` as a balanced tree of parenthesized groups, so a filter of a thousand terms stays far
    /// below SQLite's expression depth limit (1000), which a flat `a OR b OR …` chain reaches.
    private static func balanced(_ terms: ArraySlice<String>, _ op: String) -> String {
        guard terms.count > 8 else { return "(" + terms.joined(separator: " \(op) ") + ")" }
        let middle = terms.startIndex + terms.count / 2
        return "(" + balanced(terms[..<middle], op) + " \(op) " + balanced(terms[middle...], op) + ")"
    }

    private static func compareSQL(
        _ field: ModelDefinition.Field, _ op: Operator, _ value: GQLValue, _ arguments: inout [GQLValue]
    ) -> String {
        let column = field.name.sqlIdentifier
        func bind(_ v: GQLValue) -> String {
            arguments.append(v)
            return "?"
        }
        switch op {
        case .eq: return value.isNull ? "\(column) IS NULL" : "\(column) = \(bind(value))"
        case .ne: return value.isNull ? "\(column) IS NOT NULL" : "\(column) IS NOT \(bind(value))"
        case .gt: return "\(column) > \(bind(value))"
        case .ge: return "\(column) >= \(bind(value))"
        case .lt: return "\(column) < \(bind(value))"
        case .le: return "\(column) <= \(bind(value))"
        case .contains, .notContains:
            let test =
                field.isList
                ? "EXISTS (SELECT 1 FROM json_each(\(column)) WHERE json_each.value = \(bind(value)))"
                : "coalesce(instr(\(column), \(bind(value))) > 0, 0)"
            return op == .contains ? test : "NOT \(test)"
        case .beginsWith: return "coalesce(instr(\(column), \(bind(value))) = 1, 0)"
        case .between:
            let bounds = value.arrayValue ?? []
            guard bounds.count == 2 else { return "0" }
            return "\(column) BETWEEN \(bind(bounds[0])) AND \(bind(bounds[1]))"
        case .attributeExists: return value.boolValue == true ? "\(column) IS NOT NULL" : "\(column) IS NULL"
        case .in, .notIn:
            let elements = value.arrayValue ?? []
            guard !elements.isEmpty else { return op == .in ? "0" : "1" }
            let list = "(" + elements.map(bind).joined(separator: ", ") + ")"
            return op == .in ? "coalesce(\(column) IN \(list), 0)" : "coalesce(\(column) NOT IN \(list), 1)"
        }
    }

    // MARK: Swift evaluation

    /// Whether `item` (typed, as ``ModelCodec/item(_:)`` makes it) satisfies the filter.
    func matches(_ item: GQLValues) -> Bool {
        switch self {
        case .all(let parts): return parts.allSatisfy { $0.matches(item) }
        case .any(let parts): return parts.contains { $0.matches(item) }
        case .not(let inner): return !inner.matches(item)
        case .compare(let field, let op, let value):
            return Self.compare(item[field.name] ?? .null, field, op, value)
        }
    }

    private static func compare(_ actual: GQLValue, _ field: ModelDefinition.Field, _ op: Operator, _ value: GQLValue)
        -> Bool
    {
        switch op {
        case .eq: return value.isNull ? actual.isNull : same(actual, value)
        case .ne: return value.isNull ? !actual.isNull : !same(actual, value)
        case .gt: return order(actual, value).map { $0 > 0 } ?? false
        case .ge: return order(actual, value).map { $0 >= 0 } ?? false
        case .lt: return order(actual, value).map { $0 < 0 } ?? false
        case .le: return order(actual, value).map { $0 <= 0 } ?? false
        case .contains, .notContains:
            let found: Bool
            if let elements = actual.arrayValue {
                found = elements.contains { same($0, value) }
            } else if let text = actual.stringValue, let part = value.stringValue {
                found = part.isEmpty || text.contains(part)
            } else {
                found = false
            }
            return op == .contains ? found : !found
        case .beginsWith:
            guard let text = actual.stringValue, let prefix = value.stringValue else { return false }
            return text.hasPrefix(prefix)
        case .between:
            guard let bounds = value.arrayValue, bounds.count == 2,
                let low = order(actual, bounds[0]), let high = order(actual, bounds[1])
            else { return false }
            return low >= 0 && high <= 0
        case .attributeExists: return actual.isNull != (value.boolValue ?? false)
        case .in, .notIn:
            guard !actual.isNull else { return op == .notIn }
            let found = (value.arrayValue ?? []).contains { same(actual, $0) }
            return op == .in ? found : !found
        }
    }

    private static func same(_ a: GQLValue, _ b: GQLValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }

    /// -1, 0 or 1 for comparable values of one kind; `nil` when either is null or the kinds differ.
    private static func order(_ a: GQLValue, _ b: GQLValue) -> Int? {
        if let x = a.doubleValue, let y = b.doubleValue { return x < y ? -1 : (x > y ? 1 : 0) }
        if let x = a.stringValue, let y = b.stringValue {
            // Byte order, as SQLite's BINARY collation compares.
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : (x == y ? 0 : 1)
        }
        if let x = a.boolValue, let y = b.boolValue { return x == y ? 0 : (!x ? -1 : 1) }
        return nil
    }
}

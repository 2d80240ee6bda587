import Foundation
import GQLCore
import GraphQL

extension DevEngine {
    /// A request checked and ready to run: its document parsed, within the limits and valid, and the operation it
    /// selects.
    package struct Prepared: Sendable {
        package let request: Request
        package let kind: OperationKind
        /// The estimated cost (see ``GQLDevServer/Limits/maxCost``).
        package let cost: Int
        /// The cache's entry for the request's text: held by reference, so preparing a request copies no document.
        let cached: CachedDocument
        var document: Document { cached.document }
        let operation: OperationDefinition
        /// The operation compiled to run without the executor, when it has one of the shapes a plan runs.
        let plan: OperationPlan?
    }

    /// Why a request cannot run; it was not executed.
    package struct Refusal: Error, Sendable {
        package enum Reason: Sendable, Equatable {
            /// The document does not parse, or selects no operation.
            case unparsable
            /// The document fails validation against the schema.
            case invalid
            /// The request is over one of the ``GQLDevServer/Limits``.
            case limit
        }

        package let reason: Reason
        /// The kind of the selected operation, when the document parsed and selects one.
        package let kind: OperationKind?
        let errors: [GraphQLError]

        init(_ reason: Reason, kind: OperationKind? = nil, errors: [GraphQLError]) {
            self.reason = reason
            self.kind = kind
            self.errors = errors
        }

        init(_ limit: LimitExceeded, kind: OperationKind? = nil) {
            self.init(.limit, kind: kind, errors: [limit.graphQLError()])
        }

        /// The `{"errors": […]}` response in `style`.
        package func response(_ style: ErrorStyle) -> GQLValue {
            ResponseFormatter(style: style).response(errors: errors)
        }

        /// The first error's `extensions.code`, if any.
        package var code: String? {
            if case .string(let code)? = errors.first?.extensions["code"] { return code }
            return nil
        }
    }

    /// A parsed document within the static limits, and valid, with what its operations need at each request. A
    /// class, so a request that finds it in the cache copies one reference, not its five members.
    final class CachedDocument: Sendable {
        let document: Document
        /// The document's operations in order, found once rather than at each request.
        let operations: [OperationDefinition]
        let limits: DocumentLimits
        /// The plans of the operations that compile (``OperationPlan``), by operation.
        let plans: [ObjectIdentifier: OperationPlan]
        /// The cost of each operation whose cost does not depend on its variables.
        let costs: [ObjectIdentifier: Int]

        init(
            document: Document, operations: [OperationDefinition], limits: DocumentLimits,
            plans: [ObjectIdentifier: OperationPlan], costs: [ObjectIdentifier: Int]
        ) {
            self.document = document
            self.operations = operations
            self.limits = limits
            self.plans = plans
            self.costs = costs
        }
    }

    /// Parses (or takes from the cache), checks the limits, validates, and selects the operation of `request`.
    ///
    /// The raw text is scanned before parsing, and the parsed document checked before validation, so a document
    /// that would exhaust the parser's stack or the validator's time is refused first.
    package func prepare(_ request: consuming Request) -> Result<Prepared, Refusal> {
        do throws(Refusal) {
            return .success(try prepared(request))
        } catch {
            return .failure(error)
        }
    }

    /// ``prepare(_:)``, its refusal thrown: for a caller that runs the request at once, which then holds the
    /// prepared request alone, with no `Result` to copy it out of and destroy (each copy of a ``Prepared`` retains
    /// and releases its request's strings and variables, the document and the plan).
    package func prepared(_ request: consuming Request) throws(Refusal) -> Prepared {
        let cached: CachedDocument
        if let hit = documents.withLock({ $0[GQLExactText(request.query)] }) {
            cached = hit
        } else {
            switch parse(request.query, operationName: request.operationName) {
            case .failure(let refusal): throw refusal
            case .success(let parsed): cached = parsed
            }
        }
        let operation: OperationDefinition
        do {
            operation = try Self.operation(among: cached.operations, named: request.operationName)
        } catch {
            throw Refusal(.unparsable, errors: [GraphQLError(message: error.message)])
        }
        let kind = Self.kind(of: operation)
        do throws(LimitExceeded) {
            try DocumentLimits.checkVariables(request.variables, maxValueDepth: cached.limits.limits.maxValueDepth)
        } catch {
            throw Refusal(error, kind: kind)
        }
        let id = ObjectIdentifier(operation)
        let cost = cached.costs[id] ?? cached.limits.cost(of: operation, variables: request.variables)
        if cost > limits.maxCost {
            throw Refusal(Self.costExceeded(cost, limit: limits.maxCost), kind: kind)
        }
        return Prepared(
            request: request, kind: kind, cost: cost, cached: cached, operation: operation, plan: cached.plans[id])
    }

    /// The refusal of a request (or batch) estimated at `cost`.
    static func costExceeded(_ cost: Int, limit: Int) -> LimitExceeded {
        LimitExceeded(
            .cost,
            "The request's estimated cost is \(cost) (each field times the page sizes of the lists around it); "
                + "the limit is \(limit).",
            limit: limit)
    }

    /// Scans, parses, checks and validates `query`; caches it when it is valid.
    private func parse(_ query: String, operationName: String?) -> Result<CachedDocument, Refusal> {
        do throws(LimitExceeded) {
            try DocumentScanner.check(query, maxTokens: limits.maxTokens, maxNesting: limits.maxNesting)
        } catch {
            return .failure(Refusal(error))
        }
        let document: Document
        do {
            document = try GraphQL.parse(source: Source(body: query, name: "GraphQL request"))
        } catch let error as GraphQLError {
            return .failure(Refusal(.unparsable, errors: [error]))
        } catch {
            return .failure(Refusal(.unparsable, errors: [GraphQLError(message: String(describing: error))]))
        }
        let checked = DocumentLimits(document, limits: limits, pagedFields: pagedFields)
        let kind = (try? Self.operation(in: document, named: operationName)).map(Self.kind)
        do throws(LimitExceeded) {
            try checked.checkDocument()
        } catch {
            return .failure(Refusal(error, kind: kind))
        }
        let errors = validate(schema: schema, ast: document)
        guard errors.isEmpty else { return .failure(Refusal(.invalid, kind: kind, errors: errors)) }
        var plans: [ObjectIdentifier: OperationPlan] = [:]
        var costs: [ObjectIdentifier: Int] = [:]
        for operation in checked.operations {
            let id = ObjectIdentifier(operation)
            if Self.compilesPlans, let plan = OperationPlan.compile(operation, schema: schema, fields: planActions) {
                plans[id] = plan
            }
            if !Self.costDependsOnVariables(operation.selectionSet, checked, visiting: []) {
                costs[id] = checked.cost(of: operation, variables: [:])
            }
        }
        let cached = CachedDocument(
            document: document, operations: Self.operations(in: document), limits: checked, plans: plans, costs: costs)
        documents.withLock { cache in
            if cache.count >= Self.documentCacheSize { cache.removeAll(keepingCapacity: true) }
            cache[GQLExactText(query)] = cached
        }
        return .success(cached)
    }

    /// Whether documents get compiled plans: yes, unless the environment variable `GQL_DEV_SERVER_PLANS` is `off`
    /// (to compare with the executor, or to rule the plans out when looking for a fault).
    static let compilesPlans = ProcessInfo.processInfo.environment["GQL_DEV_SERVER_PLANS"] != "off"

    /// Whether a root selection set's cost depends on variables: only a page field's `limit` given by a variable
    /// does (``DocumentLimits/cost(of:variables:)``), at the root, fragments included.
    private static func costDependsOnVariables(
        _ selectionSet: SelectionSet, _ limits: DocumentLimits, visiting: Set<String>
    ) -> Bool {
        selectionSet.selections.contains { selection in
            switch selection {
            case let field as Field:
                return limits.pagedFields.contains(field.name.value)
                    && field.arguments.contains { $0.name.value == "limit" && $0.value is Variable }
            case let inline as InlineFragment:
                return costDependsOnVariables(inline.selectionSet, limits, visiting: visiting)
            case let spread as FragmentSpread:
                let name = spread.name.value
                guard !visiting.contains(name), let fragment = limits.fragments[name] else { return false }
                return costDependsOnVariables(fragment.selectionSet, limits, visiting: visiting.union([name]))
            default:
                return false
            }
        }
    }

    static func kind(of operation: OperationDefinition) -> OperationKind {
        switch operation.operation {
        case .query: .query
        case .mutation: .mutation
        case .subscription: .subscription
        }
    }

    /// The operation a request selects: the one named `name`, or the only one.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` when there is none, or several and no (known) name.
    static func operation(in document: Document, named name: String?) throws(GQLError) -> OperationDefinition {
        try operation(among: operations(in: document), named: name)
    }

    /// The operation definitions of `document`, in order.
    static func operations(in document: Document) -> [OperationDefinition] {
        document.definitions.compactMap { $0 as? OperationDefinition }
    }

    /// ``operation(in:named:)`` among a document's `operations`.
    static func operation(among operations: [OperationDefinition], named name: String?) throws(GQLError)
        -> OperationDefinition
    {
        if let name, !name.isEmpty {
            guard let operation = operations.first(where: { $0.name?.value == name }) else {
                throw GQLError(.invalidArgument, "Unknown operation named \"\(name)\".", operation: name)
            }
            return operation
        }
        guard let operation = operations.first else {
            throw GQLError(.invalidArgument, "Must provide an operation.")
        }
        guard operations.count == 1 else {
            throw GQLError(.invalidArgument, "Must provide operation name if query contains multiple operations.")
        }
        return operation
    }
}

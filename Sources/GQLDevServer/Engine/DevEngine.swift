import Foundation
import GQLCore
import GQLStore
import GraphQL

/// The GraphQL side of the development server: the schema generated from `@model` types, its resolvers over
/// GQLStore, and subscriptions fed by GQLStore observers. Transports (HTTP, WebSocket) call it; it knows
/// nothing about them.
///
/// Requests and responses are JSON values (``GQLValue``) in the GraphQL-over-HTTP shape:
/// a response is `{"data": …, "errors": [...]}` with either member left out when absent.
///
/// ```swift
/// let engine = try DevEngine(sdl: nil, database: db)       // the default `Objects` model
/// let response = await engine.execute(.init(query: "{ listObjects { items { objectId text } } }"))   // .json
/// if case .stream(let events) = await engine.subscribe(.init(query: "subscription { onCreateObjects { objectId } }")) {
///     for try await event in events { print(event) }       // {"data":{"onCreateObjects":{…}}}
/// }
/// ```
package final class DevEngine: Sendable {
    /// The kind of a request's selected operation.
    package enum OperationKind: Sendable, Equatable {
        case query, mutation, subscription
    }

    /// One GraphQL request.
    package struct Request: Sendable, Hashable {
        package var query: String
        package var variables: GQLValues
        package var operationName: String?
        /// The caller's identity (the `sub` of the OpenID Connect token the transport accepted), which
        /// owner-scoped models (`@auth(rules: [{ allow: owner }])`) need; nil for a caller without one.
        package var owner: String?

        package init(query: String, variables: GQLValues = [:], operationName: String? = nil, owner: String? = nil) {
            self.query = query
            self.variables = variables
            self.operationName = operationName
            self.owner = owner
        }

        /// This request on behalf of `owner`.
        package func owned(by owner: String?) -> Request {
            var request = self
            request.owner = owner
            return request
        }
    }

    /// How errors are shaped in responses.
    package enum ErrorStyle: Sendable {
        /// The GraphQL spec's shape: `message`, `locations`, `path`, `extensions` (with `errorType`, `data`).
        case standard
        /// AWS AppSync's shape: `errorType`, `data` and `errorInfo` at the top level of each error.
        case appSync
    }

    /// A subscription's stream of responses (`data` in selection order).
    package typealias Events = AsyncThrowingStream<Response, any Error>

    /// What `subscribe` gives back: a stream of responses, or a response that ends the subscription at once
    /// (parse or validation errors, an operation that is not a subscription).
    package enum Subscription: Sendable {
        case stream(Events)
        case failed(GQLValue)
    }

    /// The database the models are stored in.
    package let database: GQLDatabase
    /// The full generated schema as SDL (what `gql-cli serve --print-schema` prints).
    package let schemaSDL: String
    /// The model names, in declaration order.
    package let modelNames: [String]

    /// What one request may ask.
    package let limits: GQLDevServer.Limits
    let schema: GraphQLSchema
    let hub: SubscriptionHub
    /// The queue that commits the mutations not committed on their caller's thread, in groups.
    let writes: WriteQueue
    /// The root fields that return pages (`listTs`, `syncTs`), for the cost estimate.
    let pagedFields: Set<String>
    /// The model operations a compiled ``OperationPlan`` can run, by root field name.
    let planActions: [String: OperationPlan.Action]
    private let groups = SubscriptionGroups()
    /// Parsed, checked and validated documents by query text (its bytes: `GQLExactText`), so repeated requests skip
    /// all three.
    let documents = GQLLocked<[GQLExactText: CachedDocument]>([:])
    static let documentCacheSize = 256

    /// Builds the schema from `sdl` (`type X @model { … }` declarations; `nil` for the default `Objects`
    /// model) and creates the models' tables in `database`.
    ///
    /// - Parameters:
    ///   - limits: what one request may ask (filters included).
    ///   - clock: the time mutations stamp (`createdAt`, `updatedAt`, `_lastChangedAt`) and sync reports.
    /// - Throws: ``GQLError`` `.invalidArgument` naming the line of a bad declaration.
    package init(
        sdl: String?, database: GQLDatabase, limits: GQLDevServer.Limits = .init(),
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        let parsed = try ModelParser.parse(sdl ?? ModelParser.defaultSDL, maxNesting: limits.maxNesting)
        var stores: [String: ModelStore] = [:]
        let writes = WriteQueue(database: database)
        let events = MutationEvents()
        for model in parsed.models {
            var store = ModelStore(
                model: model, database: database, maxFilterTerms: limits.maxFilterTerms, clock: clock,
                writes: writes, events: events)
            try store.createTable()
            stores[model.name] = store
        }
        // Outside a transaction, the store remembers the tables' columns for the mutations' transactions.
        for model in parsed.models { _ = try database.check(model.name) }
        let hub = SubscriptionHub(database: database, stores: stores, events: events)
        let generated = SchemaGenerator(models: parsed.models, enums: parsed.enums).sdl()
        let schema: GraphQLSchema
        do {
            schema = try buildSchema(source: generated)
        } catch {
            throw GQLError(.invalidArgument, "the generated schema is not valid: \(error)")
        }
        IntrospectionFix.install()
        try InputFieldCache.install(in: schema)
        var queries: [String: GraphQLFieldResolve] = [:]
        var mutations: [String: GraphQLFieldResolve] = [:]
        var subscriptions: [String: GraphQLFieldResolve] = [:]
        for model in parsed.models {
            guard let store = stores[model.name] else { continue }
            let modelResolvers = ModelResolvers(store: store, hub: hub)
            queries.merge(modelResolvers.queries) { a, _ in a }
            mutations.merge(modelResolvers.mutations) { a, _ in a }
            subscriptions.merge(modelResolvers.subscriptions) { a, _ in a }
        }
        let resolvers = ["Query": queries, "Mutation": mutations, "Subscription": subscriptions]
        for root in [schema.queryType, schema.mutationType, schema.subscriptionType] {
            guard let root, let byName = resolvers[root.name] else { continue }
            let original = root.fields
            let isSubscription = root.name == "Subscription"
            root.fields = {
                let fields = try original()
                for (name, field) in fields {
                    if isSubscription {
                        field.subscribe = byName[name]
                        field.resolve = ModelResolvers.eventResolver
                    } else {
                        field.resolve = byName[name]
                    }
                }
                return fields
            }
            _ = try root.fields()
        }
        var planActions: [String: OperationPlan.Action] = [:]
        // Owner-scoped models run on the executor, whose resolvers know the caller.
        for model in parsed.models where model.ownerField == nil {
            guard let store = stores[model.name] else { continue }
            planActions["get\(model.name)"] = .get(OperationPlan.RowSource(store))
            planActions["list\(model.plural)"] = .page(store, sync: false)
            planActions["sync\(model.plural)"] = .page(store, sync: true)
            for verb in ModelResolvers.Verb.allCases { planActions["\(verb)\(model.name)"] = .mutate(verb, store) }
        }
        self.planActions = planActions
        self.database = database
        self.limits = limits
        self.pagedFields = Set(parsed.models.flatMap { ["list\($0.plural)", "sync\($0.plural)"] })
        self.schema = schema
        self.hub = hub
        self.writes = writes
        self.modelNames = parsed.models.map(\.name)
        self.schemaSDL = printSchema(schema: schema)
    }

    /// The number of active subscriptions.
    package var subscriptionCount: Int { groups.memberCount }

    /// Runs a prepared query or mutation. Never throws: failures are `errors` in the response.
    ///
    /// An operation with a compiled ``OperationPlan`` runs straight on the model stores; every other one (and a
    /// planned one whose variables the plan is not certain about) runs on GraphQLSwift's executor. Both answer
    /// the same, `data` in selection order.
    /// - Parameter budget: the bytes the request may still read; a batch shares one.
    package func execute(_ prepared: Prepared, style: ErrorStyle = .standard, budget: ResponseBudget) async -> Response
    {
        let formatter = ResponseFormatter(style: style)
        if prepared.kind == .subscription {
            return Response(
                formatter.response(
                    message: "subscription operations cannot be executed as a request; subscribe over a WebSocket",
                    errorType: "UnsupportedOperation"))
        }
        if let plan = prepared.plan, let response = await run(plan, prepared, formatter: formatter, budget: budget) {
            return response
        }
        return await executeWithoutPlan(prepared, formatter: formatter, budget: budget)
    }

    /// Runs a prepared query or mutation on GraphQLSwift's executor.
    func executeWithoutPlan(_ prepared: Prepared, formatter: ResponseFormatter, budget: ResponseBudget) async
        -> Response
    {
        do {
            let result = try await GraphQL.execute(
                schema: schema, documentAST: prepared.document, rootValue: (),
                context: ResolverContext(budget: budget, owner: prepared.request.owner),
                variableValues: MapConversion.variables(prepared.request.variables),
                operationName: prepared.request.operationName)
            return formatter.json(result)
        } catch let error as GraphQLError {
            return Response(formatter.response(errors: [error]))
        } catch {
            return Response(formatter.response(message: String(describing: error)))
        }
    }

    /// Prepares and runs a query or mutation: the refusal's errors when it cannot run.
    package func execute(_ request: Request, style: ErrorStyle = .standard) async -> Response {
        switch prepare(request) {
        case .failure(let refusal): return Response(refusal.response(style))
        case .success(let prepared):
            return await execute(prepared, style: style, budget: ResponseBudget(limit: limits.maxResponseBytes))
        }
    }

    /// Starts a prepared subscription. The stream ends when the consumer stops iterating (the observer is removed).
    ///
    /// When `.stream` is returned, the subscription is registered: every change committed after this returns
    /// is delivered, as `{"data": {"onCreateT": item}}`, the item read when the change's observer event is
    /// handled. The subscription ends when the task iterating the stream is cancelled, or when the stream and
    /// its iterators are released (breaking out of a `for try await` loop ends it once the stream is dropped too).
    package func subscribe(_ prepared: Prepared, style: ErrorStyle = .standard) async -> Subscription {
        let request = prepared.request
        // Subscribers of the same request share one execution per event (see SubscriptionGroups).
        let key = SubscriptionGroups.Key(
            query: request.query,
            variables: (try? GQLValue.object(request.variables).jsonString(sortedKeys: true)) ?? "",
            operationName: request.operationName, appSync: style == .appSync, owner: request.owner)
        return await groups.join(key) { await openSubscription(prepared, style: style) }
    }

    /// Prepares and starts a subscription: `.failed` with the refusal's errors when it cannot run.
    package func subscribe(_ request: Request, style: ErrorStyle = .standard) async -> Subscription {
        switch prepare(request) {
        case .failure(let refusal): return .failed(refusal.response(style))
        case .success(let prepared): return await subscribe(prepared, style: style)
        }
    }

    /// Starts one GraphQL subscription for `prepared`, registered with the hub before it returns.
    private func openSubscription(_ prepared: Prepared, style: ErrorStyle) async -> Subscription {
        let formatter = ResponseFormatter(style: style)
        guard prepared.kind == .subscription else {
            return .failed(
                formatter.response(
                    message: "the operation is a \(prepared.operation.operation.rawValue), not a subscription",
                    errorType: "UnsupportedOperation"))
        }
        let results: AsyncThrowingStream<GraphQLResult, any Error>
        do {
            // The text passed the limits and validation in `prepare`: parsed again (GraphQLSwift has no public
            // subscribe over a parsed document), not validated again.
            let outcome = try await graphqlSubscribe(
                schema: schema, request: prepared.request.query,
                context: ResolverContext(
                    budget: ResponseBudget(limit: limits.maxResponseBytes), owner: prepared.request.owner),
                variableValues: MapConversion.variables(prepared.request.variables),
                operationName: prepared.request.operationName, validationRules: [])
            switch outcome {
            case .failure(let errors): return .failed(formatter.response(errors: errors.errors))
            case .success(let stream): results = stream
            }
        } catch let error as GraphQLError {
            return .failed(formatter.response(errors: [error]))
        } catch {
            return .failed(formatter.response(message: String(describing: error)))
        }
        return .stream(SubscriptionEvents.stream(results, formatter: formatter))
    }

    /// Ends every active subscription stream (for a server shutting down).
    package func finishSubscriptions() {
        hub.finishAll()
    }
}

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
/// let response = await engine.execute(.init(query: "{ listObjects { items { objectId text } } }"))
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
    package struct Request: Sendable, Equatable {
        package var query: String
        package var variables: GQLValues
        package var operationName: String?

        package init(query: String, variables: GQLValues = [:], operationName: String? = nil) {
            self.query = query
            self.variables = variables
            self.operationName = operationName
        }
    }

    /// How errors are shaped in responses.
    package enum ErrorStyle: Sendable {
        /// The GraphQL spec's shape: `message`, `locations`, `path`, `extensions` (with `errorType`, `data`).
        case standard
        /// AWS AppSync's shape: `errorType`, `data` and `errorInfo` at the top level of each error.
        case appSync
    }

    /// What `subscribe` gives back: a stream of responses, or a response that ends the subscription at once
    /// (parse or validation errors, an operation that is not a subscription).
    package enum Subscription: Sendable {
        case stream(AsyncThrowingStream<GQLValue, any Error>)
        case failed(GQLValue)
    }

    /// The database the models are stored in.
    package let database: GQLDatabase
    /// The full generated schema as SDL (what `gql-cli serve --print-schema` prints).
    package let schemaSDL: String
    /// The model names, in declaration order.
    package let modelNames: [String]

    let schema: GraphQLSchema
    let hub: SubscriptionHub
    private let groups = SubscriptionGroups()
    /// Parsed and validated documents by query text, so repeated requests skip parsing and validation.
    private let documents = GQLLocked<[String: Document]>([:])
    private static let documentCacheSize = 256

    /// Builds the schema from `sdl` (`type X @model { … }` declarations; `nil` for the default `Objects`
    /// model) and creates the models' tables in `database`.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` naming the line of a bad declaration.
    package init(sdl: String?, database: GQLDatabase) throws {
        let parsed = try ModelParser.parse(sdl ?? ModelParser.defaultSDL)
        var stores: [String: ModelStore] = [:]
        for model in parsed.models {
            let store = ModelStore(model: model, database: database)
            try store.createTable()
            stores[model.name] = store
        }
        // Outside a transaction, the store remembers the tables' columns for the mutations' transactions.
        for model in parsed.models { _ = try database.check(model.name) }
        let hub = SubscriptionHub(database: database, stores: stores)
        let generated = SchemaGenerator(models: parsed.models, enums: parsed.enums).sdl()
        let schema: GraphQLSchema
        do {
            schema = try buildSchema(source: generated)
        } catch {
            throw GQLError(.invalidArgument, "the generated schema is not valid: \(error)")
        }
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
        self.database = database
        self.schema = schema
        self.hub = hub
        self.modelNames = parsed.models.map(\.name)
        self.schemaSDL = printSchema(schema: schema)
    }

    /// The number of active subscriptions.
    package var subscriptionCount: Int { groups.memberCount }

    /// The kind of the operation `request` selects.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for a document that does not parse or names no operation.
    package func operationKind(_ request: Request) throws -> OperationKind {
        let document: Document
        if let cached = documents.withLock({ $0[request.query] }) {
            document = cached
        } else {
            do {
                document = try GraphQL.parse(source: Source(body: request.query, name: "GraphQL request"))
            } catch let error as GraphQLError {
                throw GQLError(.invalidArgument, error.message)
            }
        }
        let operation = try Self.operation(in: document, named: request.operationName)
        switch operation.operation {
        case .query: return .query
        case .mutation: return .mutation
        case .subscription: return .subscription
        }
    }

    /// Runs a query or mutation. Never throws: failures are `errors` in the response.
    package func execute(_ request: Request, style: ErrorStyle = .standard) async -> GQLValue {
        let formatter = ResponseFormatter(style: style)
        let document: Document
        switch prepare(request.query) {
        case .failure(let errors): return formatter.response(errors: errors.errors)
        case .success(let prepared): document = prepared
        }
        do {
            let operation = try Self.operation(in: document, named: request.operationName)
            if operation.operation == .subscription {
                return formatter.response(
                    message: "subscription operations cannot be executed as a request; subscribe over a WebSocket",
                    errorType: "UnsupportedOperation")
            }
            let result = try await GraphQL.execute(
                schema: schema, documentAST: document, rootValue: (), context: (),
                variableValues: MapConversion.variables(request.variables), operationName: request.operationName)
            return formatter.response(result)
        } catch let error as GQLError {
            return formatter.response(message: error.message)
        } catch let error as GraphQLError {
            return formatter.response(errors: [error])
        } catch {
            return formatter.response(message: String(describing: error))
        }
    }

    /// Starts a subscription. The stream ends when the consumer stops iterating (the observer is removed).
    ///
    /// When `.stream` is returned, the subscription is registered: every change committed after this returns
    /// is delivered, as `{"data": {"onCreateT": item}}`, the item read when the change's observer event is
    /// handled. The subscription ends when the task iterating the stream is cancelled, or when the stream and
    /// its iterators are released (breaking out of a `for try await` loop ends it once the stream is dropped too).
    package func subscribe(_ request: Request, style: ErrorStyle = .standard) async -> Subscription {
        // Subscribers of the same request share one execution per event (see SubscriptionGroups).
        let key = SubscriptionGroups.Key(
            query: request.query, variables: (try? GQLValue.object(request.variables).jsonString()) ?? "",
            operationName: request.operationName, appSync: style == .appSync)
        return await groups.join(key) { await openSubscription(request, style: style) }
    }

    /// Starts one GraphQL subscription for `request`, registered with the hub before it returns.
    private func openSubscription(_ request: Request, style: ErrorStyle) async -> Subscription {
        let formatter = ResponseFormatter(style: style)
        let document: Document
        switch prepare(request.query) {
        case .failure(let errors): return .failed(formatter.response(errors: errors.errors))
        case .success(let prepared): document = prepared
        }
        let results: AsyncThrowingStream<GraphQLResult, any Error>
        do {
            let operation = try Self.operation(in: document, named: request.operationName)
            guard operation.operation == .subscription else {
                return .failed(
                    formatter.response(
                        message: "the operation is a \(operation.operation.rawValue), not a subscription",
                        errorType: "UnsupportedOperation"))
            }
            let outcome = try await graphqlSubscribe(
                schema: schema, request: request.query,
                variableValues: MapConversion.variables(request.variables), operationName: request.operationName)
            switch outcome {
            case .failure(let errors): return .failed(formatter.response(errors: errors.errors))
            case .success(let stream): results = stream
            }
        } catch let error as GQLError {
            return .failed(formatter.response(message: error.message))
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

    // MARK: Documents

    /// The parsed, validated document for `query`, from the cache when it was seen before.
    private func prepare(_ query: String) -> Result<Document, GraphQLErrors> {
        if let cached = documents.withLock({ $0[query] }) { return .success(cached) }
        let document: Document
        do {
            document = try GraphQL.parse(source: Source(body: query, name: "GraphQL request"))
        } catch let error as GraphQLError {
            return .failure(GraphQLErrors([error]))
        } catch {
            return .failure(GraphQLErrors([GraphQLError(message: String(describing: error))]))
        }
        let errors = validate(schema: schema, ast: document)
        guard errors.isEmpty else { return .failure(GraphQLErrors(errors)) }
        documents.withLock { cache in
            if cache.count >= Self.documentCacheSize { cache.removeAll(keepingCapacity: true) }
            cache[query] = document
        }
        return .success(document)
    }

    /// The operation a request selects: the one named `name`, or the only one.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` when there is none, or several and no (known) name.
    static func operation(in document: Document, named name: String?) throws -> OperationDefinition {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
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

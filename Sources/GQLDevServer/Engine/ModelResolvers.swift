import GQLCore
import GraphQL

/// The root-field resolvers of one model: `getT`, `listTs`, `syncTs`, `createT`, `updateT`, `deleteT`, and
/// the subscribe resolvers of `onCreateT`, `onUpdateT`, `onDeleteT`.
struct ModelResolvers: Sendable {
    let store: ModelStore
    let hub: SubscriptionHub

    private var model: ModelDefinition { store.model }

    /// Resolvers of `Query` fields by name.
    var queries: [String: GraphQLFieldResolve] {
        let store = store
        let scope = OwnerScope(model)
        let get = "get\(model.name)"
        let list = "list\(model.plural)"
        let sync = "sync\(model.plural)"
        return [
            get: { _, args, context, info in
                try await ResolverError.guarding(info) {
                    let item = try Self.get(
                        store, key: Self.argument(args, store.model.key), budget: ResolverContext.budget(context))
                    if let scope, let item {
                        guard scope.owns(item, try scope.caller(ResolverContext.owner(context), get)) else {
                            throw OwnerScope.unauthorized(get, store.model.name)
                        }
                    }
                    return item.map(MapConversion.nativeObject)
                }
            },
            list: { _, args, context, info in
                try await ResolverError.guarding(info) {
                    MapConversion.nativeObject(
                        try Self.page(
                            store, try Self.scoped(scope, Self.arguments(args), context, list), sync: false,
                            budget: ResolverContext.budget(context)))
                }
            },
            sync: { _, args, context, info in
                try await ResolverError.guarding(info) {
                    MapConversion.nativeObject(
                        try Self.page(
                            store, try Self.scoped(scope, Self.arguments(args), context, sync), sync: true,
                            budget: ResolverContext.budget(context)))
                }
            },
        ]
    }

    /// A list or sync's arguments with the filter narrowed to the caller's items on an owner-scoped model.
    private static func scoped(_ scope: OwnerScope?, _ args: GQLValues, _ context: Any, _ operation: String) throws
        -> GQLValues
    {
        guard let scope else { return args }
        var args = args
        args["filter"] = scope.narrowed(args["filter"], to: try scope.caller(ResolverContext.owner(context), operation))
        return args
    }

    /// Resolvers of `Mutation` fields by name.
    var mutations: [String: GraphQLFieldResolve] {
        let store = store
        let scope = OwnerScope(model)
        var resolvers: [String: GraphQLFieldResolve] = [:]
        for verb in Verb.allCases {
            let operation = "\(verb)\(model.name)"
            resolvers[operation] = { _, args, context, info in
                try await ResolverError.guarding(info) {
                    var input = Self.argument(args, "input")
                    var condition = Self.argument(args, "condition")
                    if let scope {
                        let owner = try scope.caller(ResolverContext.owner(context), operation)
                        if verb != .create {
                            // Another's item is refused as AppSync refuses it; the condition keeps it so at commit.
                            let key = input?[store.model.key]
                            if let key, let current = try store.get(store.codec.key(key)),
                                !scope.owns(current, owner)
                            {
                                throw OwnerScope.unauthorized(operation, store.model.name)
                            }
                            condition = scope.narrowed(condition, to: owner)
                        }
                        if verb != .delete {
                            input = try scope.input(input, owner: owner, stamp: verb == .create, operation: operation)
                        }
                    }
                    return MapConversion.nativeObject(
                        try await Self.mutate(verb, store, input: input, condition: condition))
                }
            }
        }
        return resolvers
    }

    /// The mutations of a model.
    enum Verb: String, CaseIterable, Sendable, CustomStringConvertible {
        case create, update, delete
        var description: String { rawValue }
    }

    /// `getT`: the item with `key` (the key argument as GraphQL coerced it), charged to `budget`.
    static func get(_ store: ModelStore, key: GQLValue?, budget: ResponseBudget?) throws -> GQLValues? {
        let item = try store.get(store.codec.key(key))
        try budget?.charge(item.map { [$0] } ?? [])
        return item
    }

    /// `createT`, `updateT`, `deleteT` with their `input` and `condition` arguments as GraphQL coerced them.
    static func mutate(_ verb: Verb, _ store: ModelStore, input: GQLValue?, condition: GQLValue?) async throws
        -> GQLValues
    {
        try await store.commit(mutation(verb, store, input: input, condition: condition))
    }

    /// The transaction of `verb` for its `input` and `condition` arguments as GraphQL coerced them, checked and
    /// built, nothing written.
    static func mutation(_ verb: Verb, _ store: ModelStore, input: GQLValue?, condition: GQLValue?) throws
        -> ModelStore.Mutation
    {
        guard let input = input?.objectValue else {
            throw ResolverError.badRequest("\(verb)\(store.model.name) needs an input object")
        }
        return try store.mutation(verb, input, condition: store.filter(condition))
    }

    /// Subscribe resolvers of `Subscription` fields by name; each event's source is the item itself.
    var subscriptions: [String: GraphQLFieldResolve] {
        let store = store
        let hub = hub
        let events: [(String, SubscriptionHub.Event)] = [("Create", .create), ("Update", .update), ("Delete", .delete)]
        var resolvers: [String: GraphQLFieldResolve] = [:]
        for (name, event) in events {
            let operation = "on\(name)\(model.name)"
            resolvers[operation] = { _, args, context, info in
                try await ResolverError.guarding(info) {
                    var filter = Self.argument(args, "filter")
                    if let scope = OwnerScope(store.model) {
                        filter = scope.narrowed(filter, to: try scope.caller(ResolverContext.owner(context), operation))
                    }
                    return try hub.subscribe(table: store.model.name, event: event, filter: store.filter(filter))
                }
            }
        }
        return resolvers
    }

    /// The resolver of every subscription field: the event is the item.
    static let eventResolver: GraphQLFieldResolve = { source, _, _, _ in source }

    // MARK: Helpers

    /// An argument as a ``GQLValue``; `nil` when absent.
    static func argument(_ args: Map, _ name: String) -> GQLValue? {
        guard let map = args.dictionary?[name] else { return nil }
        return MapConversion.value(map)
    }

    /// Every argument as a ``GQLValue``; absent ones left out.
    static func arguments(_ args: Map) -> GQLValues {
        var values = GQLValues()
        for (name, map) in args.dictionary ?? [:] {
            if let value = MapConversion.value(map) { values[name] = value }
        }
        return values
    }

    /// `listTs` / `syncTs` with their arguments as GraphQL coerced them: the connection object (`items`,
    /// `nextToken` when there are more, `startedAt` for sync), its items charged to `budget`.
    static func page(_ store: ModelStore, _ args: GQLValues, sync: Bool, budget: ResponseBudget?) throws -> GQLValues {
        let startedAt = ModelCodec.milliseconds(store.clock())
        let filter = try store.filter(args["filter"])
        let limit = args["limit"].flatMap { $0.isNull ? nil : $0.intValue }.map { Int($0) }
        let token = args["nextToken"]?.stringValue
        let since = sync ? args["lastSync"].flatMap { $0.isNull ? nil : $0.intValue } : nil
        let page = try store.page(
            filter: filter, limit: limit, nextToken: token, includeDeleted: sync, since: since)
        try budget?.charge(page.items)
        var result: GQLValues = ["items": .array(page.items.map(GQLValue.object))]
        if let next = page.nextToken { result["nextToken"] = .string(next) }
        if sync { result["startedAt"] = .int(startedAt) }
        return result
    }
}

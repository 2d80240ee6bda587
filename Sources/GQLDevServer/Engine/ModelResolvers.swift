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
        return [
            "get\(model.name)": { _, args, context, info in
                try await ResolverError.guarding(info) {
                    let key = try store.codec.key(Self.argument(args, store.model.key))
                    let item = try store.get(key)
                    try (context as? ResponseBudget)?.charge(item.map { [$0] } ?? [])
                    return item.map(MapConversion.nativeObject)
                }
            },
            "list\(model.plural)": { _, args, context, info in
                try await ResolverError.guarding(info) {
                    try Self.page(store, args, sync: false, budget: context as? ResponseBudget)
                }
            },
            "sync\(model.plural)": { _, args, context, info in
                try await ResolverError.guarding(info) {
                    try Self.page(store, args, sync: true, budget: context as? ResponseBudget)
                }
            },
        ]
    }

    /// Resolvers of `Mutation` fields by name.
    var mutations: [String: GraphQLFieldResolve] {
        let store = store
        typealias Verb = @Sendable (ModelStore, GQLValues, ModelFilter?) async throws -> GQLValues
        let verbs: [(String, Verb)] = [
            ("create", { try await $0.create($1, condition: $2) }),
            ("update", { try await $0.update($1, condition: $2) }),
            ("delete", { try await $0.delete($1, condition: $2) }),
        ]
        var resolvers: [String: GraphQLFieldResolve] = [:]
        for (verb, run) in verbs {
            resolvers["\(verb)\(model.name)"] = { _, args, _, info in
                try await ResolverError.guarding(info) {
                    guard let input = Self.argument(args, "input")?.objectValue else {
                        throw ResolverError.badRequest("\(verb)\(store.model.name) needs an input object")
                    }
                    let condition = try store.filter(Self.argument(args, "condition"))
                    return MapConversion.nativeObject(try await run(store, input, condition))
                }
            }
        }
        return resolvers
    }

    /// Subscribe resolvers of `Subscription` fields by name; each event's source is the item itself.
    var subscriptions: [String: GraphQLFieldResolve] {
        let store = store
        let hub = hub
        let events: [(String, SubscriptionHub.Event)] = [("Create", .create), ("Update", .update), ("Delete", .delete)]
        var resolvers: [String: GraphQLFieldResolve] = [:]
        for (name, event) in events {
            resolvers["on\(name)\(model.name)"] = { _, args, _, info in
                try await ResolverError.guarding(info) {
                    let filter = try store.filter(Self.argument(args, "filter"))
                    return try hub.subscribe(table: store.model.name, event: event, filter: filter)
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

    private static func page(_ store: ModelStore, _ args: Map, sync: Bool, budget: ResponseBudget?) throws
        -> [String: any Sendable]
    {
        let startedAt = ModelCodec.milliseconds(store.clock())
        let filter = try store.filter(argument(args, "filter"))
        let limit = argument(args, "limit").flatMap { $0.isNull ? nil : $0.intValue }.map { Int($0) }
        let token = argument(args, "nextToken")?.stringValue
        let since = sync ? argument(args, "lastSync").flatMap { $0.isNull ? nil : $0.intValue } : nil
        let page = try store.page(
            filter: filter, limit: limit, nextToken: token, includeDeleted: sync, since: since)
        try budget?.charge(page.items)
        var result: [String: any Sendable] = [
            "items": page.items.map { MapConversion.nativeObject($0) } as [(any Sendable)?]
        ]
        if let next = page.nextToken { result["nextToken"] = next }
        if sync { result["startedAt"] = Int(startedAt) }
        return result
    }
}

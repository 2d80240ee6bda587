import GQLCore

/// What a resolver knows of its request besides its arguments: the response budget, and the caller's identity
/// (the `sub` of its OpenID Connect token, when it sent one the server accepted).
struct ResolverContext: Sendable {
    let budget: ResponseBudget
    let owner: String?

    /// The budget of a resolver's `context` (this type, or a bare ``ResponseBudget``).
    static func budget(_ context: Any) -> ResponseBudget? {
        (context as? ResolverContext)?.budget ?? context as? ResponseBudget
    }

    /// The caller of a resolver's `context`, nil when unknown.
    static func owner(_ context: Any) -> String? { (context as? ResolverContext)?.owner }
}

/// AppSync's owner authorization, `@auth(rules: [{ allow: owner }])` on a model: each item belongs to the caller
/// that created it (its `sub` in the owner field, `owner` unless the rule names an `ownerField`). Creates stamp the
/// owner (an input naming another is refused); gets, lists, syncs, updates, deletes and subscriptions see the
/// caller's items only; a caller with no token identity (an API key, no credentials) is refused.
struct OwnerScope: Sendable {
    let field: String
    let model: String

    init?(_ model: ModelDefinition) {
        guard let field = model.ownerField else { return nil }
        self.field = field
        self.model = model.name
    }

    /// The caller's identity, or AppSync's refusal for `operation` when there is none.
    func caller(_ owner: String?, _ operation: String) throws -> String {
        guard let owner, !owner.isEmpty else { throw Self.unauthorized(operation, model) }
        return owner
    }

    /// `filter` (a filter or condition argument) narrowed to the items of `owner`.
    func narrowed(_ filter: GQLValue?, to owner: String) -> GQLValue {
        let mine: GQLValue = .object([field: .object(["eq": .string(owner)])])
        guard let filter, !filter.isNull else { return mine }
        return .object(["and": .array([filter, mine])])
    }

    /// A create or update `input` with the owner set to `owner`; an input naming another owner is refused (an
    /// update that does not name one keeps it).
    func input(_ input: GQLValue?, owner: String, stamp: Bool, operation: String) throws -> GQLValue? {
        guard case .object(var fields)? = input else { return input }
        if let given = fields[field], !given.isNull, given.stringValue != owner {
            throw Self.unauthorized(operation, model)
        }
        if stamp || fields[field] != nil { fields[field] = .string(owner) }
        return .object(fields)
    }

    /// Whether `item` is `owner`'s.
    func owns(_ item: GQLValues, _ owner: String) -> Bool { item[field]?.stringValue == owner }

    /// AppSync's answer to a caller the rules do not allow.
    static func unauthorized(_ operation: String, _ model: String) -> ResolverError {
        ResolverError("Unauthorized", "Not Authorized to access \(operation) on type \(model)")
    }
}

import GQLCore

extension GQLCache {
    /// Stores `data`, a server's answer to the mutation `operation` (text or a name in ``Configuration/queries``)
    /// with `variables`, sent by someone other than the cache (GQLSync's outbox), as
    /// ``mutate(_:_:_:optimistic:store:)`` stores its own answers, and removes `layer` (the optimistic answer it
    /// replaces) in the same change: watchers hear once, of exactly the records that changed and those the layer
    /// covered.
    ///
    /// The text such a sender sends is the app's, without the `__typename` the cache adds, so an object that has
    /// none takes the one of the object at the same place in `shape` (the optimistic answer: the app's word on
    /// what the server returns there; a list's elements only the `__typename` all the layer's elements share),
    /// and an object not in a list then still without its key takes that object's key fields (it is the object
    /// the layer showed; a list's elements may come reordered, so they take none). Keyed objects become records
    /// referenced from where they appear; an object whose key cannot be told is stored under the mutation's path
    /// (`MUTATION_ROOT.rename({…})`). The mutation's root record keeps only root fields without a record of their
    /// own: an answer stored under the path adds a root field and a path record per distinct input, as
    /// ``mutate(_:_:_:optimistic:store:)`` does; a keyed one adds nothing.
    ///
    /// With `evicting` (a deletion's answer), the root field's object is a tombstone: its record is evicted and
    /// nothing is stored.
    ///
    /// - Throws: ``GQLError`` `.invalidResponse` when the answer does not fit the selection, `.invalidArgument` for
    ///   an operation that does not parse, `.recordTooDeep`; the layer is removed all the same.
    package func storeDelivered(
        _ data: GQLValue, of operation: String, _ variables: GQLValues, shape: GQLValue?, evicting: Bool,
        replacing layer: Layer?
    ) throws {
        var changed: Set<RecordKey> = []
        var written: Set<RecordKey> = []
        defer {
            if let layer { changed.formUnion(store.removeLayer(layer.id)) }
            watchers.notify(changed, fromServer: written)
        }
        let operation = try self.operation(operation)
        let answer = filled(data, from: shape)
        if evicting {
            guard case .object(let root) = answer, root.count == 1, case .object(let object)? = root.first?.value,
                let text = keys.key(of: object, typename: object["__typename"]?.stringValue, fields: [])
            else { return }
            let key = RecordKey(text)
            changed = try store.remove([key])
            changed.insert(key)
            return
        }
        var records = try normalize(answer, operation, operation.variables(variables))
        let rootKey = operation.rootKey
        if let index = records.firstIndex(where: { $0.key == rootKey }) {
            var root = records[index].fields
            for (name, value) in root where Self.refersToRecordsOnly(value, rootKey) { root[name] = nil }
            if root.isEmpty { records.remove(at: index) } else { records[index].fields = root }
        }
        changed = try mergeQuietly(records, expiresAt: { _ in nil })
        written = changed.union(records.lazy.map(\.key))
    }

    /// Whether a stored root field holds references to records of their own only (not to objects stored under
    /// the root's path): a reference, or a list of them.
    private static func refersToRecordsOnly(_ stored: GQLValue, _ rootKey: RecordKey) -> Bool {
        if let key = StoredValue.referencedKey(stored) { return !key.utf8.starts(with: (rootKey.text + ".").utf8) }
        guard case .array(let elements) = stored, !elements.isEmpty else { return false }
        return elements.allSatisfy { $0 == .null || refersToRecordsOnly($0, rootKey) }
    }

    /// `answer` with each object lacking a `__typename` given the one of the object at the same place in `shape`,
    /// and, when it then has no key, that object's key fields.
    func filled(_ answer: GQLValue, from shape: GQLValue?) -> GQLValue {
        switch (answer, shape) {
        case (.array(let elements), .array(let twins)?):
            // A list's elements may come in another order or number than the layer's: an element takes nothing
            // by position but the `__typename` every element of the layer's list has (no key fields, nothing
            // nested), so one without its key is stored under the mutation's path, not in another's record.
            let typenames = Set(twins.map { $0["__typename"] })
            guard typenames.count == 1, let typename = typenames.first ?? nil else { return answer }
            let twin = GQLValue.object(["__typename": typename])
            return .array(elements.map { filled($0, from: twin) })
        case (.object(let members), .object(let twin)?):
            var object = GQLValues(minimumCapacity: members.count + 1)
            if members["__typename"] == nil, let typename = twin["__typename"] { object["__typename"] = typename }
            for (name, value) in members { object[name] = filled(value, from: twin[name]) }
            guard let typename = object["__typename"]?.stringValue, twin["__typename"]?.stringValue == typename,
                keys.key(of: object, typename: typename, fields: []) == nil
            else { return .object(object) }
            for name in keys.keyFields[typename] ?? keys.defaultKeyFields where object[name] == nil {
                guard let value = twin[name] else { continue }
                object[name] = value
                if keys.key(of: object, typename: typename, fields: []) != nil { break }
            }
            return .object(object)
        default:
            return answer
        }
    }
}

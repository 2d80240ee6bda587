import GQLCore

extension GQLCache {
    /// Stores server objects as records of their own, outside any operation: each object's members become the
    /// record's fields under their names (no arguments), as GQLSync's pulls and live events hand them over.
    /// Watchers of any answer holding those records hear of it.
    ///
    /// An object's type is its `__typename`, else `typename`; its key comes from ``Configuration/keyFields``
    /// and ``Configuration/defaultKeyFields``, else from `keyField` when given. An object whose key cannot be
    /// told is skipped (it has no place of its own). An object with `_deleted: true` (a tombstone) evicts its
    /// record. Object-valued members are stored as values (a selection that asks for an object there misses and
    /// goes to the network), lists of scalars as they are.
    ///
    /// ```swift
    /// try cache.write(objects: [["__typename": "User", "id": "1", "name": "Ada"]], typename: "User")
    /// ```
    /// - Returns: how many records were written or evicted.
    @discardableResult
    public func write(objects: [GQLValue], typename: String, keyField: String? = nil) throws -> Int {
        var records: [RecordKey: GQLValues] = [:]
        var tombstones: [RecordKey] = []
        for case .object(let object) in objects {
            let type = object["__typename"]?.stringValue ?? typename
            guard let key = objectKey(object, type, keyField) else { continue }
            if object["_deleted"] == true {
                tombstones.append(key)
                continue
            }
            var fields = records[key] ?? [:]
            for (name, value) in object { fields[name] = StoredValue.leaf(value) }
            fields["__typename"] = .string(type)
            records[key] = fields
        }
        var changed = try store.merge(records, receivedAt: expiry.isOn ? now : nil)
        if !tombstones.isEmpty { changed.formUnion(try store.remove(tombstones)) }
        watchers.notify(changed.union(tombstones))
        return records.count + tombstones.count
    }

    /// The record key of a server object of type `typename`: by the key policy, else by `keyField`.
    private func objectKey(_ object: GQLValues, _ typename: String, _ keyField: String?) -> RecordKey? {
        if let key = keys.key(of: object, typename: typename, fields: []) { return RecordKey(key) }
        guard let keyField, let value = object[keyField] else { return nil }
        switch value {
        case .string, .int, .double, .bool: return RecordKey(CacheKey.object(typename, [value]))
        default: return nil
        }
    }
}

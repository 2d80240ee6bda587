import GQLCore

/// Optimistic layers: records that are read over the stored ones until the layer is removed, and never written
/// into the table, so removing a layer is the whole of a rollback.
extension RecordStore {
    /// One layer: the records of an optimistic answer, normalized like any answer.
    struct Layer: Sendable {
        var id: UInt64
        var records: [RecordKey: GQLValues]
    }

    /// Adds a layer over every earlier one; returns its id and the keys it covers (whose readers must be woken).
    ///
    /// With `receivedAt` (expiry on), the layer's fields carry that receive time, so an optimistic field reads
    /// as fresh.
    func addLayer(_ records: [RecordKey: GQLValues], receivedAt: Double?) -> (id: UInt64, keys: Set<RecordKey>) {
        var records = records
        if let receivedAt {
            for (key, fields) in records {
                var received = GQLValues()
                for field in fields.keys { received[field] = .double(receivedAt) }
                records[key]?[FieldExpiry.receivedMember] = .object(received)
            }
        }
        let id = memory.withLock { memory -> UInt64 in
            // A change of the layer's records (a watcher's answer read over it is not the server's as stored),
            // noted in the lock that adds it.
            memory.changes.note(Set(records.keys))
            memory.nextLayer &+= 1
            memory.layers.append(Layer(id: memory.nextLayer, records: records))
            return memory.nextLayer
        }
        return (id, Set(records.keys))
    }

    /// Removes the layer `id` wherever it sits in the stack; returns the keys it covered (none when it was not
    /// there: removed before, or dropped by ``removeAll()``).
    func removeLayer(_ id: UInt64) -> Set<RecordKey> {
        memory.withLock { memory in
            guard let index = memory.layers.firstIndex(where: { $0.id == id }) else { return [] }
            let keys = Set(memory.layers.remove(at: index).records.keys)
            memory.changes.note(keys)
            return keys
        }
    }

    /// How many layers are in place.
    var layerCount: Int { memory.withLock { $0.layers.count } }

    /// Lays each layer's fields of `keys`, oldest first, over the records in `found` (a record only a layer has
    /// is read as that layer's). Receive times merge field by field rather than replacing the stored ones; a
    /// field the layer sets loses the stored record's deadline (an optimistic value over a `no-cache` or expired
    /// field reads fresh, not as the server's answer it covers).
    static func overlay(_ layers: [Layer], on found: inout [RecordKey: GQLValues], keys: [RecordKey]) {
        for layer in layers {
            for key in keys {
                guard let fields = layer.records[key] else { continue }
                guard var record = found[key] else {
                    found[key] = fields
                    continue
                }
                // The stored record's deadlines (`Cache-Control: max-age`, `no-cache`) are the server's answer's,
                // not the layer's: a field the layer sets reads by the layer's own time.
                var deadlines = record[FieldExpiry.expiresMember]?.objectValue
                for (name, value) in fields {
                    if name == FieldExpiry.receivedMember, case .object(let times) = value,
                        case .object(var kept)? = record[name]
                    {
                        kept.merge(times) { _, layer in layer }
                        record[name] = .object(kept)
                    } else {
                        record[name] = value
                        deadlines?[name] = nil
                    }
                }
                if let deadlines { record[FieldExpiry.expiresMember] = deadlines.isEmpty ? nil : .object(deadlines) }
                found[key] = record
            }
        }
    }
}

import Foundation
import GQLCore
import GQLStore
import Synchronization

/// Feeds subscriptions from GQLStore observers: one observer per model table while it has subscribers,
/// whatever their number; each committed change is read once and fanned out in Swift to the subscribers whose
/// event kind and filter match.
///
/// The server's own mutations publish their answers through ``MutationEvents`` (in commit order, what each
/// mutation answered, as AppSync does); the observers skip those writes. Any other writer in the process is seen
/// through the observers, including the dictionary API (`db.insert("Objects", …)`), with the row as read when
/// the event is delivered. An update that sets `_deleted` is an `onDelete` event; a hard `DELETE` is one too,
/// with an item that has only the key and `_deleted: true`, since the row is gone when the event is read.
final class SubscriptionHub: Sendable {
    /// What a subscription listens for.
    enum Event: Sendable, Hashable {
        case create, update, delete
    }

    private struct Subscriber: Sendable {
        var event: Event
        var filter: ModelFilter?
        var continuation: AsyncThrowingStream<any Sendable, any Error>.Continuation
    }

    private let database: GQLDatabase
    private let stores: [String: ModelStore]
    /// Subscribers by table, then by id. Taken briefly by the observer callbacks.
    private let subscribers = GQLLocked<[String: [Int: Subscriber]]>([:])
    /// Observer ids by table. Held while observers are created or removed, never by callbacks, so creating an
    /// observer (which takes the database's writer) cannot deadlock with a delivery.
    private let observers = GQLLocked<[String: String]>([:])
    private let nextID = Atomic<Int>(1)
    private let events: MutationEvents

    init(database: GQLDatabase, stores: [String: ModelStore], events: MutationEvents = MutationEvents()) {
        self.database = database
        self.stores = stores
        self.events = events
        events.attach { [weak self] table, event, item in self?.publish(table: table, event: event, item: item) }
    }

    /// The number of subscribers, over every table.
    var subscriberCount: Int { subscribers.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// A stream of the items of `table` that `event` and `filter` select, for a subscription resolver.
    /// Ending the stream (the consumer stops) removes the subscriber, and the table's observer with its last one.
    ///
    /// - Throws: ``GQLError`` when the observer cannot be created.
    func subscribe(table: String, event: Event, filter: ModelFilter?) throws
        -> AsyncThrowingStream<any Sendable, any Error>
    {
        // Unbounded: no event is dropped; a consumer that stops reading holds its backlog until it ends.
        let (stream, continuation) = AsyncThrowingStream<any Sendable, any Error>.makeStream()
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.onTermination = { [weak self] _ in self?.remove(table: table, id: id) }
        try observers.withLock { observers in
            subscribers.withLock {
                $0[table, default: [:]][id] = Subscriber(event: event, filter: filter, continuation: continuation)
            }
            guard observers[table] == nil else { return }
            do {
                observers[table] = try database.createObserver(table, .all) { [weak self] (change: GQLChange) in
                    guard change.origin != MutationEvents.origin else { return }  // published by the mutation
                    self?.deliver(table: table, type: change.type, key: change.key)
                }
                events.listen(table, true)
            } catch {
                subscribers.withLock { _ = $0[table]?.removeValue(forKey: id) }
                throw error
            }
        }
        return stream
    }

    /// Ends every subscription (their streams finish).
    func finishAll() {
        let all = subscribers.withLock { $0.values.flatMap(\.values) }
        for subscriber in all { subscriber.continuation.finish() }
    }

    private func remove(table: String, id: Int) {
        observers.withLock { observers in
            let empty = subscribers.withLock { subscribers -> Bool in
                subscribers[table]?.removeValue(forKey: id)
                guard subscribers[table]?.isEmpty ?? true else { return false }
                subscribers[table] = nil
                return true
            }
            if empty, let observer = observers.removeValue(forKey: table) {
                events.listen(table, false)
                database.removeObserver(observer)
            }
        }
    }

    /// What a hard-deleted row is reported as: its key, `_deleted`, and the server-kept fields that cannot be
    /// null filled in (`_version` 0 means unknown); other fields are null.
    static func tombstone(_ model: ModelDefinition, key: GQLValue, now: Date) -> GQLValues {
        let stamp = GQLValue.string(GQLDate.string(from: now))
        var item: GQLValues = [model.key: key, "_deleted": true, "_version": 0]
        item["_lastChangedAt"] = .int(ModelCodec.milliseconds(now))
        for name in ["createdAt", "updatedAt"] where model.field(name)?.nonNull == true { item[name] = stamp }
        return item
    }

    /// Called on the observers' queue after each committed change of a row of `table`.
    private func deliver(table: String, type: GQLObserverType, key: GQLValue) {
        let targets = subscribers.withLock { $0[table].map { Array($0.values) } ?? [] }
        guard !targets.isEmpty, let store = stores[table] else { return }
        let item: GQLValues
        let event: Event
        if type.contains(.delete) {
            event = .delete
            item = (try? store.get(key)) ?? Self.tombstone(store.model, key: key, now: store.clock())
        } else {
            guard let current = try? store.get(key) else { return }
            item = current
            if current["_deleted"]?.boolValue == true {
                event = .delete
            } else {
                event = type.contains(.insert) ? .create : .update
            }
        }
        publish(targets, event: event, item: item)
    }

    /// Hands a mutation's answer to the subscribers of `table` that `event` and their filter select.
    private func publish(table: String, event: Event, item: GQLValues) {
        let targets = subscribers.withLock { $0[table].map { Array($0.values) } ?? [] }
        publish(targets, event: event, item: item)
    }

    private func publish(_ targets: [Subscriber], event: Event, item: GQLValues) {
        var native: [String: any Sendable]?
        for subscriber in targets where subscriber.event == event {
            if let filter = subscriber.filter, !filter.matches(item) { continue }
            if native == nil { native = MapConversion.nativeObject(item) }
            if let native { subscriber.continuation.yield(native) }
        }
    }
}

import GQLCore
import Synchronization

/// Shares one GraphQL subscription among every subscriber of the same request.
///
/// Subscribers that send the same document, variables and operation name (and want the same error style) get
/// the same responses, so each event is executed once per group instead of once per subscriber and fanned out
/// as a finished response. A group lives while it has members: the last one to leave ends its source
/// subscription (and, through it, the table's observer when nothing else listens).
final class SubscriptionGroups: Sendable {
    struct Key: Hashable, Sendable {
        var query: String
        var variables: String
        var operationName: String?
        var appSync: Bool
        /// The caller: an owner-scoped subscription sees that caller's items only, so callers never share one.
        var owner: String? = nil
    }

    typealias Continuation = DevEngine.Events.Continuation

    private final class Group: Sendable {
        struct State {
            var members: [Int: Continuation] = [:]
            var closed = false
            var pump: Task<Void, Never>?
        }
        let state = GQLLocked(State())
    }

    private let groups = GQLLocked<[Key: Group]>([:])
    private let nextID = Atomic<Int>(1)

    /// The number of subscribers, over every group.
    var memberCount: Int {
        groups.withLock { Array($0.values) }.reduce(0) { total, group in
            total + group.state.withLock { $0.members.count }
        }
    }

    /// A stream of the responses to `key`'s subscription: joins the running group, or opens its source with
    /// `open` (which registers the subscription before it returns) and starts a group around it.
    func join(_ key: Key, open: () async -> DevEngine.Subscription) async -> DevEngine.Subscription {
        while true {
            if let group = groups.withLock({ $0[key] }), let member = add(to: group, key) {
                return .stream(member)
            }
            let source: DevEngine.Events
            switch await open() {
            case .failed(let response): return .failed(response)
            case .stream(let stream): source = stream
            }
            let group = Group()
            let installed = groups.withLock { groups -> Bool in
                guard groups[key] == nil else { return false }
                groups[key] = group
                return true
            }
            // Another subscriber opened the same group meanwhile: ours is dropped unused, which ends it.
            guard installed, let member = add(to: group, key) else { continue }
            let pump = Task { [weak self] in
                do {
                    for try await response in source {
                        for continuation in group.state.withLock({ Array($0.members.values) }) {
                            continuation.yield(response)
                        }
                    }
                    self?.close(group, key, finishing: nil)
                } catch {
                    self?.close(group, key, finishing: error)
                }
            }
            group.state.withLock { $0.pump = pump }
            return .stream(member)
        }
    }

    /// Adds a member to `group`; `nil` when the group has closed meanwhile.
    private func add(to group: Group, _ key: Key) -> DevEngine.Events? {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (buffer, continuation) = DevEngine.Events.makeStream()
        let added = group.state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.members[id] = continuation
            return true
        }
        guard added else { return nil }
        continuation.onTermination = { [weak self] _ in self?.leave(group, key, member: id) }
        return OwnedEventStream.stream(buffer) { [weak self] in self?.leave(group, key, member: id) }
    }

    private func leave(_ group: Group, _ key: Key, member: Int) {
        let pump = group.state.withLock { state -> Task<Void, Never>? in
            guard state.members.removeValue(forKey: member) != nil, state.members.isEmpty, !state.closed else {
                return nil
            }
            state.closed = true
            return state.pump
        }
        guard let pump else { return }
        groups.withLock { groups in
            if groups[key] === group { groups[key] = nil }
        }
        pump.cancel()
    }

    /// The source ended (the server finishing subscriptions, or an error): every member ends the same way.
    private func close(_ group: Group, _ key: Key, finishing error: (any Error)?) {
        let members = group.state.withLock { state -> [Continuation] in
            state.closed = true
            defer { state.members.removeAll() }
            return Array(state.members.values)
        }
        groups.withLock { groups in
            if groups[key] === group { groups[key] = nil }
        }
        for continuation in members { continuation.finish(throwing: error) }
    }
}

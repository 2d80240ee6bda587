import GQLCore
import GQLStore

/// The answers of the server's own mutations, handed to subscriptions in commit order, as AppSync does: a
/// subscriber hears what the mutation answered, not the row as it is by the time the event is read.
///
/// A mutation takes a number inside its transaction, after its write statement (under the database's writer, so
/// numbers follow commit order, and a group's mutations follow their order in the group), and settles it after
/// the transaction: with its answer once committed, withdrawn once rolled back. Answers go out strictly in number
/// order, whichever thread settles first. Only tables with subscribers take numbers; the server's writes carry
/// ``origin``, which ``SubscriptionHub``'s observers skip (they still report every other writer's changes).
final class MutationEvents: Sendable {
    /// The origin tag of every write the server's mutations make.
    static let origin = "GQLDevServer.mutation"

    typealias Deliver = @Sendable (_ table: String, _ event: SubscriptionHub.Event, _ item: GQLValues) -> Void

    private struct Answer {
        var table: String
        var event: SubscriptionHub.Event
        var item: GQLValues
    }

    private enum Outcome {
        case published(Answer)
        case withdrawn
    }

    private struct State {
        var taken: UInt64 = 0
        var delivered: UInt64 = 0
        var settled: [UInt64: Outcome] = [:]
        var listening: Set<String> = []
        var deliver: Deliver?
    }

    private let state = GQLLocked(State())

    /// Where answers go (the engine's ``SubscriptionHub``).
    func attach(_ deliver: @escaping Deliver) {
        state.withLock { $0.deliver = deliver }
    }

    /// Whether mutations of `table` publish their answers (while it has subscribers).
    func listen(_ table: String, _ on: Bool) {
        state.withLock { state in
            if on { state.listening.insert(table) } else { state.listening.remove(table) }
        }
    }

    /// Publishes `item` as `table`'s `event` once `tx` commits (nothing when it rolls back); called inside the
    /// mutation's transaction, after its write statement.
    func record(_ tx: GQLTransaction, table: String, event: SubscriptionHub.Event, item: GQLValues) throws {
        let number = state.withLock { state -> UInt64? in
            guard state.listening.contains(table) else { return nil }
            defer { state.taken += 1 }
            return state.taken
        }
        guard let number else { return }
        // The number must settle whatever happens, or every later answer would wait for it: the rollback hook
        // first (withdrawn here when even that cannot be added), then the commit hook (a failure to add it fails
        // the transaction, whose rollback withdraws the number).
        do {
            try tx.onRollback { self.settle(number, .withdrawn) }
        } catch {
            settle(number, .withdrawn)
            throw error
        }
        try tx.afterCommit { self.settle(number, .published(Answer(table: table, event: event, item: item))) }
    }

    private func settle(_ number: UInt64, _ outcome: Outcome) {
        // Delivered under the lock, so that two threads settling at once cannot swap their answers.
        state.withLock { state in
            state.settled[number] = outcome
            while let next = state.settled.removeValue(forKey: state.delivered) {
                state.delivered += 1
                if case .published(let answer) = next { state.deliver?(answer.table, answer.event, answer.item) }
            }
        }
    }
}

import GQLNet
import Synchronization

/// Lets a sender through a given number of requests, then holds it before the next one until it is given more:
/// one engine delivers its 10,000 queued items in slices, taking turns with the mutation loop, without being opened
/// again for every slice.
///
/// The `GQLServer`'s authorization provider (``authorization``, which answers "no header") asks the gate of the
/// task it runs in (``current``) before every request: the engine's delivery task has one, the loop's task none.
final class DeliveryGate: Sendable {
    /// The gate of the sending task: set around the engine's creation, whose delivery task inherits it.
    @TaskLocal static var current: DeliveryGate?

    /// The provider: waits at the current task's gate, if it has one, and sends no `Authorization` header.
    static let authorization: GQLServer.AuthorizationProvider = { _ in
        await current?.pass()
        return nil
    }

    private struct State {
        var budget: Int
        /// The sender, held before a request.
        var held: CheckedContinuation<Void, Never>?
        /// The bench, waiting for the sender to ask once the budget is spent.
        var spent: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    /// A gate that lets `budget` requests through.
    init(budget: Int) { state = Mutex(State(budget: budget)) }

    /// Called before each request: passes at once while the budget lasts, else waits for ``open(_:)``.
    func pass() async {
        let passed = state.withLock { state -> Bool in
            guard state.budget > 0 else { return false }
            state.budget -= 1
            return true
        }
        if passed { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (now, bench) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                if state.budget > 0 {  // opened in between
                    state.budget -= 1
                    return (true, nil)
                }
                state.held = continuation
                defer { state.spent = nil }
                return (false, state.spent)
            }
            if now { continuation.resume() }
            bench?.resume()
        }
    }

    /// Lets `count` more requests through.
    func open(_ count: Int) {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.budget += count
            guard let held = state.held, state.budget > 0 else { return nil }
            state.budget -= 1
            state.held = nil
            return held
        }
        held?.resume()
    }

    /// Lets `count` more requests through and returns when the sender asks for one more.
    func run(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { $0.spent = continuation }
            open(count)
        }
    }
}

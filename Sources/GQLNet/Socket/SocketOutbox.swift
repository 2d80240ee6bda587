import GQLCore

/// The messages waiting for one socket's writer, in the order the state machine decided them, with at most one
/// pong among them: a pong queued while another waits replaces it (the latest ping is the one answered), so a
/// server that floods pings and never reads cannot make the queue grow.
///
/// ```swift
/// let outbox = SocketOutbox()
/// outbox.send("{\"type\":\"subscribe\",…}")
/// outbox.pong("{\"type\":\"pong\"}")
/// while let item = await outbox.next() { … }   // nil once closed (after the close) or cancelled
/// ```
final class SocketOutbox: Sendable {
    enum Item: Sendable, Equatable {
        case text(String)
        case close(code: UInt16, reason: String)
    }

    private struct State {
        var items: [Item] = []
        var head = 0
        /// Where the queued pong is in `items`, if one is.
        var pong: Int?
        var isFinished = false
        var waiter: CheckedContinuation<Item?, Never>?
        /// Pongs replaced by a later one before they were written.
        var pongsReplaced = 0

        var count: Int { items.count - head }

        mutating func pop() -> Item? {
            guard head < items.count else { return nil }
            let item = items[head]
            if pong == head { pong = nil }
            head += 1
            if head > 64, head * 2 > items.count {
                items.removeFirst(head)
                pong = pong.map { $0 - head }
                head = 0
            }
            return item
        }
    }

    private let state = GQLLocked(State())

    /// How many messages wait.
    var count: Int { state.withLock { $0.count } }

    /// How many pongs were replaced by a later one before the writer took them.
    var pongsReplaced: Int { state.withLock { $0.pongsReplaced } }

    func send(_ text: String) {
        add(.text(text), isPong: false)
    }

    /// Queues a pong, or replaces the one still waiting.
    func pong(_ text: String) {
        add(.text(text), isPong: true)
    }

    /// Queues the close frame; nothing is queued after it.
    func close(code: UInt16, reason: String) {
        add(.close(code: code, reason: reason), isPong: false)
        finish()
    }

    /// Ends the queue: the writer gets what waits, then `nil`.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            state.isFinished = true
            defer { state.waiter = nil }
            return state.count == 0 ? state.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    /// The next message, waiting for one; `nil` once the queue finished and is empty, or the task was cancelled.
    func next() async -> Item? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let ready = state.withLock { state -> (Item?, Bool) in
                    if let item = state.pop() { return (item, true) }
                    if state.isFinished || Task.isCancelled { return (nil, true) }
                    state.waiter = continuation
                    return (nil, false)
                }
                if ready.1 { continuation.resume(returning: ready.0) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Item?, Never>? in
                state.isFinished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private func add(_ item: Item, isPong: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            guard !state.isFinished else { return nil }
            if isPong, let index = state.pong {
                state.items[index] = item
                state.pongsReplaced += 1
                return nil
            }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if isPong { state.pong = state.items.count }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: item)
    }
}

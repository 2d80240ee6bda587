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
        /// The writer, while it waits for a message.
        var waiters = GQLWaiters<Item?, Never>()
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
        state.withLock { state in
            state.isFinished = true
            // A waiting writer means nothing waits in the queue.
            return state.waiters.resumeAll(with: .success(nil))
        }.run()
    }

    /// The next message, waiting for one; `nil` once the queue finished and is empty, or the task was cancelled
    /// (which finishes the queue).
    func next() async -> Item? {
        await state.wait(
            in: \.waiters,
            unlessReady: { state in
                if let item = state.pop() { return .success(item) }
                return state.isFinished ? .success(nil) : nil
            },
            whenCancelled: { state in
                state.isFinished = true
                return .success(nil)
            })
    }

    private func add(_ item: Item, isPong: Bool) {
        let resumption = state.withLock { state -> GQLWaiters<Item?, Never>.Resumption? in
            guard !state.isFinished else { return nil }
            if isPong, let index = state.pong {
                state.items[index] = item
                state.pongsReplaced += 1
                return nil
            }
            if let resumption = state.waiters.resumeFirst(with: .success(item)) { return resumption }
            if isPong { state.pong = state.items.count }
            state.items.append(item)
            return nil
        }
        resumption?.run()
    }
}

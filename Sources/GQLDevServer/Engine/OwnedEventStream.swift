import GQLCore
import Synchronization

/// A stream of responses with one consumer that ends its source however the consumer goes away.
///
/// An `AsyncThrowingStream` does not notice a consumer that breaks out of its loop and drops it, so both the
/// engine's subscriptions (whose source is GraphQLSwift's task) and the members of a shared subscription group
/// (whose source is the group) hand out an unfolding stream whose state is this object: `end` runs once, when the
/// consumer's task is cancelled (the buffer's termination, wired by the caller) or when the stream and its
/// iterators are released.
final class OwnedEventStream: @unchecked Sendable {
    // Safety: `iterator` is only touched inside `next()`, and `busy` (an atomic flag) admits one caller at a
    // time; `end` is immutable.
    private var iterator: DevEngine.Events.AsyncIterator
    private let end: @Sendable () -> Void
    private let busy = Atomic<Bool>(false)

    private init(
        _ iterator: DevEngine.Events.AsyncIterator, end: @escaping @Sendable () -> Void
    ) {
        self.iterator = iterator
        self.end = end
    }

    deinit { end() }

    /// The elements of `buffer` for one consumer; `end` runs when the returned stream and its iterators are gone.
    static func stream(
        _ buffer: DevEngine.Events, end: @escaping @Sendable () -> Void
    ) -> DevEngine.Events {
        let events = OwnedEventStream(buffer.makeAsyncIterator(), end: end)
        return AsyncThrowingStream(unfolding: { try await events.next() })
    }

    private func next() async throws -> DevEngine.Response? {
        guard busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw GQLError(.invalidArgument, "a subscription stream has one consumer at a time")
        }
        defer { busy.store(false, ordering: .releasing) }
        return try await iterator.next()
    }
}

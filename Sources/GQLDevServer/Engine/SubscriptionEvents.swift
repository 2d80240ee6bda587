import GQLCore
import GraphQL
import Synchronization

/// Turns GraphQLSwift's stream of subscription results into the engine's stream of responses, so that the
/// subscription ends however its consumer goes away.
///
/// GraphQLSwift runs each subscription in a task that only stops when its stream is cancelled; an
/// `AsyncThrowingStream` does not notice a consumer that breaks out of its loop and drops it. So the results are
/// pumped by a task this type owns, and the engine's stream is an unfolding stream whose state is this object:
/// when the consumer's task is cancelled, or when the stream and its iterators are released, the pump is
/// cancelled, which ends GraphQLSwift's task and the subscription's observer registration.
final class SubscriptionEvents: @unchecked Sendable {
    // Safety: `iterator` is only touched inside `next()`, and `busy` (an atomic flag) admits one caller at a time;
    // `pump` is immutable.
    private var iterator: AsyncThrowingStream<GQLValue, any Error>.AsyncIterator
    private let pump: Task<Void, Never>
    private let busy = Atomic<Bool>(false)

    private init(iterator: AsyncThrowingStream<GQLValue, any Error>.AsyncIterator, pump: Task<Void, Never>) {
        self.iterator = iterator
        self.pump = pump
    }

    deinit { pump.cancel() }

    /// The responses for `results`, formatted by `formatter`.
    static func stream(
        _ results: AsyncThrowingStream<GraphQLResult, any Error>, formatter: ResponseFormatter
    ) -> AsyncThrowingStream<GQLValue, any Error> {
        let (buffer, continuation) = AsyncThrowingStream<GQLValue, any Error>.makeStream()
        let pump = Task {
            do {
                for try await result in results { continuation.yield(formatter.response(result)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        // A cancelled consumer ends the buffer's iteration, which stops the pump.
        continuation.onTermination = { _ in pump.cancel() }
        let events = SubscriptionEvents(iterator: buffer.makeAsyncIterator(), pump: pump)
        return AsyncThrowingStream(unfolding: { try await events.next() })
    }

    private func next() async throws -> GQLValue? {
        guard busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw GQLError(.invalidArgument, "a subscription stream has one consumer at a time")
        }
        defer { busy.store(false, ordering: .releasing) }
        return try await iterator.next()
    }
}

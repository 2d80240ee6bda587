import GQLCore
import GraphQL

/// Turns GraphQLSwift's stream of subscription results into the engine's stream of responses, so that the
/// subscription ends however its consumer goes away.
///
/// GraphQLSwift runs each subscription in a task that only stops when its stream is cancelled. So the results are
/// pumped by a task of their own into a buffer, and the consumer gets an ``OwnedEventStream`` over it: a cancelled
/// consumer, or a stream released without being cancelled, cancels the pump, which ends GraphQLSwift's task and the
/// subscription's observer registration.
enum SubscriptionEvents {
    /// The responses for `results`, formatted by `formatter`.
    static func stream(
        _ results: AsyncThrowingStream<GraphQLResult, any Error>, formatter: ResponseFormatter
    ) -> DevEngine.Events {
        let (buffer, continuation) = DevEngine.Events.makeStream()
        let pump = Task {
            do {
                for try await result in results { continuation.yield(formatter.json(result)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        // A cancelled consumer ends the buffer's iteration, which stops the pump.
        continuation.onTermination = { _ in pump.cancel() }
        return OwnedEventStream.stream(buffer) { pump.cancel() }
    }
}

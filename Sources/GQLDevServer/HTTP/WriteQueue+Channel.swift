import GQLCore
import NIOCore

extension WriteQueue {
    /// Queues `mutation` for a group commit and hands its answer's body (`json` of its outcome, formatted on the
    /// connection's event loop, not on the queue's one worker) to `committed` on that loop.
    func submit(
        _ mutation: @escaping ModelStore.Mutation, json: @escaping @Sendable (Result<GQLValues, any Error>) -> String,
        context: ChannelHandlerContext, _ committed: @escaping (ChannelHandlerContext, String) -> Void
    ) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((committed, context), eventLoop: loop)
        submit(mutation) { result in
            loop.execute {
                let (committed, context) = bound.value
                committed(context, json(result))
            }
        }
    }
}

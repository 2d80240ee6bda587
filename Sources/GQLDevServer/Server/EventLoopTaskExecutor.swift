import NIOCore

/// Runs a connection's tasks on the connection's own event loop.
///
/// Without it every request hops twice between NIO's event loop and Swift's cooperative pool: the body part
/// arrives on the loop and wakes a pool thread, and the response written from the pool wakes the loop. With the
/// connection's handler preferring this executor, the whole exchange stays on the loop's thread.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

import Dispatch

/// The one adapter from the toolkit's async (or synchronous) operations to the completion-handler forms its
/// documented API also offers (the `+Callbacks.swift` file of GQLServer, GQLSync, GQLAuth, GQLStorage and GQLPush):
/// each public completion-handler method is one call of it.
///
/// ```swift
/// public func download(_ bucket: String, _ key: String, completion: @escaping @Sendable (Data?, (any Error)?) -> Void) {
///     CompletionBridge.start(completion) { try await self.download(bucket, key) }
/// }
/// ```
///
/// The completion runs exactly once: with the value and no error, or no value and the error. `start`
/// runs the operation in a new unstructured task (on the global executor: the completion is called on an arbitrary
/// thread) and returns the task, whose cancellation cancels the operation, which then reports its own
/// cancellation error (`GQLError.Code.cancelled`). `run(on:)` runs a synchronous operation on a serial queue,
/// so that calls complete in the order they were made.
package enum CompletionBridge {
    /// Runs `operation` in a new task and calls `completion` with its value or its error.
    @discardableResult
    package static func start<T: Sendable>(
        _ completion: @escaping @Sendable (T?, (any Error)?) -> Void,
        _ operation: @escaping @Sendable () async throws -> T
    ) -> Task<Void, Never> {
        Task {
            do {
                completion(try await operation(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Runs `operation`, which returns nothing, in a new task and calls `completion` with `nil` or its error.
    @discardableResult
    package static func start(
        _ completion: @escaping @Sendable ((any Error)?) -> Void,
        _ operation: @escaping @Sendable () async throws -> Void
    ) -> Task<Void, Never> {
        Task {
            do {
                try await operation()
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// Runs the synchronous `operation` on `queue` and calls `completion` there with its value or its error: on a
    /// serial queue, calls complete in the order they were made.
    package static func run<T: Sendable>(
        on queue: DispatchQueue, _ completion: @escaping @Sendable (T?, (any Error)?) -> Void,
        _ operation: @escaping @Sendable () throws -> T
    ) {
        queue.async {
            do {
                completion(try operation(), nil)
            } catch {
                completion(nil, error)
            }
        }
    }
}

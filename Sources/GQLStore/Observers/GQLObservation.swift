import GQLCore

/// One committed change seen by an observer.
public struct GQLChange: Sendable, Hashable {
    /// What happened to the row.
    public var type: GQLObserverType
    /// The row's primary key.
    public var key: GQLValue

    public init(type: GQLObserverType, key: GQLValue) {
        self.type = type
        self.key = key
    }
}

/// The changes an observer sees, as an `AsyncSequence`; made by ``GQLObject/observe(_:_:_:)``.
///
/// The observer is registered when the sequence is made, so no change committed after that is missed.
/// It is removed when the iteration ends, its task is cancelled, or the sequence is dropped unused.
public struct GQLObservation: AsyncSequence, Sendable {
    public typealias Element = GQLChange

    private let stream: AsyncThrowingStream<GQLChange, any Error>

    init(
        _ db: GQLDatabase,
        register: (@escaping @Sendable (GQLObserverType, GQLValue) -> Void) throws -> String
    ) {
        let (stream, continuation) = AsyncThrowingStream<GQLChange, any Error>.makeStream()
        self.stream = stream
        do {
            let id = try register { type, key in continuation.yield(GQLChange(type: type, key: key)) }
            continuation.onTermination = { _ in db.removeObserver(id) }
        } catch {
            continuation.finish(throwing: error)
        }
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<GQLChange, any Error>.AsyncIterator {
        stream.makeAsyncIterator()
    }
}

import GQLCore

/// One committed change seen by an observer.
public struct GQLChange: Sendable, Hashable {
    /// What happened to the row.
    public var type: GQLObserverType
    /// The row's primary key.
    public var key: GQLValue
    /// The tag of the write that made the change (``GQLDatabase/write(origin:_:)``), or `nil` for an untagged
    /// write.
    ///
    /// ```swift
    /// for try await change in User.observe(db) where change.origin != "sync" {
    ///     upload(change.key)        // a local edit, not a row the sync engine pulled
    /// }
    /// ```
    public var origin: String?

    /// Makes a change; `origin` defaults to an untagged write.
    public init(type: GQLObserverType, key: GQLValue, origin: String? = nil) {
        self.type = type
        self.key = key
        self.origin = origin
    }
}

/// The changes an observer sees, as an `AsyncSequence`; made by ``GQLObject/observe(_:_:_:)``.
///
/// The observer is registered when the sequence is made, so no change committed after that is missed.
/// It is removed when an iteration ends (a `break`, an error, a cancelled task) or when the sequence and its
/// iterators are gone.
public struct GQLObservation: AsyncSequence, Sendable {
    public typealias Element = GQLChange

    /// Owns the observer: removing it once, when iteration ends or the last reference goes away.
    final class Registration: Sendable {
        let db: GQLDatabase
        let id: String?
        let stream: AsyncThrowingStream<GQLChange, any Error>

        init(db: GQLDatabase, id: String?, stream: AsyncThrowingStream<GQLChange, any Error>) {
            self.db = db
            self.id = id
            self.stream = stream
        }

        func end() {
            if let id { db.removeObserver(id) }
        }

        deinit { end() }
    }

    private let registration: Registration

    init(
        _ db: GQLDatabase,
        register: (@escaping @Sendable (GQLChange) -> Void) throws -> String
    ) {
        let (stream, continuation) = AsyncThrowingStream<GQLChange, any Error>.makeStream()
        var id: String?
        do {
            id = try register { change in continuation.yield(change) }
        } catch {
            continuation.finish(throwing: error)
        }
        registration = Registration(db: db, id: id, stream: stream)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(registration: registration, base: registration.stream.makeAsyncIterator())
    }

    /// Iterates the changes; ending the iteration (a `break` drops the iterator) removes the observer.
    public final class Iterator: AsyncIteratorProtocol {
        private let registration: Registration
        private var base: AsyncThrowingStream<GQLChange, any Error>.AsyncIterator

        init(registration: Registration, base: AsyncThrowingStream<GQLChange, any Error>.AsyncIterator) {
            self.registration = registration
            self.base = base
        }

        public func next() async throws -> GQLChange? {
            do {
                guard let change = try await base.next() else {
                    registration.end()
                    return nil
                }
                return change
            } catch {
                registration.end()
                throw error
            }
        }

        deinit { registration.end() }
    }
}

import Testing

@testable import GQLCache

/// The registry that tells a watcher what changed of the records it read since its last read.
@Suite struct WatcherRegistryTests {
    /// A change of the app's (a manual write of User:1.email) followed by a server's answer writing the same
    /// record (another query's, with User:1's name) is still a change of the app's: the watcher must ask the
    /// server rather than emit the manual value as revalidated.
    @Test func aServersAnswerDoesNotHideAnEarlierChangeOfTheApps() {
        let registry = WatcherRegistry()
        let (_, waker) = AsyncStream.makeStream(of: Void.self)
        let id = registry.add(waker)
        registry.setDependencies(["K"], of: id, readSince: 0)
        registry.notify(["K"])
        registry.notify(["J"], fromServer: ["K", "J"])
        #expect(registry.changes(of: ["K"], since: 0) == .other)
        // Read since both: nothing new; a server's answer alone after that is the server's.
        #expect(registry.changes(of: ["K"], since: 2) == .none)
        registry.notify(["K"], fromServer: ["K"])
        #expect(registry.changes(of: ["K"], since: 2) == .byServer)
    }

    /// A woken watcher is judged by the changes up to the count it takes before it reads: the app's write that
    /// comes while it reads a server's answer is the next wake's change, not this one's (judged after the read,
    /// it made a watch revalidate a `no-cache` answer it had just been given).
    @Test func aWokenWatcherIsJudgedByTheChangesBeforeItsRead() {
        let registry = WatcherRegistry()
        let (_, waker) = AsyncStream.makeStream(of: Void.self)
        let id = registry.add(waker)
        registry.setDependencies(["K"], of: id, readSince: 0)
        registry.notify(["K"], fromServer: ["K"])
        let woken = registry.wake(id, since: 0)
        #expect(woken.count == 1 && woken.changes == .byServer)
        registry.notify(["K"])  // The app's write, while the watcher reads.
        #expect(registry.changes(of: ["K"], since: 0) == .other)  // What a judgement after the read saw.
        let next = registry.wake(id, since: woken.count)
        #expect(next.count == 2 && next.changes == .other)
        // Keys the watcher does not depend on are not its changes.
        registry.notify(["J"])
        #expect(registry.wake(id, since: next.count).changes == .none)
    }
}

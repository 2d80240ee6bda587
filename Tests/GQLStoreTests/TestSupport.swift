import Foundation
import GQLStore
import Testing

/// A fresh database file in its own temporary directory, removed when the test ends.
final class TempDatabase: Sendable {
    let directory: URL
    let db: GQLDatabase

    init(configuration: GQLDatabase.Configuration = .init()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gqlstore-tests-\(UUID().uuidString)", isDirectory: true)
        db = try GQLDatabase(path: directory.appendingPathComponent("test.sqlite").path, configuration: configuration)
    }

    var path: String { db.path }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

struct User: GQLObject, Equatable {
    var userId = 0
    var name = ""
    var age = 0
    var approved = false
    var nickname: String? = nil
    static func primaryKey() -> String { "userId" }
}

func makeUser(_ id: Int, _ name: String = "User", age: Int = 30, approved: Bool = false) -> User {
    var user = User()
    user.userId = id
    user.name = name
    user.age = age
    user.approved = approved
    return user
}

// MARK: Shared by the observer, concurrency and migration tests

/// A value behind a lock that escaping `@Sendable` closures can share.
///
/// An `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: ThreadSanitizer cannot see the
/// ordering `Mutex` provides on Linux and reports every access from two threads as a race.
final class TestLocked<Value: Sendable>: @unchecked Sendable {
    // Safety: `stored` is only read or written between `lock.lock()` and `lock.unlock()`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    var value: Value { withLock { $0 } }
}

/// Collects the changes an observer callback reports, from whatever thread it runs on.
final class ObservedChanges: Sendable {
    private let changes = TestLocked<[GQLChange]>([])

    var all: [GQLChange] { changes.value }
    var keys: [GQLValue] { all.map(\.key) }

    /// A callback for `createObserver` that records into this log.
    var callback: @Sendable (GQLObserverType, GQLValue) -> Void {
        { type, key in self.changes.withLock { $0.append(GQLChange(type: type, key: key)) } }
    }
}

extension GQLChange {
    static func insert(_ key: Int) -> GQLChange { GQLChange(type: .insert, key: .int(Int64(key))) }
    static func update(_ key: Int) -> GQLChange { GQLChange(type: .update, key: .int(Int64(key))) }
    static func delete(_ key: Int) -> GQLChange { GQLChange(type: .delete, key: .int(Int64(key))) }
}

/// Problems seen on other threads, reported once the work is done.
final class Failures: Sendable {
    private let messages = TestLocked<[String]>([])
    func record(_ message: String) { messages.withLock { $0.append(message) } }
    var all: [String] { messages.value }
}

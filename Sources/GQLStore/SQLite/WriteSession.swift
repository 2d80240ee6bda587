import CSQLite
import Foundation
import GQLCore

/// What the writer connection's statements, triggers and SQL functions share while a write runs: the
/// observer events reported so far, the write's origin tag, and the SET values of the UPDATE being run.
///
/// Owned by the ``Writer`` and by its ``Connection`` (whose statements report to it), so it lives exactly as
/// long as the connection and SQLite's callbacks can hold it by an unretained pointer. Its state changes only
/// through its own methods, all called on the thread that holds the writer's lock: by the writer when a write
/// begins and ends, by statements as they start, finish or fail, and by SQLite's callbacks inside `step`.
final class WriteSession {
    private let observers: ObserverCenter
    /// Events reported by triggers during the current write, in order.
    private var events: [ObserverEvent] = []
    /// Where the running statement's events start, so a failed statement can take back its own.
    private var mark = 0
    /// The origin tag of the write in progress, handed on with its events.
    private var origin: String?
    /// The SET values of the UPDATE being run, read by `gql_update_value(i)`. Kept out of the statement's
    /// parameters so the condition's own `?`, `?NNN` and named parameters keep their numbers.
    private var updateValues: [GQLValue] = []
    /// Set while a write transaction's body runs: statements then refuse to run outside a transaction.
    private(set) var requiresTransaction = false

    static let observerFunction = "gql_observer_event"
    static let updateValueFunction = "gql_update_value"

    init(observers: ObserverCenter) {
        self.observers = observers
    }

    /// Registers the session's SQL functions and rollback hook on the writer connection's handle.
    func install(on handle: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                Unmanaged<WriteSession>.fromOpaque(context).takeUnretainedValue().rolledBack()
            }, context)
        sqlite3_create_function_v2(
            handle, Self.observerFunction, 3, SQLITE_UTF8, context,
            { context, count, arguments in
                guard let context, count == 3, let arguments,
                    let idArg = arguments[0], let typeArg = arguments[1], let keyArg = arguments[2]
                else { return }
                let session = Unmanaged<WriteSession>.fromOpaque(UnsafeRawPointer(sqlite3_user_data(context)))
                    .takeUnretainedValue()
                session.events.append(
                    ObserverEvent(
                        observer: Int(sqlite3_value_int64(idArg)),
                        type: GQLObserverType(rawValue: Int(sqlite3_value_int64(typeArg))),
                        key: sqliteValue(keyArg)))
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            handle, Self.updateValueFunction, 1, SQLITE_UTF8, context,
            { context, count, arguments in
                guard let context, count == 1, let arguments, let indexArg = arguments[0] else { return }
                let session = Unmanaged<WriteSession>.fromOpaque(UnsafeRawPointer(sqlite3_user_data(context)))
                    .takeUnretainedValue()
                session.resultUpdateValue(Int(sqlite3_value_int64(indexArg)), context)
            }, nil, nil, nil)
    }

    // MARK: Called by the writer

    /// A write begins: its changes carry `origin`.
    func begin(origin: String?) {
        self.origin = origin
    }

    /// The write ended (committed, rolled back or failed): nothing of it is left behind.
    func end() {
        origin = nil
        events.removeAll(keepingCapacity: true)
        mark = 0
        requiresTransaction = false
    }

    /// Statements run from here on must find the write's transaction still open.
    func setRequiresTransaction(_ required: Bool) { requiresTransaction = required }

    /// Runs `body` with `values` readable by `gql_update_value(i)`.
    func withUpdateValues<T>(_ values: [GQLValue], _ body: () throws -> T) rethrows -> T {
        updateValues = values
        defer { updateValues = [] }
        return try body()
    }

    // MARK: Called by statements and SQLite

    @inline(__always)
    func statementStarted() { mark = events.count }

    /// A failed statement undid its own changes: forget the events its triggers reported.
    func statementFailed() {
        if events.count > mark { events.removeSubrange(mark...) }
    }

    /// After COMMIT, or after a statement that committed on its own, the events go to the observers.
    @inline(__always)
    func statementDone(autocommit: Bool) {
        guard autocommit else { return }
        mark = 0
        guard !events.isEmpty else { return }
        let committed = events
        events.removeAll(keepingCapacity: true)
        observers.deliver(committed, origin: origin)
    }

    private func rolledBack() {
        events.removeAll()
        mark = 0
    }

    private func resultUpdateValue(_ index: Int, _ context: OpaquePointer?) {
        guard updateValues.indices.contains(index) else {
            sqlite3_result_error(context, "\(Self.updateValueFunction): no value \(index)", -1)
            return
        }
        switch updateValues[index] {
        case .null: sqlite3_result_null(context)
        case .bool(let b): sqlite3_result_int64(context, b ? 1 : 0)
        case .int(let i): sqlite3_result_int64(context, i)
        case .double(let d): sqlite3_result_double(context, d)
        case .string(let text): Self.result(text, context)
        case .data(let data):
            data.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_result_zeroblob(context, 0)  // empty, not NULL
                }
                sqlite3_result_blob(context, base, Int32(buffer.count), SQLITE_TRANSIENT)
            }
        case let nested: Self.result((try? nested.jsonString()) ?? "null", context)
        }
    }

    /// Returns text with its exact length, so an embedded NUL does not cut it short.
    private static func result(_ text: String, _ context: OpaquePointer?) {
        var text = text
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return sqlite3_result_text(context, "", 0, SQLITE_TRANSIENT) }
                sqlite3_result_text(context, base, Int32(chars.count), SQLITE_TRANSIENT)
            }
        }
    }
}

import GQLCore
import GQLStore

/// One queued mutation as the delivery loop sees it: what to send, and how often it was tried.
///
/// The operation text and the values are the ones captured when the call was made; nothing is looked up again
/// at send time.
struct OutboxItem: Sendable, Hashable {
    /// The row id: call order.
    var id: Int64
    /// The id of its operation in `_gqlsync_operations`, which always means the same name, text and input
    /// argument (``OutboxStore/Operation``); `nil` for an item with ``damage``.
    var operationID: Int64?
    /// The operation's name (as GQLQuery knows it).
    var name: String
    /// The object key the call named, if any.
    var key: GQLValue?
    /// The operation text, fragments included.
    var query: String
    /// The caller's values as the outbox stores them: the text of a JSON object, checked when the row was read
    /// (``GQLValue/isJSONObject(_:)``) and parsed only when the values are needed (``values()``), so a sender
    /// may send this text as it is.
    var input: String
    /// The argument the values are wrapped in (`input`), or `nil` when they are the variables themselves.
    var wrap: String?
    /// Sent as `Idempotency-Key`; the same for every retry of the same content.
    var idempotencyKey: String
    /// How many times the item was handed to the network, this attempt included.
    var attempts: Int
    /// Why the row cannot be sent as stored (values or key that are not JSON, an operation that is not stored: a
    /// file edited by hand, or damaged): the item is set aside unsent with this failure instead of stopping the
    /// queue behind it. `nil` for every item the engine wrote.
    var damage: GQLSync.Failure? = nil

    /// The caller's values, parsed from ``input`` (a batch, a request over WebSocket, a conflict, the failed
    /// list). The text was checked by the same rules when its row was read, so this fails only if it was not.
    func values() throws -> GQLValues { try OutboxStore.decodeObject(input, id: id) }

    /// The variables of the request.
    func variables() throws -> GQLValues {
        guard let wrap else { return try values() }
        return [wrap: .object(try values())]
    }
}

/// How an item was enqueued.
enum OutboxMode: String, Sendable {
    /// Merged into an unsent item of the same operation and key.
    case lazy
    /// Always its own item.
    case steady
}

/// The columns of an outbox row that make an ``OutboxItem``, as its readers select them, in this order: `id`,
/// `op`, `key`, `input`, `idempotency`, `nonce`, `attempts`. A column of an unexpected kind (a file edited by hand)
/// reads as missing, except `op`, kept as it is for the message that names it.
struct OutboxRow {
    var id: Int64?
    var op: GQLValue
    var key: String?
    var input: String?
    var idempotency: String?
    var nonce: Int64?
    var attempts: Int64?

    /// The columns of a row read as a dictionary.
    init(_ row: GQLValues) {
        id = row["id"]?.intValue
        op = row["op"] ?? .null
        key = row["key"]?.stringValue
        input = row["input"]?.stringValue
        idempotency = row["idempotency"]?.stringValue
        nonce = row["nonce"]?.intValue
        attempts = row["attempts"]?.intValue
    }

    /// The first seven columns of a row read by position (the delivery loop's reads: no dictionary per row).
    init(_ columns: GQLColumns) {
        id = columns.value(0).intValue
        op = columns.value(1)
        key = columns.text(2)
        input = columns.text(3)
        idempotency = columns.text(4)
        nonce = columns.value(5).intValue
        attempts = columns.value(6).intValue
    }
}

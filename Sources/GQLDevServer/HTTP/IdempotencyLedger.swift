import GQLCore
import HTTPTypes
import NIOCore

/// The answers to mutations sent with an `Idempotency-Key` header, kept so that a repeat of such a request is
/// answered from its first run instead of running again.
///
/// A client repeats a request when it cannot know whether the first one ran: its answer was lost, or the client
/// crashed while it was on its way (GQLSync's delivery sends every queued mutation with a key and sends the one in
/// flight at a crash again). The first request may even still be running when the repeat arrives — a killed
/// client's request the server had read but not yet committed — and, without the key, would commit after the
/// requests the client's next run sent meanwhile, out of their order.
///
/// The rules follow the IETF draft "The Idempotency-Key HTTP Header Field": a repeat of a request that has
/// answered gets the same answer; a repeat while the first is still running gets 409 (send it again later); a
/// key sent again with another request gets 422 (the same operations and variables in another member order or
/// spacing are the same request); an empty key, or one over ``maxKeyBytes``, gets 400. A key belongs
/// to the credentials it came with: another client's key of the same value is another key. Only 200 answers are
/// kept (a request refused for its credentials, a limit or an injected fault ran nothing, and may be sent again),
/// for the last `capacity` keys and at most `maxBytes` of answers and their requests' bodies, the oldest forgotten
/// first. Queries are not recorded: running one again changes nothing.
final class IdempotencyLedger: Sendable {
    /// The longest key accepted.
    static let maxKeyBytes = 255
    /// A request still running after this long is taken for lost (its key can run again).
    static let abandonedAfter: Duration = .seconds(60)

    enum Begin {
        /// The first request with this key: run it, then ``complete(_:answer:)`` or ``release(_:)``.
        case run(Ticket)
        /// The answer of the request that ran with this key.
        case replay(String)
        /// A request with this key is still running.
        case inProgress
        /// The key was used for another request.
        case mismatch
        /// The key is empty or too long.
        case invalidKey
    }

    /// A request allowed to run under its key.
    ///
    /// A class: `ContinuousClock.Instant` is a resilient type of the standard library, so a struct holding it was
    /// copied, tested and destroyed through runtime value witnesses, and every request answered on the event loop
    /// paid for its empty `Ticket?` (about 450 instructions); an optional reference is one word.
    final class Ticket: Sendable {
        fileprivate let slot: Slot
        fileprivate let started: ContinuousClock.Instant

        fileprivate init(slot: Slot, started: ContinuousClock.Instant) {
            self.slot = slot
            self.started = started
        }
    }

    fileprivate struct Slot: Hashable, Sendable {
        var key: GQLExactText
        /// The credentials the key came with, hashed.
        var principal: Int
        /// The hash of both, made once: the dictionary hashes a slot again for every entry it moves when one
        /// is removed, which with the key's text hashed each time was most of what forgetting an answer cost.
        private var hash: Int

        init(key: String, principal: Int) {
            self.key = GQLExactText(key)
            self.principal = principal
            var hasher = Hasher()
            hasher.combine(key)
            hasher.combine(principal)
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        static func == (a: Slot, b: Slot) -> Bool { a.hash == b.hash && a.principal == b.principal && a.key == b.key }
    }

    private struct Entry {
        /// The first request's body: a repeat with the same bytes is the same request without decoding either;
        /// one with other bytes is compared as decoded requests (``isSameRequest(_:_:requests:)``).
        var body: [UInt8]
        var batch: Bool
        var answer: String?
        var started: ContinuousClock.Instant
    }

    private struct State {
        var entries: [Slot: Entry] = [:]
        /// Slots with an answer, oldest first.
        var answered = CircularBuffer<Slot>()
        var answeredBytes = 0
        /// Requests answered from the ledger.
        var replays = 0
    }

    let capacity: Int
    let maxBytes: Int
    private let state = GQLLocked(State())

    /// `capacity` 0 turns the ledger off (``begin(key:credentials:body:requests:batch:)`` is never asked then).
    init(capacity: Int, maxBytes: Int = 16 << 20) {
        self.capacity = capacity
        self.maxBytes = maxBytes
    }

    var isEnabled: Bool { capacity > 0 }

    /// How many requests were answered from the ledger.
    var replays: Int { state.withLock { $0.replays } }

    /// Looks up `key` for a POST of `requests` (a batch, or one request) with a mutation, sent with `credentials`;
    /// `body` is the POST's body, which `requests` were decoded from.
    func begin(
        key: String, credentials: DevAuthenticator.Credentials, body: [UInt8], requests: [DevEngine.Request],
        batch: Bool
    ) -> Begin {
        guard !key.isEmpty, key.utf8.count <= Self.maxKeyBytes else { return .invalidKey }
        var principal = Hasher()
        principal.combine(credentials.apiKey)
        principal.combine(credentials.adminSecret)
        principal.combine(credentials.authorization)
        let slot = Slot(key: key, principal: principal.finalize())
        let now = ContinuousClock.now
        return state.withLock { state in
            if let entry = state.entries[slot] {
                // Decodes the first body only for a key sent again with other bytes: rare, and bounded by the
                // body limit.
                let first = (body: entry.body, batch: entry.batch)
                guard Self.isSameRequest(first, (body, batch), requests: requests) else { return .mismatch }
                if let answer = entry.answer {
                    state.replays += 1
                    return .replay(answer)
                }
                guard now - entry.started > Self.abandonedAfter else { return .inProgress }
            }
            state.entries[slot] = Entry(body: body, batch: batch, started: now)
            return .run(Ticket(slot: slot, started: now))
        }
    }

    /// Keeps the answer of the request `ticket` let run, forgetting the oldest answers beyond the limits.
    func complete(_ ticket: Ticket, answer: String) {
        state.withLock { state in
            // One look-up, and the entry changed where it is: reading it out (its `started`, its size) copied it,
            // with a retain of its body, three times per answer.
            guard let index = state.entries.index(forKey: ticket.slot),
                state.entries.values[index].started == ticket.started
            else { return }  // taken over
            state.entries.values[index].answer = answer
            state.answered.append(ticket.slot)
            state.answeredBytes += state.entries.values[index].body.count + answer.utf8.count
            while state.answered.count > capacity || state.answeredBytes > maxBytes,
                let oldest = state.answered.popFirst()
            {
                state.answeredBytes -= Self.bytes(state.entries.removeValue(forKey: oldest))
            }
        }
    }

    /// What an answered entry holds: its answer and its request's body.
    private static func bytes(_ entry: Entry?) -> Int {
        guard let entry else { return 0 }
        return entry.body.count + (entry.answer?.utf8.count ?? 0)
    }

    /// Whether a request is the one an entry was made for: the same body, or a body that decodes to the same
    /// requests (the same operations and variables in another member order or spacing).
    private static func isSameRequest(
        _ first: (body: [UInt8], batch: Bool), _ repeated: (body: [UInt8], batch: Bool), requests: [DevEngine.Request]
    ) -> Bool {
        guard first.batch == repeated.batch else { return false }
        if first.body == repeated.body { return true }
        switch HTTPRequestDecoder.decodeBody(first.body) {
        case .success(.single(let request)): return !first.batch && requests == [request]
        case .success(.batch(let earlier)): return first.batch && requests == earlier
        case .failure: return false
        }
    }

    /// Forgets the request `ticket` let run, without an answer to keep: its key may run again.
    func release(_ ticket: Ticket) {
        state.withLock { state in
            if let entry = state.entries[ticket.slot], entry.answer == nil, entry.started == ticket.started {
                state.entries[ticket.slot] = nil
            }
        }
    }
}

extension IdempotencyLedger {
    private static let header = HTTPField.Name("Idempotency-Key")

    /// The request's `Idempotency-Key`: `nil` without one; a header sent twice reads as an empty key (refused).
    static func key(in fields: HTTPFields) -> String? {
        guard let header else { return nil }
        let values = fields[values: header]
        guard let first = values.first else { return nil }
        return values.count == 1 ? first : ""
    }
}

extension HTTPTransport {
    /// What the ledger says of a mutation request sent with an `Idempotency-Key`.
    enum IdempotentStart {
        /// Run it, and record its answer under `ticket`.
        case run(IdempotencyLedger.Ticket)
        /// Answer this instead: the first run's answer, or a refusal (400, 409, 422).
        case answer(HTTPResponse.Status, String)
    }

    func begin(
        _ key: String, _ credentials: DevAuthenticator.Credentials, body: [UInt8], _ requests: [DevEngine.Request],
        batch: Bool
    ) -> IdempotentStart {
        let outcome = idempotency.begin(
            key: key, credentials: credentials, body: body, requests: requests, batch: batch)
        switch outcome {
        case .run(let ticket):
            return .run(ticket)
        case .replay(let json):
            logger.info("POST → 200 (the answer of an earlier request with the same Idempotency-Key)")
            return .answer(.ok, json)
        case .inProgress:
            let message = "A request with this Idempotency-Key is still running; send it again later."
            logger.info("POST → 409 (its Idempotency-Key is in use)")
            return .answer(.conflict, Self.errorText(.conflict, message, code: "IDEMPOTENCY_KEY_IN_USE"))
        case .mismatch:
            let message = "This Idempotency-Key was sent before with another request."
            let status = HTTPResponse.Status(code: 422, reasonPhrase: "Unprocessable Content")
            return .answer(status, Self.errorText(status, message, code: "IDEMPOTENCY_KEY_REUSED"))
        case .invalidKey:
            let message =
                "The Idempotency-Key header must be sent once, with 1 to \(IdempotencyLedger.maxKeyBytes) bytes."
            return .answer(.badRequest, Self.errorText(.badRequest, message, code: "IDEMPOTENCY_KEY_INVALID"))
        }
    }
}

import GQLCore
import GQLNet

/// What one send of one item came to, decided from the server's answer or the transport's error alone.
///
/// The rules: an answer without errors, or with data beside them, is delivered; `ConflictUnhandled` (a stale
/// `_version`) is a conflict for the engine's strategy; other GraphQL errors without data, HTTP 4xx other than
/// 408 and 429, and requests the server can never accept are permanent; transport errors, timeouts, HTTP 5xx,
/// 408 and 429 are transient and retried, and so is 409 to a request sent with an idempotency key (the server
/// is still running an earlier request with the same key: the one in flight when a previous run stopped).
enum DeliveryOutcome: Sendable, Equatable {
    /// The server applied the mutation.
    case delivered(GQLResult)
    /// The server refused it for good.
    case permanent(GQLSync.Failure)
    /// The server holds a newer version of the object (its current item, when the answer carried it).
    case conflict(server: GQLValues?, GQLSync.Failure)
    /// Try again later.
    case transient(Transient)

    struct Transient: Sendable, Equatable {
        /// The server could not be reached at all (refused, unreachable, timed out): the engine is offline.
        var unreachable: Bool
        /// The wait the server asked for (`Retry-After`), if any.
        var retryAfter: Duration?
        var failure: GQLSync.Failure
        /// A 409 to a request sent with an idempotency key: the server says it still runs an earlier request with
        /// the key. Retried a few times only (``DeliveryStateMachine/keyInUseLimit``): a server that answers 409
        /// for another reason must not hold the queue for ever.
        var keyInUse = false
    }

    /// The AppSync `errorType` of a stale-version conflict.
    static let conflictErrorType = "ConflictUnhandled"

    /// Classifies a server's answer to one mutation.
    ///
    /// Without errors, only `data` that is an object with a field says the mutation was applied; `data` that is
    /// missing, `null`, of another kind or an empty object is no GraphQL answer to a mutation (a proxy, a broken
    /// server) and is retried like any 2xx that is not GraphQL, rather than taken for delivered and removed.
    static func classify(_ result: GQLResult) -> DeliveryOutcome {
        guard !result.errors.isEmpty else {
            if case .object(let fields)? = result.data, !fields.isEmpty { return .delivered(result) }
            let data = result.data.map { $0.objectValue != nil ? "an empty object" : "a \($0.kindName)" } ?? "null"
            return .transient(
                Transient(
                    unreachable: false,
                    failure: GQLSync.Failure(
                        message: "the answer has no errors and its data is \(data), not the mutation's field: "
                            + "not taken for delivered")))
        }
        let failure = GQLSync.Failure(message: summary(result.errors), errors: result.errors)
        if let conflict = result.errors.first(where: { errorType($0) == conflictErrorType }) {
            return .conflict(server: conflict.extensions?["data"]?.objectValue, failure)
        }
        if hasData(result.data) { return .delivered(result) }
        return .permanent(failure)
    }

    /// Classifies an error thrown instead of an answer; `keyed`: the request carried an idempotency key.
    static func classify(_ error: any Error, retryAfter: Duration? = nil, keyed: Bool = false) -> DeliveryOutcome {
        guard let error = error as? GQLError else {
            return .transient(Transient(unreachable: true, failure: GQLSync.Failure(message: "\(error)")))
        }
        let failure = GQLSync.Failure(message: error.message, httpStatus: error.httpStatus)
        let retryAfter = retryAfter ?? error.retryAfter
        switch error.code {
        case .http:
            let status = error.httpStatus ?? 0
            if keyed && status == 409 {
                return .transient(
                    Transient(unreachable: false, retryAfter: retryAfter, failure: failure, keyInUse: true))
            }
            if status == 408 || status == 429 || status >= 500 {
                return .transient(Transient(unreachable: false, retryAfter: retryAfter, failure: failure))
            }
            if (300..<400).contains(status) {
                // A 3xx without a Location (one with a Location is `.redirect`): a captive portal or a proxy in the
                // way, not the server's word on the item, which waits, offline, like behind a redirect.
                return .transient(Transient(unreachable: true, failure: failure))
            }
            return .permanent(failure)
        case .connection, .timeout, .io, .cancelled, .redirect:
            // A redirect is never followed (it would carry the request's credentials elsewhere): the server is not
            // usable at this URL until the app is configured with the right one, so the item waits, offline.
            return .transient(Transient(unreachable: true, failure: failure))
        case .closed:
            // The app shut its GQLServer down (or its socket closed): nothing the server said about the item, which
            // stays queued, offline, for an engine with a server that runs.
            return .transient(Transient(unreachable: true, failure: failure))
        case .invalidResponse:
            // A 2xx answer that is not GraphQL: a proxy or portal in the way, most likely; it may pass.
            return .transient(Transient(unreachable: false, failure: failure))
        default:
            // .invalidArgument, .invalidValue, .encoding, .responseTooLarge, .unauthorized …: sending the same
            // request again gets the same refusal.
            return .permanent(failure)
        }
    }

    /// The first few errors' messages (each cut to 512 bytes), and how many more there were.
    static func summary(_ errors: [GQLResult.Error]) -> String {
        let shown = errors.prefix(3).map { error in
            guard error.message.utf8.count > 512 else { return error.message }
            return String(decoding: error.message.utf8.prefix(512), as: UTF8.self) + "…"
        }
        return shown.joined(separator: "; ") + (errors.count > 3 ? " (+\(errors.count - 3) more errors)" : "")
    }

    /// The `errorType` of an error: in `extensions` (the standard shape) or, as AppSync puts it, beside them.
    static func errorType(_ error: GQLResult.Error) -> String? {
        error.extensions?["errorType"]?.stringValue
    }

    /// Whether the data has at least one non-null top-level field.
    private static func hasData(_ data: GQLValue?) -> Bool {
        guard case .object(let fields)? = data else { return false }
        return fields.values.contains { !$0.isNull }
    }
}

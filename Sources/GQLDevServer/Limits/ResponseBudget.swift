import GQLCore
import Synchronization

/// The bytes of stored values one request may still read (``GQLDevServer/Limits/maxResponseBytes``): resolvers
/// charge what they read, and the charge that goes over the limit fails, so a request stops growing its response
/// as soon as it is too large instead of when it is finished. A batch shares one budget.
///
/// It is GraphQLSwift's execution `context`, so every resolver of the request reaches it.
///
/// ```swift
/// let budget = ResponseBudget(limit: 16 << 20)
/// try budget.charge(rows)   // throws LimitExceeded (RESPONSE_TOO_LARGE) once the total passes the limit
/// ```
package final class ResponseBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    package init(limit: Int) {
        self.limit = limit
    }

    /// Adds the size of `rows` (text and blobs by their bytes, other values 8, names included).
    func charge(_ rows: [GQLValues]) throws(LimitExceeded) {
        var bytes = 0
        for row in rows {
            for (name, value) in row { bytes += name.utf8.count + Self.size(of: value) }
        }
        try charge(bytes: bytes)
    }

    func charge(bytes: Int) throws(LimitExceeded) {
        let total = used.add(bytes, ordering: .relaxed).newValue
        guard total <= limit else {
            throw LimitExceeded(
                .responseSize, "The response would be larger than \(limit) bytes; ask for fewer items or fields.",
                limit: limit)
        }
    }

    /// What ``charge(_:)`` counts for one value.
    static func size(of value: GQLValue) -> Int {
        switch value {
        case .string(let text): text.utf8.count + 2
        case .data(let data): data.count * 4 / 3 + 2
        case .array(let elements): elements.reduce(2) { $0 + size(of: $1) + 1 }
        case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + size(of: $1.value) + 4 }
        default: 8
        }
    }
}

import GQLCore
import GQLNet

/// One page of an AppSync-style delta query's answer: `{ syncNotes: { items, nextToken, startedAt } }`.
struct PullPage: Sendable {
    var items: [GQLValue]
    var nextToken: String?
    /// The server's time (ms since 1970) when it started the page: the next delta pull's `lastSync`.
    var startedAt: Int64?

    /// Reads page `number` of `query` from `result`.
    ///
    /// - Throws: ``GQLResult/Failure`` when the answer has GraphQL errors (a partial page is not written);
    ///   ``GQLError`` `.invalidResponse` naming the query and page when the data is not such a connection.
    init(_ result: GQLResult, query: String, number: Int) throws {
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        guard case .object(let fields)? = result.data,
            let connection = fields.count == 1
                ? fields.values.first : fields.values.first(where: { $0["items"] != nil })
        else {
            throw GQLError(
                .invalidResponse, "page \(number) of \(query) has no data with an `items` list", operation: query)
        }
        guard case .array(let items)? = connection["items"] else {
            throw GQLError(
                .invalidResponse, "page \(number) of \(query): `items` is missing or not a list", operation: query)
        }
        self.items = items
        switch connection["nextToken"] {
        case .string(let token)?: nextToken = token.isEmpty ? nil : token
        case nil, .null?: nextToken = nil
        case let other?:
            throw GQLError(
                .invalidResponse, "page \(number) of \(query): `nextToken` is \(other.kindName), not a string",
                operation: query)
        }
        switch connection["startedAt"] {
        case nil, .null?: startedAt = nil
        case let value?:
            // A cursor the next pull sends back as `lastSync`: a time, not anything else the server put there.
            guard let milliseconds = value.intValue, milliseconds >= 0 else {
                throw GQLError(
                    .invalidResponse,
                    "page \(number) of \(query): `startedAt` is \(value.intValue.map { "\($0)" } ?? value.kindName), "
                        + "not a time in milliseconds since 1970", operation: query)
            }
            startedAt = milliseconds
        }
    }
}

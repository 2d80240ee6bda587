import Foundation
import GQLCore
import GQLNet

extension GQLSync {
    /// Why an item was set aside: the server's GraphQL errors, or the HTTP status and message of the failure.
    ///
    /// ```swift
    /// for item in try sync.failedItems() {
    ///     print(item.name, item.failure.message, item.failure.errors.map(\.message))
    /// }
    /// ```
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// A sentence for people.
        public var message: String
        /// The HTTP status, when the server answered with one that is not a success.
        public var httpStatus: Int?
        /// The GraphQL errors of the server's answer, in its order.
        public var errors: [GQLResult.Error]

        public init(message: String, httpStatus: Int? = nil, errors: [GQLResult.Error] = []) {
            self.message = message
            self.httpStatus = httpStatus
            self.errors = errors
        }

        public var description: String {
            httpStatus.map { "\(message) [HTTP \($0)]" } ?? message
        }

        /// The failure as stored in the outbox.
        var jsonValue: GQLValue {
            var members: GQLValues = ["message": .string(message)]
            if let httpStatus { members["httpStatus"] = .int(Int64(httpStatus)) }
            if !errors.isEmpty { members["errors"] = .array(errors.map(\.jsonValue)) }
            return .object(members)
        }

        init(json value: GQLValue) throws {
            message = value["message"]?.stringValue ?? "unknown failure"
            httpStatus = value["httpStatus"]?.intValue.map { Int($0) }
            let wire = value["errors"]?.arrayValue ?? []
            errors = wire.isEmpty ? [] : try GQLResult(response: ["errors": .array(wire)]).errors
        }
    }

    /// An item the server refused for good, set aside so the queue goes on: retry it with ``GQLSync/retry(_:)``
    /// (after fixing what was wrong) or remove it with ``GQLSync/drop(_:)``.
    ///
    /// ```swift
    /// for item in try sync.failedItems() where item.name == "UpdateUser" {
    ///     try sync.drop(item.id)
    /// }
    /// ```
    public struct FailedItem: Sendable, Hashable, Identifiable {
        /// The item's id; ids grow in call order.
        public var id: Int64
        /// The operation's name.
        public var name: String
        /// The key the call named, if any.
        public var key: GQLValue?
        /// The variables that were sent.
        public var variables: GQLValues
        /// How many times the item was sent.
        public var attempts: Int
        /// Why it was set aside.
        public var failure: Failure
        /// When it was set aside.
        public var failedAt: Date
    }
}

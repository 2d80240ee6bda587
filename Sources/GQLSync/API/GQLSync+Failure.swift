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
    ///
    /// A failure is kept small whatever the server sent (it is stored with the item and printed): the message
    /// stops at ``messageLimit`` bytes with the rest counted (`… (+N bytes)`), and only the first
    /// ``errorLimit`` GraphQL errors are kept, each bounded the same way.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// The most bytes of a message kept (4 KiB).
        public static let messageLimit = 4096
        /// The most GraphQL errors kept (5).
        public static let errorLimit = 5

        /// A sentence for people, at most ``messageLimit`` bytes and a count of the rest.
        public var message: String {
            didSet { message = Self.capped(message) }
        }
        /// The HTTP status, when the server answered with one that is not a success.
        public var httpStatus: Int?
        /// The first ``errorLimit`` GraphQL errors of the server's answer, in its order.
        public var errors: [GQLResult.Error] {
            didSet { errors = Self.capped(errors) }
        }

        public init(message: String, httpStatus: Int? = nil, errors: [GQLResult.Error] = []) {
            self.message = Self.capped(message)
            self.httpStatus = httpStatus
            self.errors = Self.capped(errors)
        }

        /// `text` cut at ``messageLimit`` bytes (not inside a character's bytes), the rest counted.
        static func capped(_ text: String) -> String {
            let utf8 = text.utf8
            guard utf8.count > messageLimit else { return text }
            var end = utf8.index(utf8.startIndex, offsetBy: messageLimit)
            while end > utf8.startIndex, UTF8.isContinuation(utf8[end]) { end = utf8.index(before: end) }
            let kept = utf8.distance(from: utf8.startIndex, to: end)
            return String(decoding: utf8[..<end], as: UTF8.self) + "… (+\(utf8.count - kept) bytes)"
        }

        /// The first ``errorLimit`` errors, each with its message capped, at most 32 locations and path steps, and
        /// its extensions only when they are small (a server's error may carry megabytes of them).
        static func capped(_ errors: [GQLResult.Error]) -> [GQLResult.Error] {
            guard errors.count > errorLimit || errors.contains(where: isLarge) else { return errors }
            return errors.prefix(errorLimit).map { error in
                var error = error
                error.message = capped(error.message)
                error.locations = Array(error.locations.prefix(32))
                error.path = Array(error.path.prefix(32))
                if extensionsSize(error) > messageLimit { error.extensions = nil }
                return error
            }
        }

        private static func isLarge(_ error: GQLResult.Error) -> Bool {
            error.message.utf8.count > messageLimit || error.locations.count > 32 || error.path.count > 32
                || extensionsSize(error) > messageLimit
        }

        private static func extensionsSize(_ error: GQLResult.Error) -> Int {
            guard let extensions = error.extensions else { return 0 }
            return (try? GQLValue.object(extensions).jsonString().utf8.count) ?? .max
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

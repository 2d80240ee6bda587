/// The kinds of change an observer listens to.
///
/// ```swift
/// let id = try User.createObserver(db, [.insert, .update], "OBJ.age > 40") { type, key in
///     print(type, key)
/// }
/// ```
public struct GQLObserverType: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A row was inserted.
    public static let insert = GQLObserverType(rawValue: 1 << 0)
    /// A row was updated.
    public static let update = GQLObserverType(rawValue: 1 << 1)
    /// A row was deleted.
    public static let delete = GQLObserverType(rawValue: 1 << 2)
    /// Every kind of change.
    public static let all: GQLObserverType = [.insert, .update, .delete]

    public var description: String {
        var names: [String] = []
        if contains(.insert) { names.append("insert") }
        if contains(.update) { names.append("update") }
        if contains(.delete) { names.append("delete") }
        return names.isEmpty ? "[]" : names.joined(separator: "|")
    }
}

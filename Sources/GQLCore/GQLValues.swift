/// A JSON object: named ``GQLValue``s in the order they were written, as fetched rows and GraphQL results use them.
///
/// Members keep their order: the order of a literal, of a JSON document (``GQLValue/init(json:)``), of a GraphQL
/// answer (the selection's order, as the spec asks a server to send it) and of a fetched row's columns. JSON text
/// written from it (``GQLValue/jsonString(pretty:sortedKeys:)``) lists them in that order.
///
/// ```swift
/// var user: GQLValues = ["userId": 1001, "name": "John Smith"]
/// user["age"] = 42                      // added at the end
/// user["name"] = "Jane Smith"           // replaced in place: still the second member
/// print(user.keys)                      // ["userId", "name", "age"]
/// ```
///
/// It reads like a `[String: GQLValue]`: a key subscript (assigning `nil` removes the member), `keys`, `values`,
/// `count`, `mapValues`, `filter`, `merge`, and iteration as `(key, value)` pairs in order. Looking a key up costs
/// the same whatever the object's size: small objects are scanned (at most ``linearLimit`` members, faster than
/// hashing the key), larger ones keep an index from key to position. Removing a member is linear in the size.
///
/// Equality and hashing ignore the order, as JSON's (RFC 8259: an object is an unordered collection of members):
/// `["a": 1, "b": 2] == ["b": 2, "a": 1]`, so an answer whose fields arrive in another order is still the same
/// answer. Compare ``keys`` to tell the orders apart.
public struct GQLValues: Sendable {
    public typealias Element = (key: String, value: GQLValue)

    /// The members in order.
    private var entries: [Element]
    /// Position of each key in `entries`, kept only above ``linearLimit`` members; `nil` below, where a scan is
    /// cheaper than hashing.
    private var positions: [String: Int]?

    /// The number of members up to which a lookup scans the keys instead of keeping an index.
    ///
    /// Measured with `Benchmarks/values-threshold.swift` (names like GraphQL fields, release build): at 16 members a
    /// scan finds a key in about the time a hash lookup takes (32 ns against 36 ns) and an object built and read
    /// once costs a quarter less without the index (1.6 µs against 2.1 µs); from 20 members on, lookups by scan
    /// cost more. Most answers' objects and rows are far below it, and build no index.
    public static let linearLimit = 16

    /// An empty object.
    public init() {
        entries = []
        positions = nil
    }

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        entries = []
        entries.reserveCapacity(minimumCapacity)
        positions = nil
    }

    /// The members of `pairs` in order; a repeated key keeps its first position and its last value.
    ///
    /// ```swift
    /// let object = GQLValues(uniqueKeysWithValues: zip(names, values))
    /// ```
    public init(uniqueKeysWithValues pairs: some Sequence<(String, GQLValue)>) {
        self.init(minimumCapacity: pairs.underestimatedCount)
        for (key, value) in pairs { self[key] = value }
    }

    /// The members of a dictionary, in key order (a dictionary has none of its own, so this one is stable).
    ///
    /// ```swift
    /// let object = GQLValues(["b": 2, "a": 1])   // a, then b
    /// ```
    public init(_ dictionary: [String: GQLValue]) {
        self.init(minimumCapacity: dictionary.count)
        for key in dictionary.keys.sorted() { appendNew(key, dictionary[key] ?? .null) }
    }

    /// The values of an API's `[String: any GQLValueConvertible]` parameter (variables, values to write), converted,
    /// in key order as ``init(_:)`` gives a dictionary's.
    package init(converting values: [String: any GQLValueConvertible]) {
        self.init(minimumCapacity: values.count)
        for key in values.keys.sorted() { appendNew(key, values[key]?.gqlValue ?? .null) }
    }

    /// The number of members.
    public var count: Int { entries.count }

    /// Whether there are no members.
    public var isEmpty: Bool { entries.isEmpty }

    /// The member names, in order.
    public var keys: [String] { entries.map(\.key) }

    /// The member values, in order.
    public var values: [GQLValue] { entries.map(\.value) }

    /// The members as a dictionary (without their order): for an API that takes `[String: any GQLValueConvertible]`.
    ///
    /// ```swift
    /// try await server.query(text, row.dictionary)
    /// ```
    public var dictionary: [String: GQLValue] {
        var dictionary = [String: GQLValue](minimumCapacity: count)
        for (key, value) in entries { dictionary[key] = value }
        return dictionary
    }

    /// The position of `key` in the order, or `nil` when there is no such member.
    public func index(forKey key: String) -> Int? {
        var probes = 0
        return find(key, probes: &probes)
    }

    /// How many keys a lookup of `key` compares or hashes: at most ``linearLimit`` below it, 1 above (the index's
    /// hash lookup). For the tests that hold lookups to a constant cost by counting, not by the clock.
    package func probes(toFind key: String) -> Int {
        var probes = 0
        _ = find(key, probes: &probes)
        return probes
    }

    @inline(__always)
    private func find(_ key: String, probes: inout Int) -> Int? {
        if let positions {
            probes += 1
            return positions[key]
        }
        // Keys of another length are told apart by their byte counts alone, without a string comparison. The
        // members are borrowed by the closure: `entries[index].key` copied each whole member first (a retain of the
        // key and an outlined copy and destroy of the value, which holds `Data`), more than the comparison cost.
        let length = key.utf8.count
        return entries.firstIndex { member in
            probes += 1
            return member.key.utf8.count == length && member.key == key
        }
    }

    /// The value of the member `key`. Assigning replaces the value in place (the member keeps its position) or
    /// appends a new member; assigning `nil` removes it.
    public subscript(key: String) -> GQLValue? {
        get {
            guard let index = index(forKey: key) else { return nil }
            return entries[index].value
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The value of the member `key`, or `defaultValue` when there is none; assigning stores it as `self[key]` does.
    public subscript(key: String, default defaultValue: @autoclosure () -> GQLValue) -> GQLValue {
        get { self[key] ?? defaultValue() }
        set { updateValue(newValue, forKey: key) }
    }

    /// Sets the member `key` to `value` (in place, or appended when new) and returns the value it replaced.
    @discardableResult
    public mutating func updateValue(_ value: GQLValue, forKey key: String) -> GQLValue? {
        if let index = index(forKey: key) {
            let old = entries[index].value
            entries[index].value = value
            return old
        }
        appendNew(key, value)
        return nil
    }

    /// Removes the member `key` and returns its value; the members after it move up one place.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> GQLValue? {
        guard let index = index(forKey: key) else { return nil }
        let removed = entries.remove(at: index).value
        if positions != nil { reindex() }
        return removed
    }

    /// Removes every member.
    public mutating func removeAll() {
        entries.removeAll()
        positions = nil
    }

    /// Reserves room for `minimumCapacity` members.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        entries.reserveCapacity(minimumCapacity)
    }

    /// The same members in the same order, each value transformed.
    public func mapValues(_ transform: (GQLValue) throws -> GQLValue) rethrows -> GQLValues {
        var mapped = self
        for index in mapped.entries.indices { mapped.entries[index].value = try transform(entries[index].value) }
        return mapped
    }

    /// A dictionary of the members, each value transformed (for another value type: the order is not kept).
    public func mapValues<T>(_ transform: (GQLValue) throws -> T) rethrows -> [String: T] {
        var mapped = [String: T](minimumCapacity: count)
        for (key, value) in entries { mapped[key] = try transform(value) }
        return mapped
    }

    /// The members whose transformed value is not `nil`, in order.
    public func compactMapValues(_ transform: (GQLValue) throws -> GQLValue?) rethrows -> GQLValues {
        var mapped = GQLValues(minimumCapacity: count)
        for (key, value) in entries {
            if let new = try transform(value) { mapped.appendNew(key, new) }
        }
        return mapped
    }

    /// A dictionary of the members whose transformed value is not `nil` (for another value type: the order is not
    /// kept).
    public func compactMapValues<T>(_ transform: (GQLValue) throws -> T?) rethrows -> [String: T] {
        var mapped = [String: T](minimumCapacity: count)
        for (key, value) in entries {
            if let new = try transform(value) { mapped[key] = new }
        }
        return mapped
    }

    /// The members that satisfy `isIncluded`, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> GQLValues {
        var kept = GQLValues()
        for entry in entries where try isIncluded(entry) { kept.appendNew(entry.key, entry.value) }
        return kept
    }

    /// Adds the members of `other`: a key already here keeps its position and takes `combine(old, new)`, a new key
    /// is appended.
    public mutating func merge(
        _ other: some Sequence<(key: String, value: GQLValue)>,
        uniquingKeysWith combine: (GQLValue, GQLValue) throws -> GQLValue
    ) rethrows {
        for (key, value) in other {
            if let index = index(forKey: key) {
                entries[index].value = try combine(entries[index].value, value)
            } else {
                appendNew(key, value)
            }
        }
    }

    /// This object with the members of `other` merged in (see ``merge(_:uniquingKeysWith:)``).
    public func merging(
        _ other: some Sequence<(key: String, value: GQLValue)>,
        uniquingKeysWith combine: (GQLValue, GQLValue) throws -> GQLValue
    ) rethrows -> GQLValues {
        var merged = self
        try merged.merge(other, uniquingKeysWith: combine)
        return merged
    }

    /// Appends a member whose key the caller knows is absent, without looking for it: for a module that builds
    /// objects from unique names (a table's columns). A key that is present already would be found at its first
    /// place only, so callers must not pass one.
    package mutating func appendUnique(_ key: String, _ value: GQLValue) { appendNew(key, value) }

    /// An object of `members`, in order, whose keys the caller knows are unique (not looked for): for a module that
    /// builds a whole object's members in an array first (an answer assembled from records, a decoded record), so
    /// no member is appended through a call of its own.
    package init(uniqueMembers members: [Element]) {
        entries = members
        positions = nil
        if members.count > Self.linearLimit { reindex() }
    }

    /// Calls `body` with the members in order, borrowed: a reader that compares names and picks values out of a
    /// large object copies only what it keeps (`self[position]` returns each member copied, a retain of its name
    /// and of its value).
    package func withMembers<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try entries.withUnsafeBufferPointer(body)
    }

    private mutating func appendNew(_ key: String, _ value: GQLValue) {
        entries.append((key, value))
        if positions != nil {
            positions?[key] = entries.count - 1
        } else if entries.count > Self.linearLimit {
            reindex()
        }
    }

    private mutating func reindex() {
        guard entries.count > Self.linearLimit else {
            positions = nil
            return
        }
        var index = [String: Int](minimumCapacity: entries.count)
        for (position, entry) in entries.enumerated() { index[entry.key] = position }
        positions = index
    }
}

// MARK: - Collection

extension GQLValues: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    /// The member at `position` in the order.
    public subscript(position: Int) -> Element { entries[position] }
}

// MARK: - Literal, equality, conversions

extension GQLValues: ExpressibleByDictionaryLiteral {
    /// The members in written order; a repeated key keeps its first position and its last value.
    public init(dictionaryLiteral elements: (String, GQLValue)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

extension GQLValues: Hashable {
    /// Whether both have the same members with equal values, in any order.
    public static func == (lhs: GQLValues, rhs: GQLValues) -> Bool {
        guard lhs.count == rhs.count else { return false }
        // Same keys in the same order is the common case (a value compared with its copy or a re-read answer).
        var sameOrder = true
        for (index, entry) in lhs.entries.enumerated() {
            let other = rhs.entries[index]
            if entry.key != other.key {
                sameOrder = false
                break
            }
            if entry.value != other.value { return false }
        }
        if sameOrder { return true }
        for (key, value) in lhs.entries {
            guard rhs[key] == value else { return false }
        }
        return true
    }

    /// Hashes the members in a way that does not depend on their order, so that equal objects hash alike.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (key, value) in entries {
            var member = Hasher()
            member.combine(key)
            member.combine(value)
            combined ^= member.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}

extension GQLValues: CustomStringConvertible {
    /// The object as compact JSON text, members in order.
    public var description: String { GQLValue.object(self).description }
}

extension GQLValues: GQLValueConvertible {
    public var gqlValue: GQLValue { .object(self) }
}

extension GQLValues: Codable {
    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes a keyed container. A `Decoder` does not tell the order of a document's members (Foundation's
    /// `JSONDecoder` lists them in no fixed order), so they come in key order; ``GQLValue/init(json:)`` keeps the
    /// document's order.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MemberKey.self)
        let keys = container.allKeys.sorted { $0.stringValue < $1.stringValue }
        self.init(minimumCapacity: keys.count)
        for key in keys { self[key.stringValue] = try container.decode(GQLValue.self, forKey: key) }
    }

    /// Encodes the members in order into a keyed container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        for (key, value) in entries { try container.encode(value, forKey: MemberKey(stringValue: key)) }
    }
}

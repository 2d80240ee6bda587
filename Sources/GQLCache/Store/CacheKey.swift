import GQLCore

/// How record keys are spelled, and how a record's fields hold references and scalar objects.
///
/// - A root is `QUERY_ROOT`, `MUTATION_ROOT` or `SUBSCRIPTION_ROOT`.
/// - An object with a key is `Typename:id` (`User:1`); several key fields are joined by `,`
///   (`Post:ada,hello-world`). Inside an id, `\`, `.` and `,` are escaped with a `\`, so an id may hold any text
///   and no two objects share a key.
/// - An object without a key lives under its parent: the parent's key, `.`, the field's key (escaped the same
///   way), and `.index` for each list it sits in (`QUERY_ROOT.listNotes({"limit":2})`, `User:1.address`,
///   `QUERY_ROOT.feed.0`). A typed key never holds an unescaped `.`, so a path key cannot be mistaken for one.
enum CacheKey {
    static let queryRoot = "QUERY_ROOT"
    static let mutationRoot = "MUTATION_ROOT"
    static let subscriptionRoot = "SUBSCRIPTION_ROOT"

    /// The key of an object of type `typename` whose one key field holds `value`.
    static func object(_ typename: String, _ value: GQLValue) -> String {
        typename + ":" + escape(text(of: value))
    }

    /// The key of an object of type `typename` whose key fields hold `values`.
    static func object(_ typename: String, _ values: [GQLValue]) -> String {
        if values.count == 1 { return object(typename, values[0]) }
        return typename + ":" + values.map { escape(text(of: $0)) }.joined(separator: ",")
    }

    /// The key of a keyless object stored under `parent` at `fieldKey`, inside lists at `indices`.
    static func path(_ parent: String, _ fieldKey: String, _ indices: [Int]) -> String {
        var key = parent + "." + escape(fieldKey)
        for index in indices { key += "." + String(index) }
        return key
    }

    /// What a key names, for statistics: a root, the type of a keyed record, or `(nested)` for a path key (one
    /// with an unescaped `.`).
    static func kind(of key: String) -> String {
        // By bytes: a `.` or `\` followed by a combining mark is one Character, not the ASCII one.
        var escaped = false
        var colon: String.UTF8View.Index?
        for index in key.utf8.indices {
            let byte = key.utf8[index]
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: ".") {
                return "(nested)"
            } else if byte == UInt8(ascii: ":"), colon == nil {
                colon = index
            }
        }
        guard let colon else { return key }
        return String(decoding: key.utf8[..<colon], as: UTF8.self)
    }

    /// A key field's value as text: strings as they are, numbers and booleans as JSON writes them.
    static func text(of value: GQLValue) -> String {
        if case .string(let string) = value { return string }
        return CanonicalJSON.text(value)
    }

    static func escape(_ text: String) -> String {
        // The three are ASCII, so no byte of another character's UTF-8 can be one of them: a byte scan is enough.
        let special: (UInt8) -> Bool = {
            $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ",")
        }
        guard text.utf8.contains(where: special) else { return text }
        // By scalars, not Characters: `,` followed by a combining mark is one Character, but still a `,` to escape.
        var out = ""
        out.reserveCapacity(text.utf8.count + 4)
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "." || scalar == "," { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}

/// A record's field values as stored: JSON values (``RecordCodec`` writes them), where every object is one of two
/// wrappers, so a reference can never be confused with a value.
///
/// - `{"__ref": "User:1"}`: a reference to another record;
/// - `{"__value": {…}}`: an object-valued scalar (a JSON scalar such as AWSJSON), kept as it came.
///
/// Scalars, `null` and lists of these are stored as they are.
enum StoredValue {
    static let referenceMember = "__ref"
    static let valueMember = "__value"

    static func reference(_ key: String) -> GQLValue {
        // Built from its one member (an array made at its size): a cold read makes one per reference it decodes,
        // and the dictionary literal's generic path cost several times as much.
        .object(GQLValues(uniqueMembers: [(referenceMember, .string(key))]))
    }

    /// The key a stored value refers to, when it is a reference.
    static func referencedKey(_ stored: GQLValue) -> String? {
        guard case .object(let members) = stored, members.count == 1 else { return nil }
        // Read in place through the pointer: indexing the members would copy the member first.
        return members.withMembers { members in
            guard let member = members.baseAddress, member.pointee.key == referenceMember,
                case .string(let key) = member.pointee.value
            else { return nil }
            return key
        }
    }

    /// Calls `body` with the elements of a list, in place (a reader walking them copies only what it keeps);
    /// `nil` when `stored` is not a list.
    static func withElements<R>(_ stored: GQLValue, _ body: (UnsafeBufferPointer<GQLValue>) throws -> R) rethrows
        -> R?
    {
        guard case .array(let elements) = stored else { return nil }
        return try elements.withUnsafeBufferPointer(body)
    }

    /// Whether `a` and `b` are the same value to the byte: strings (and object members' names) by their UTF-8
    /// bytes, objects member by member in order. `GQLValue`'s `==` compares strings by canonical equivalence, which
    /// holds `"é"` as U+00E9 and as `e` + U+0301 equal: a write deciding what changed must not.
    static func isIdentical(_ a: GQLValue, _ b: GQLValue) -> Bool {
        switch (a, b) {
        case (.string(let left), .string(let right)):
            return RecordKey(left) == RecordKey(right)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { isIdentical($0, $1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count
                && zip(left, right).allSatisfy {
                    RecordKey($0.key) == RecordKey($1.key) && isIdentical($0.value, $1.value)
                }
        default:
            return a == b
        }
    }

    /// Calls `body` with each key `stored` refers to: itself a reference, or a list (of lists) of them.
    static func references(in stored: GQLValue, _ body: (String) -> Void) {
        if let key = referencedKey(stored) {
            body(key)
        } else if case .array(let elements) = stored {
            for element in elements { references(in: element, body) }
        }
    }

    /// ``references(in:_:)`` of the stored value at `stored`, read in place: a list's elements are not copied,
    /// only the keys handed to `body` (a cold read's walk meets every reference of the records it loads).
    static func references(at stored: UnsafePointer<GQLValue>, _ body: (String) -> Void) {
        switch stored.pointee {
        case .object:
            if let key = referencedKey(stored.pointee) { body(key) }
        case .array:
            _ = withElements(stored.pointee) { elements in
                guard let first = elements.baseAddress else { return }
                for index in 0..<elements.count { references(at: first + index, body) }
            }
        default:
            break
        }
    }

    /// A leaf (a field without a selection set) as stored: objects wrapped, lists element by element.
    static func leaf(_ value: GQLValue) -> GQLValue {
        switch value {
        case .object: .object([valueMember: value])
        case .array(let elements): .array(elements.map(leaf))
        default: value
        }
    }

    /// A stored leaf as the server sent it; `nil` when the stored value is a reference (the record was written by
    /// a selection that asked for an object here).
    static func unwrapLeaf(_ stored: GQLValue) -> GQLValue? {
        switch stored {
        case .object(let members):
            return members[valueMember]
        case .array(let elements):
            var values: [GQLValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard let value = unwrapLeaf(element) else { return nil }
                values.append(value)
            }
            return .array(values)
        default:
            return stored
        }
    }
}

/// JSON text with object members in name order at every level, whatever order the value keeps: field keys and
/// argument texts must not change with the order a caller wrote them in.
///
/// The text is ASCII: every character past it is written as a `\u` escape of its UTF-16 code units, so two
/// arguments that differ only in how a character is encoded (`"é"` as U+00E9 and as `e` + U+0301) give two field
/// keys. A record's fields are members of a ``GQLValues``, whose names compare as `String`s (canonical
/// equivalence): as raw text the two fields were one, though a server answers them as two.
enum CanonicalJSON {
    static func text(_ value: GQLValue) -> String {
        var out = ""
        write(value, into: &out)
        return out
    }

    private static func write(_ value: GQLValue, into out: inout String) {
        switch value {
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                write(element, into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            // In the order of the names' bytes, each member once (a value's names are unique as Strings).
            let sorted = members.map { (name: $0.key, value: $0.value) }.sorted {
                $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
            }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out += "," }
                quote(member.name, into: &out)
                out += ":"
                write(member.value, into: &out)
            }
            out += "}"
        case .string(let text):
            quote(text, into: &out)
        case .double(let number) where !number.isFinite:
            out += "null"  // not sent by a server, nor accepted in variables; kept total rather than failing
        default:
            out += (try? value.jsonString()) ?? "null"
        }
    }

    /// `text` as a JSON string in ASCII: as GQLCore's JSON writes it (quotes, backslashes and control characters
    /// escaped, `\n`, `\r`, `\t`, otherwise `\u00xx`), and every character past ASCII as `\u` escapes of its UTF-16
    /// code units (two for a character past U+FFFF). ASCII arguments keep the field keys they always had.
    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        // Most arguments are plain ASCII: appended whole.
        let plain = { (byte: UInt8) in byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C }
        if text.utf8.allSatisfy(plain) {
            out += text
            out += "\""
            return
        }
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20..<0x80: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        out += "\""
    }
}

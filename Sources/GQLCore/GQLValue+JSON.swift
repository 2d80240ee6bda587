import Foundation

extension GQLValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([GQLValue].self) {
            self = .array(a)
        } else if let o = try? container.decode(GQLValues.self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d):
            guard d.isFinite else {
                throw EncodingError.invalidValue(
                    d, .init(codingPath: encoder.codingPath, debugDescription: "JSON has no \(d)"))
            }
            try container.encode(d)
        case .string(let s): try container.encode(s)
        case .data(let d): try container.encode(d.base64EncodedString())
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension GQLValue {
    /// Parses JSON text.
    ///
    /// ```swift
    /// let value = try GQLValue(json: #"{"id": 1, "tags": ["a"]}"#)
    /// ```
    /// - Throws: ``GQLError`` with code `.invalidJSON` naming the position of the fault.
    public init(json text: String) throws {
        try self.init(json: Data(text.utf8))
    }

    /// Parses JSON bytes. Numbers without a fraction or exponent that fit in `Int64` become `.int`. Objects keep
    /// the document's member order; a name given twice keeps its first position and its last value.
    public init(json data: Data) throws {
        try self.init(jsonBytes: [UInt8](data))
    }

    /// Parses JSON bytes already in an array (no copy): for a module that holds a request body's bytes.
    package init(jsonBytes bytes: [UInt8]) throws {
        var parser = JSONParser(bytes: bytes)
        self = try parser.parseDocument()
    }

    /// Parses JSON bytes whose value is an object, handing `body` each member's name and value in order rather than
    /// building the object (a name given twice comes twice): for a module that reads a few members of a request
    /// body. Returns false, having handed over nothing, when the value is not an object.
    /// - Throws: what ``init(json:)`` throws for the same bytes.
    package static func forEachMember(ofJSONObject bytes: [UInt8], _ body: (String, GQLValue) -> Void) throws
        -> Bool
    {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseObjectDocument(body)
    }

    /// Whether `text` is JSON whose value is an object, by the rules and limits of ``init(json:)``, checked
    /// without building the value: for a module that keeps JSON text to send as it is, and parses it only when it
    /// needs the values (GQLSync's outbox).
    package static func isJSONObject(_ text: String) -> Bool { JSONSyntax.isObject(text) }

    /// The value as JSON text, object members in their order.
    ///
    /// ```swift
    /// let text = try GQLValue(json: #"{"b": 1, "a": 2}"#).jsonString()   // {"b":1,"a":2}
    /// ```
    /// - Parameters:
    ///   - pretty: indent and put each member on its own line.
    ///   - sortedKeys: write every object's members in key order instead (the same text for the same members,
    ///     whatever their order: for a key built from variables, or output compared as text).
    /// - Throws: ``GQLError`` `.invalidValue` for a NaN or infinite double, which JSON cannot hold.
    public func jsonString(pretty: Bool = false, sortedKeys: Bool = false) throws -> String {
        var out = ""
        try JSONWriter(pretty: pretty, sortedKeys: sortedKeys).write(self, into: &out, indent: 0)
        return out
    }

    /// The value as UTF-8 JSON bytes (see ``jsonString(pretty:sortedKeys:)``).
    public func jsonData(pretty: Bool = false, sortedKeys: Bool = false) throws -> Data {
        Data(try jsonString(pretty: pretty, sortedKeys: sortedKeys).utf8)
    }
}

/// Writes ``GQLValue`` as JSON text, object members in their order (or sorted by key when asked).
package struct JSONWriter {
    var pretty: Bool
    var sortedKeys = false

    func write(_ value: GQLValue, into out: inout String, indent: Int) throws {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            guard d.isFinite else {
                throw GQLError(.invalidValue, "JSON cannot represent the number \(d)")
            }
            if d.rounded() == d && abs(d) < 1e15 {
                out += String(Int64(d)) + ".0"
            } else {
                out += "\(d)"
            }
        case .string(let s): Self.quote(s, into: &out)
        case .data(let d): Self.quote(d.base64EncodedString(), into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (n, element) in a.enumerated() {
                if n > 0 { out += "," }
                newline(&out, indent + 1)
                try write(element, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            if sortedKeys {
                for (n, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                    try write(member: member, first: n == 0, into: &out, indent: indent + 1)
                }
            } else {
                for (n, member) in o.enumerated() {
                    try write(member: member, first: n == 0, into: &out, indent: indent + 1)
                }
            }
            newline(&out, indent)
            out += "}"
        }
    }

    private func write(member: GQLValues.Element, first: Bool, into out: inout String, indent: Int) throws {
        if !first { out += "," }
        newline(&out, indent)
        Self.quote(member.key, into: &out)
        out += pretty ? ": " : ":"
        try write(member.value, into: &out, indent: indent)
    }

    private func newline(_ out: inout String, _ indent: Int) {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: indent)
    }

    /// Appends `s` as a JSON string literal: quotes, backslashes and control characters escaped (`\n`, `\r`, `\t`,
    /// otherwise `\u00xx`), every other character as itself. The output is also a valid GraphQL string literal.
    package static func quote(_ s: String, into out: inout String) {
        out += "\""
        // Most strings need no escape: append them whole rather than scalar by scalar.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

import GQLCore
import GraphQL

extension DevEngine {
    /// A query's or mutation's response as JSON text: `{"data": …, "errors": […]}`, the members of `data` in the
    /// order the operation selected them (the GraphQL spec's ordered response map), whether the compiled plan or
    /// the executor answered.
    ///
    /// ```swift
    /// let response = await engine.execute(.init(query: "{ getObjects(objectId: \"a\") { text objectId } }"))
    /// print(response.json)        // {"data":{"getObjects":{"text":"…","objectId":"a"}}}
    /// response.value["data"]      // the same as a GQLValue, in the same order
    /// ```
    package struct Response: Sendable, Equatable, CustomStringConvertible {
        /// The response as JSON text.
        package let json: String

        init(json: String) {
            self.json = json
        }

        /// A response built as a ``GQLValue`` (a refusal's errors), written in its order.
        package init(_ value: GQLValue) {
            self.json = ResponseJSON.text(value)
        }

        /// The response as a ``GQLValue``; `null` if the text is not JSON (it always is).
        package var value: GQLValue { (try? GQLValue(json: json)) ?? .null }

        package var description: String { json }
    }
}

/// Writes response JSON in order: GraphQLSwift's ordered `Map` and ``GQLValue`` objects, each in its own order.
/// Scalars are written as ``GQLValue`` writes them, so both paths give the same bytes for the same value.
///
/// The text is built as UTF-8 bytes and made a `String` once, at the end (``text``), or its bytes are copied out as
/// they are (``utf8``: the answers made on the event loop): appending to a `String`
/// piece by piece cost a compiled plan's answer more than reading its item from SQLite (issue 25's
/// `Benchmarks/callgrind-server.sh`).
struct ResponseJSON {
    private var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The JSON text written so far.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `value` as JSON text, or an error response when it holds a number JSON cannot represent.
    static func text(_ value: GQLValue) -> String {
        (try? value.jsonString()) ?? unencodable
    }

    mutating func raw(_ fragment: String) {
        bytes.append(contentsOf: fragment.utf8)
    }

    /// Appends a fragment known when compiling (`{"data":{`, `null`) from its bytes: appending a `String`'s UTF-8
    /// view costs a generic walk of it, some 170 instructions even for one byte.
    mutating func raw(static fragment: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: fragment.utf8Start, count: fragment.utf8CodeUnitCount))
    }

    /// The bytes written so far (a plan's precomputed fragment, such as ``OperationPlan/OutputField/keyJSON``).
    var utf8: [UInt8] { bytes }

    /// Appends bytes written before (``utf8``), as they are.
    mutating func raw(_ fragment: [UInt8]) {
        bytes.append(contentsOf: fragment)
    }

    /// Appends one ASCII byte (`,`, `{`, `}`).
    mutating func raw(ascii byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends what `other` wrote.
    mutating func append(_ other: ResponseJSON) {
        bytes.append(contentsOf: other.bytes)
    }

    /// `utf8` as a JSON string literal when every byte is printable ASCII other than `"` and `\` (0x20–0x7F): then
    /// its `String` has the same bytes and ``string(_:)`` would copy them whole. `false`, nothing written, otherwise.
    mutating func plainASCII(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in utf8 where byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            return false
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// An integer in decimal, as `String(value)` writes it, without making the `String`.
    mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        DecimalDigits.withDigits(of: value.magnitude) { bytes.append(contentsOf: $0) }
    }

    /// Where the text ends now, for ``rewind(to:)``.
    var mark: Int { bytes.count }

    /// Drops what was written after `mark` (a value that turned out to be null).
    mutating func rewind(to mark: Int) {
        bytes.removeSubrange(mark...)
    }

    /// `"name":`
    mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// The bytes ``key(_:)`` writes for `name`, for a plan to escape its keys once.
    static func keyBytes(_ name: String) -> [UInt8] {
        var json = ResponseJSON(capacity: name.utf8.count + 3)
        json.key(name)
        return json.bytes
    }

    /// `string` as a JSON string literal, escaped as ``JSONWriter`` escapes it; a string that needs no escape (the
    /// common case) is copied whole.
    mutating func string(_ string: String) {
        var string = string
        let plain = string.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        guard !plain else { return }
        var escaped = ""
        JSONWriter.quote(string, into: &escaped)
        raw(escaped)
    }

    /// A ``GQLValue``; throws for a NaN or infinite number.
    mutating func value(_ value: GQLValue) throws {
        switch value {
        case .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .int(let i): raw(String(i))
        case .string(let s): string(s)
        default: raw(try value.jsonString())
        }
    }

    /// A `Map` in its own order; `undefined` members are left out (as ``MapConversion/value(_:)`` leaves them).
    mutating func map(_ map: Map) throws {
        switch map {
        case .undefined, .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .number(let number): try value(MapConversion.value(number))
        case .string(let s): string(s)
        case .array(let elements):
            raw("[")
            for (n, element) in elements.enumerated() {
                if n > 0 { raw(",") }
                try self.map(element)
            }
            raw("]")
        case .dictionary(let members):
            raw("{")
            var first = true
            for (name, member) in members where !member.isUndefined {
                if !first { raw(",") }
                first = false
                key(name)
                try self.map(member)
            }
            raw("}")
        }
    }

    /// `"errors":[…]` in the formatter's style (`message`, `locations`, `path`, `extensions`), after a comma when
    /// `afterData`.
    mutating func errors(_ errors: [GraphQLError], _ formatter: ResponseFormatter, afterData: Bool) {
        guard !errors.isEmpty else { return }
        raw(afterData ? #","errors":"# : #""errors":"#)
        raw(Self.text(.array(errors.map(formatter.error))))
    }

    /// The text that stands for a response JSON cannot hold (a NaN or infinite number).
    static let unencodable = #"{"errors":[{"message":"The response could not be encoded."}]}"#
}

/// An integer's decimal digits as bytes, for writers that would otherwise make a `String` of it per answer.
enum DecimalDigits {
    /// Calls `body` with the ASCII digits of `value` (no sign, no leading zero), valid only inside `body`.
    static func withDigits(of value: UInt64, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var rest = value
        // At most 20 digits (UInt64's largest), written from the last.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            body(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}

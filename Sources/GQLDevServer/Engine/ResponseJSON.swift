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
struct ResponseJSON {
    private(set) var text = ""

    init(capacity: Int = 256) {
        text.reserveCapacity(capacity)
    }

    /// `value` as JSON text, or an error response when it holds a number JSON cannot represent.
    static func text(_ value: GQLValue) -> String {
        (try? value.jsonString()) ?? unencodable
    }

    mutating func raw(_ fragment: String) {
        text += fragment
    }

    /// Where the text ends now, for ``rewind(to:)``.
    var mark: String.Index { text.endIndex }

    /// Drops what was written after `mark` (a value that turned out to be null).
    mutating func rewind(to mark: String.Index) {
        text.removeSubrange(mark...)
    }

    /// `"name":`
    mutating func key(_ name: String) {
        JSONWriter.quote(name, into: &text)
        text += ":"
    }

    mutating func string(_ string: String) {
        JSONWriter.quote(string, into: &text)
    }

    /// A ``GQLValue``; throws for a NaN or infinite number.
    mutating func value(_ value: GQLValue) throws {
        switch value {
        case .null: text += "null"
        case .bool(let b): text += b ? "true" : "false"
        case .int(let i): text += String(i)
        case .string(let s): JSONWriter.quote(s, into: &text)
        default: text += try value.jsonString()
        }
    }

    /// A `Map` in its own order; `undefined` members are left out (as ``MapConversion/value(_:)`` leaves them).
    mutating func map(_ map: Map) throws {
        switch map {
        case .undefined, .null: text += "null"
        case .bool(let b): text += b ? "true" : "false"
        case .number(let number): try value(MapConversion.value(number))
        case .string(let s): JSONWriter.quote(s, into: &text)
        case .array(let elements):
            text += "["
            for (n, element) in elements.enumerated() {
                if n > 0 { text += "," }
                try self.map(element)
            }
            text += "]"
        case .dictionary(let members):
            text += "{"
            var first = true
            for (name, member) in members where !member.isUndefined {
                if !first { text += "," }
                first = false
                key(name)
                try self.map(member)
            }
            text += "}"
        }
    }

    /// `"errors":[…]` in the formatter's style (`message`, `locations`, `path`, `extensions`), after a comma when
    /// `afterData`.
    mutating func errors(_ errors: [GraphQLError], _ formatter: ResponseFormatter, afterData: Bool) {
        guard !errors.isEmpty else { return }
        text += afterData ? #","errors":"# : #""errors":"#
        text += Self.text(.array(errors.map(formatter.error)))
    }

    /// The text that stands for a response JSON cannot hold (a NaN or infinite number).
    static let unencodable = #"{"errors":[{"message":"The response could not be encoded."}]}"#
}

import Foundation

extension GQLValue {
    /// The JSON value of any `Encodable`, through its JSON form. Dates use the current ``GQLDate`` format.
    ///
    /// Objects come with their members in key order: Foundation's `JSONEncoder` keeps no order of its own, and
    /// sorting makes the same value give the same text every time.
    ///
    /// ```swift
    /// let value = try GQLValue(encoding: Address(city: "Oslo"))   // ["city": "Oslo"]
    /// ```
    public init(encoding value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(GQLDate.string(from: date))
        }
        encoder.nonConformingFloatEncodingStrategy = .throw
        encoder.outputFormatting = .sortedKeys
        do {
            self = try GQLValue(json: encoder.encode(value))
        } catch EncodingError.invalidValue(let bad, let context) {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            throw GQLError(
                .invalidValue,
                "cannot encode \(type(of: value)): \(bad) is not a valid JSON value\(path.isEmpty ? "" : " at '\(path)'")"
            )
        } catch let error as EncodingError {
            throw GQLError(.encoding, "cannot encode \(type(of: value)): \(error)")
        }
    }

    /// Decodes the value into a `Decodable` type through its JSON form.
    ///
    /// ```swift
    /// let address = try value.decode(Address.self)
    /// ```
    /// - Throws: ``GQLError`` `.decoding` naming the type and the path of the mismatch.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            do {
                return try GQLDate.date(from: text)
            } catch let error as GQLError {
                // Rethrown as a DecodingError so the caller gets `.decoding` and the path of the bad date.
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
            }
        }
        do {
            return try decoder.decode(T.self, from: jsonData())
        } catch let error as DecodingError {
            throw GQLError(.decoding, "cannot decode \(T.self): \(Self.describe(error))")
        }
    }

    package static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return p.isEmpty ? "at the top level" : "at '\(p)'"
        }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type) \(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) value \(path(context))"
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)' \(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription) \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

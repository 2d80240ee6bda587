import Foundation
import GQLCore

/// Turns request bodies and query strings into GraphQL requests, or says precisely why it cannot.
///
/// Accepted shapes, as the GraphQL-over-HTTP convention has them: a JSON object
/// `{"query": String, "variables": Object?, "operationName": String?}`, or a non-empty array of such objects
/// (a batch); for GET, the same three members as query parameters with `variables` as JSON text.
enum HTTPRequestDecoder {
    /// A request the server cannot run; answered with HTTP 400.
    struct Failure: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// One request or a batch.
    enum Payload: Equatable {
        case single(DevEngine.Request)
        case batch([DevEngine.Request])
    }

    /// Decodes a POST body.
    static func decodeBody(_ bytes: Data) -> Result<Payload, Failure> {
        decodeBody([UInt8](bytes))
    }

    /// Decodes a POST body's bytes.
    static func decodeBody(_ bytes: [UInt8]) -> Result<Payload, Failure> {
        // One object, the common case: its three members straight into the request, with no GQLValue built for the
        // whole body. Anything else (a batch, another value, a fault) takes the path below, which says what is wrong.
        if let single = singleObject(bytes) { return single.map(Payload.single) }
        let value: GQLValue
        do {
            value = try GQLValue(jsonBytes: bytes)
        } catch {
            return .failure(Failure("The body is not valid JSON: \(error)"))
        }
        switch value {
        case .object(let object):
            return request(from: object).map(Payload.single)
        case .array(let elements):
            guard !elements.isEmpty else { return .failure(Failure("A batch must hold at least one request.")) }
            var requests: [DevEngine.Request] = []
            for (index, element) in elements.enumerated() {
                guard let object = element.objectValue else {
                    return .failure(Failure("Batch element \(index) is \(element.kindName), not an object."))
                }
                switch request(from: object) {
                case .success(let request): requests.append(request)
                case .failure(let failure): return .failure(Failure("Batch element \(index): \(failure.message)"))
                }
            }
            return .success(.batch(requests))
        default:
            return .failure(Failure("The body must be a JSON object or array, not \(value.kindName)."))
        }
    }

    /// The request of a body that ``decodeBody(_:)`` decodes as `.success(.single(request))`, and `nil` for every
    /// other body (a batch, another value, a fault, a request it refuses): for a caller that answers only that.
    static func singleRequest(_ bytes: [UInt8]) -> DevEngine.Request? {
        guard let (query, variables, operationName) = members(bytes) else { return nil }
        return try? makeRequest(query: query, variables: variables, operationName: operationName)
    }

    /// The request of a body whose JSON value is an object, read member by member with no ``GQLValue`` built for
    /// the whole body; `nil` when the body is not a JSON object (a batch, another value, a fault), which only the
    /// whole-value path describes.
    private static func singleObject(_ bytes: [UInt8]) -> Result<DevEngine.Request, Failure>? {
        guard let members = members(bytes) else { return nil }
        return request(query: members.query, variables: members.variables, operationName: members.operationName)
    }

    /// The `query`, `variables` and `operationName` members of a body whose JSON value is an object (the last of a
    /// repeated one, as the whole-value path keeps it); `nil` when it is not an object.
    private static func members(_ bytes: [UInt8])
        -> (query: GQLValue?, variables: GQLValue?, operationName: GQLValue?)?
    {
        var query: GQLValue?
        var variables: GQLValue?
        var operationName: GQLValue?
        let single = try? GQLValue.forEachMember(ofJSONObject: bytes) { name, value in
            switch name {
            case "query": query = value
            case "variables": variables = value
            case "operationName": operationName = value
            default: break
            }
        }
        guard single == true else { return nil }
        return (query, variables, operationName)
    }

    /// Decodes GET query parameters (already percent-decoded).
    static func decodeQuery(query: String?, variables: String?, operationName: String?) -> Result<
        DevEngine.Request, Failure
    > {
        var object: GQLValues = [:]
        if let query { object["query"] = .string(query) }
        if let operationName, !operationName.isEmpty { object["operationName"] = .string(operationName) }
        if let variables, !variables.isEmpty {
            do {
                object["variables"] = try GQLValue(json: variables)
            } catch {
                return .failure(Failure("The variables parameter is not valid JSON: \(error)"))
            }
        }
        return request(from: object)
    }

    /// The parameters of a URL query string, decoded as an HTML form encodes them: `+` is a space, `%XX` a byte.
    /// The first of repeated names wins.
    static func formParameters(_ query: String?) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]) else { continue }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if let value, parameters[name] == nil { parameters[name] = value }
        }
        return parameters
    }

    /// The request in one `{query, variables, operationName}` object.
    static func request(from object: GQLValues) -> Result<DevEngine.Request, Failure> {
        request(query: object["query"], variables: object["variables"], operationName: object["operationName"])
    }

    /// The request of an object's `query`, `variables` and `operationName` members (`nil`: absent).
    private static func request(query: GQLValue?, variables: GQLValue?, operationName: GQLValue?)
        -> Result<DevEngine.Request, Failure>
    {
        do throws(Failure) {
            return .success(try makeRequest(query: query, variables: variables, operationName: operationName))
        } catch {
            return .failure(error)
        }
    }

    /// ``request(query:variables:operationName:)``'s request, or its failure thrown (typed, so nothing is boxed).
    private static func makeRequest(query queryValue: GQLValue?, variables: GQLValue?, operationName: GQLValue?)
        throws(Failure) -> DevEngine.Request
    {
        guard let queryValue, !queryValue.isNull else {
            throw Failure("The request has no query.")
        }
        guard let query = queryValue.stringValue else {
            throw Failure("The query must be a string, not \(queryValue.kindName).")
        }
        var members: GQLValues = [:]
        switch variables {
        case nil, .null?: break
        case .object(let object)?: members = object
        case let other?: throw Failure("The variables must be an object, not \(other.kindName).")
        }
        var name: String?
        switch operationName {
        case nil, .null?: break
        case .string(let text)?: name = text.isEmpty ? nil : text
        case let other?: throw Failure("The operationName must be a string, not \(other.kindName).")
        }
        return DevEngine.Request(query: query, variables: members, operationName: name)
    }
}

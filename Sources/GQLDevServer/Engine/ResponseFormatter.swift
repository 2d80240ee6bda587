import GQLCore
import GraphQL

/// Turns GraphQLSwift results and errors into the engine's response values, `{"data": …, "errors": […]}`,
/// in either error style.
///
/// ``DevEngine/ErrorStyle/standard`` keeps the spec's shape: `message`, `locations`, `path`, `extensions`
/// (with `errorType`, `data`, `errorInfo` for resolver errors). ``DevEngine/ErrorStyle/appSync`` moves
/// `errorType`, `data` and `errorInfo` to the top level of the error, as AWS AppSync sends them, and adds
/// `sourceName: null` to each location.
struct ResponseFormatter: Sendable {
    var style: DevEngine.ErrorStyle

    /// A whole response as ordered JSON text: `data` in the executor's (the selection's) order, then `errors`.
    func json(_ result: GraphQLResult) -> DevEngine.Response {
        var out = ResponseJSON()
        out.raw("{")
        var hasData = false
        if let data = result.data, !data.isUndefined {
            out.key("data")
            do { try out.map(data) } catch { return DevEngine.Response(json: ResponseJSON.unencodable) }
            hasData = true
        }
        out.errors(result.errors, self, afterData: hasData)
        out.raw("}")
        return DevEngine.Response(json: out.text)
    }

    /// A response with only errors (parse, validation, a document that selects no usable operation).
    func response(errors: [GraphQLError]) -> GQLValue {
        ["errors": .array(errors.map(error))]
    }

    /// A response with one error message and, optionally, an AppSync error type.
    func response(message: String, errorType: String? = nil) -> GQLValue {
        var extensions: [String: Map] = [:]
        if let errorType { extensions["errorType"] = .string(errorType) }
        return response(errors: [GraphQLError(message: message, extensions: extensions)])
    }

    /// One error in the style.
    func error(_ error: GraphQLError) -> GQLValue {
        var object: GQLValues = ["message": .string(error.message)]
        if !error.locations.isEmpty {
            object["locations"] = .array(
                error.locations.map { location in
                    var entry: GQLValues = ["line": .int(Int64(location.line)), "column": .int(Int64(location.column))]
                    if style == .appSync { entry["sourceName"] = .null }
                    return .object(entry)
                })
        }
        if !error.path.elements.isEmpty {
            object["path"] = .array(
                error.path.elements.map { element in
                    switch element {
                    case .key(let key): .string(key)
                    case .index(let index): .int(Int64(index))
                    }
                })
        }
        var extensions = GQLValues()
        // In name order: a dictionary has none, and the text of an error must not change from run to run.
        for key in error.extensions.keys.sorted() {
            extensions[key] = error.extensions[key].flatMap { MapConversion.value($0) } ?? .null
        }
        switch style {
        case .standard:
            if !extensions.isEmpty { object["extensions"] = .object(extensions) }
        case .appSync:
            for key in ["errorType", "data", "errorInfo"] {
                if let value = extensions.removeValue(forKey: key) { object[key] = value }
            }
            if object["errorType"] != nil {
                object["data"] = object["data"] ?? .null
                object["errorInfo"] = object["errorInfo"] ?? .null
            }
            if !extensions.isEmpty { object["extensions"] = .object(extensions) }
        }
        return .object(object)
    }
}

import Foundation
import GQLCore

extension GQLCodegen.Schema {
    /// The introspection query `gql-cli codegen --url` sends: every type with its fields, arguments, interfaces,
    /// members, enum values and input fields, lists and non-nulls seven levels deep.
    public static let introspectionQuery = """
        query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name } \
        types { kind name \
        fields(includeDeprecated: true) { name args { name type { ...TypeRef } defaultValue } type { ...TypeRef } } \
        inputFields { name type { ...TypeRef } defaultValue } interfaces { ...TypeRef } \
        enumValues(includeDeprecated: true) { name } possibleTypes { ...TypeRef } } } } \
        fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name \
        ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
        """

    /// The SDL text of an introspection answer (`{"data": {"__schema": …}}` or `{"__schema": …}`), types in name
    /// order, so the same schema always gives the same text.
    ///
    /// ```swift
    /// let sdl = try GQLCodegen.Schema.sdl(introspection: answer, name: "schema.json")
    /// ```
    /// - Throws: ``GQLCodegen/Failure`` naming what is missing when the JSON is not an introspection answer.
    public static func sdl(introspection json: String, name: String) throws -> String {
        func fail(_ message: String) -> GQLCodegen.Failure {
            GQLCodegen.Failure([.init(.error, file: name, line: 1, column: 1, message)])
        }
        let value: GQLValue
        do { value = try GQLValue(json: json) } catch { throw fail("not JSON: \(error)") }
        guard let schema = value["data"]?["__schema"] ?? value["__schema"],
            let types = schema["types"]?.arrayValue
        else { throw fail("not an introspection answer: no __schema.types") }

        func reference(_ type: GQLValue?) throws -> String {
            guard let type, let kind = type["kind"]?.stringValue else { throw fail("a type reference without kind") }
            switch kind {
            case "NON_NULL": return try reference(type["ofType"]) + "!"
            case "LIST": return "[" + (try reference(type["ofType"])) + "]"
            default:
                guard let name = type["name"]?.stringValue else { throw fail("a \(kind) type reference without name") }
                return name
            }
        }
        func arguments(_ values: [GQLValue]?) throws -> String {
            guard let values, !values.isEmpty else { return "" }
            return "(" + (try values.map(input).joined(separator: ", ")) + ")"
        }
        func input(_ value: GQLValue) throws -> String {
            guard let name = value["name"]?.stringValue else { throw fail("an input value without name") }
            let defaultValue = value["defaultValue"]?.stringValue.map { " = \($0)" } ?? ""
            return "\(name): \(try reference(value["type"]))\(defaultValue)"
        }

        var lines: [String] = []
        var roots: [String] = []
        for (key, operation) in [
            ("queryType", "query"), ("mutationType", "mutation"), ("subscriptionType", "subscription"),
        ] {
            if let root = schema[key]?["name"]?.stringValue { roots.append("  \(operation): \(root)") }
        }
        lines.append("schema {\n" + roots.joined(separator: "\n") + "\n}")
        let sorted = types.sorted { ($0["name"]?.stringValue ?? "") < ($1["name"]?.stringValue ?? "") }
        for type in sorted {
            guard let typeName = type["name"]?.stringValue, let kind = type["kind"]?.stringValue else {
                throw fail("a type without name or kind")
            }
            if typeName.hasPrefix("__") || ["String", "Int", "Float", "Boolean", "ID"].contains(typeName) { continue }
            let interfaces = try (type["interfaces"]?.arrayValue ?? []).map(reference)
            let implements = interfaces.isEmpty ? "" : " implements " + interfaces.joined(separator: " & ")
            switch kind {
            case "SCALAR":
                lines.append("scalar \(typeName)")
            case "OBJECT", "INTERFACE":
                let fields = try (type["fields"]?.arrayValue ?? []).map { field -> String in
                    guard let fieldName = field["name"]?.stringValue else {
                        throw fail("\(typeName): a field without name")
                    }
                    return "  \(fieldName)\(try arguments(field["args"]?.arrayValue)): \(try reference(field["type"]))"
                }
                let keyword = kind == "OBJECT" ? "type" : "interface"
                lines.append("\(keyword) \(typeName)\(implements) {\n" + fields.joined(separator: "\n") + "\n}")
            case "UNION":
                let members = try (type["possibleTypes"]?.arrayValue ?? []).map(reference)
                lines.append("union \(typeName) = " + members.joined(separator: " | "))
            case "ENUM":
                let values = (type["enumValues"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
                lines.append("enum \(typeName) {\n" + values.map { "  \($0)" }.joined(separator: "\n") + "\n}")
            case "INPUT_OBJECT":
                let fields = try (type["inputFields"]?.arrayValue ?? []).map { "  " + (try input($0)) }
                lines.append("input \(typeName) {\n" + fields.joined(separator: "\n") + "\n}")
            default:
                throw fail("\(typeName): unknown type kind \(kind)")
            }
        }
        return lines.joined(separator: "\n\n") + "\n"
    }
}

extension GQLOperation {
    /// Writes operations and fragments as GraphQL text, checking names and values on the way.
    ///
    /// `path` is the route from the definition to what is being written, so an error can say where the fault is.
    struct Renderer {
        let format: Format
        let operationName: String?
        private(set) var output = ""
        /// Variables referenced so far, with where.
        var variableUses: [(name: String, place: String)] = []
        /// Whether the text written so far spreads a named fragment.
        private(set) var spreadsFragments = false
        /// Selection sets nest at most this deep, and values at most this deep inside an argument or a default, so a
        /// deeply nested operation throws instead of exhausting the call stack.
        static let maximumDepth = 256
        private var path: [String] = []
        private var level = 0

        init(format: Format, operationName: String?) {
            self.format = format
            self.operationName = operationName
        }

        // MARK: Definitions

        mutating func write(_ operation: GQLOperation) throws {
            let head = operation.name.map { "\(operation.kind.rawValue) \($0)" } ?? operation.kind.rawValue
            path = [head]
            output += operation.kind.rawValue
            if let name = operation.name {
                try check(name, "operation name")
                output += " " + name
            }
            try write(operation.variables)
            try write(operation.directives)
            try writeSelectionSet(operation.selections, of: "operation")
        }

        mutating func write(_ fragment: Fragment) throws {
            path = ["fragment \(fragment.name)"]
            try check(fragment.name, "fragment name")
            if fragment.name == "on" { throw invalid("a fragment cannot be called \"on\"") }
            try check(fragment.typeCondition, "type condition")
            output += "fragment \(fragment.name) on \(fragment.typeCondition)"
            try write(fragment.directives)
            try writeSelectionSet(fragment.selections, of: "fragment")
        }

        private mutating func write(_ variables: [Variable]) throws {
            guard !variables.isEmpty else { return }
            var seen: Set<String> = []
            output += "("
            for (index, variable) in variables.enumerated() {
                try check(variable.name, "variable name")
                guard seen.insert(variable.name).inserted else {
                    throw invalid("variable $\(variable.name) is declared twice")
                }
                guard let type = TypeReference(parsing: variable.type) else {
                    throw invalid(
                        "invalid type \(variable.type.debugDescription) for variable $\(variable.name): a type is a "
                            + "name, [Type] or Type! (such as ID!, [String!]!)")
                }
                if index > 0 { output += ", " }
                output += "$\(variable.name): \(type.text)"
                if let value = variable.defaultValue {
                    if value.containsVariable {
                        throw invalid(
                            "the default value of $\(variable.name) refers to a variable; defaults are constant")
                    }
                    path.append("default of $\(variable.name)")
                    output += " = "
                    try write(value, depth: 0)
                    path.removeLast()
                }
            }
            output += ")"
        }

        /// Checks that every variable referenced was declared.
        func checkVariablesDeclared(_ variables: [Variable]) throws {
            let declared = Set(variables.map(\.name))
            if let use = variableUses.first(where: { !declared.contains($0.name) }) {
                throw GQLError(
                    .invalidArgument,
                    "variable $\(use.name) is used at \(use.place) but not declared; add it to `variables:`",
                    operation: operationName)
            }
        }

        /// Checks that every declared variable is used, as GraphQL's "All Variables Used" rule requires.
        func checkVariablesUsed(_ variables: [Variable]) throws {
            let used = Set(variableUses.map(\.name))
            if let variable = variables.first(where: { !used.contains($0.name) }) {
                throw GQLError(
                    .invalidArgument,
                    "variable $\(variable.name) is declared but never used; servers reject unused variables, so "
                        + "remove it from `variables:` or use it", operation: operationName)
            }
        }

        // MARK: Selections

        private mutating func writeSelectionSet(_ selections: [Selection], of owner: String) throws {
            guard !selections.isEmpty else {
                throw invalid("the \(owner) selects nothing; a selection set needs at least one field or fragment")
            }
            guard level < Self.maximumDepth else {
                throw invalid("selection sets nest more than \(Self.maximumDepth) levels deep")
            }
            try checkResponseNames(selections)
            output += " {"
            level += 1
            for selection in selections {
                output += format == .pretty ? "\n" + String(repeating: "  ", count: level) : " "
                switch selection {
                case .field(let field): try write(field)
                case .fragmentSpread(let spread): try write(spread)
                case .inlineFragment(let inline): try write(inline)
                }
            }
            level -= 1
            output += format == .pretty ? "\n" + String(repeating: "  ", count: level) + "}" : " }"
        }

        /// Throws when two fields of one selection set share a response name (alias or name) but differ in field
        /// name or arguments: the server could not merge them into one result ("Field Selection Merging").
        private func checkResponseNames(_ selections: [Selection]) throws {
            var seen: [String: Field] = [:]
            for case .field(let field) in selections {
                let responseName = field.alias ?? field.name
                guard let first = seen[responseName] else {
                    seen[responseName] = field
                    continue
                }
                if first.name != field.name {
                    throw invalid(
                        "the response name \(responseName.debugDescription) is given to two different fields, "
                            + "\(first.name) and \(field.name); give one of them another alias")
                }
                if !Self.sameArguments(first.arguments, field.arguments) {
                    throw invalid(
                        "field \(field.name) is selected twice as \(responseName.debugDescription) with different "
                            + "arguments; give one of them another alias")
                }
            }
        }

        private static func sameArguments(_ a: [Argument], _ b: [Argument]) -> Bool {
            guard a.count == b.count else { return false }
            let values = Dictionary(a.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            return b.allSatisfy { values[$0.name] == $0.value }
        }

        private mutating func write(_ field: Field) throws {
            let label = field.alias.map { "\($0): \(field.name)" } ?? field.name
            path.append(label)
            defer { path.removeLast() }
            if let alias = field.alias {
                try check(alias, "alias")
                output += alias + ": "
            }
            try check(field.name, "field name")
            output += field.name
            try write(field.arguments)
            try write(field.directives)
            if !field.selections.isEmpty { try writeSelectionSet(field.selections, of: "field") }
        }

        private mutating func write(_ spread: FragmentSpread) throws {
            path.append("...\(spread.name)")
            defer { path.removeLast() }
            try check(spread.name, "fragment name")
            if spread.name == "on" { throw invalid("a fragment cannot be called \"on\"") }
            output += "..." + spread.name
            spreadsFragments = true
            try write(spread.directives)
        }

        private mutating func write(_ inline: InlineFragment) throws {
            path.append(inline.typeCondition.map { "... on \($0)" } ?? "...")
            defer { path.removeLast() }
            output += "..."
            if let type = inline.typeCondition {
                try check(type, "type condition")
                output += " on " + type
            }
            try write(inline.directives)
            try writeSelectionSet(inline.selections, of: "inline fragment")
        }

        // MARK: Arguments, directives and values

        private mutating func write(_ arguments: [Argument]) throws {
            guard !arguments.isEmpty else { return }
            var seen: Set<String> = []
            output += "("
            for (index, argument) in arguments.enumerated() {
                path.append("argument \(argument.name)")
                defer { path.removeLast() }
                try check(argument.name, "argument name")
                guard seen.insert(argument.name).inserted else { throw invalid("the argument is given twice") }
                if index > 0 { output += ", " }
                output += argument.name + ": "
                try write(argument.value, depth: 0)
            }
            output += ")"
        }

        private mutating func write(_ directives: [Directive]) throws {
            for directive in directives {
                path.append("@\(directive.name)")
                defer { path.removeLast() }
                try check(directive.name, "directive name")
                output += " @" + directive.name
                try write(directive.arguments)
            }
        }

        private mutating func write(_ value: Value, depth: Int) throws {
            guard depth < Self.maximumDepth else {
                throw GQLError(
                    .invalidValue, "the value nests more than \(Self.maximumDepth) lists or objects deep" + location,
                    operation: operationName)
            }
            switch value {
            case .null: output += "null"
            case .bool(let b): output += b ? "true" : "false"
            case .int(let i): output += String(i)
            case .float(let d):
                guard d.isFinite else { throw GQLError(.invalidValue, "GraphQL has no number \(d)" + location) }
                output += "\(d)"
            case .string(let s): Self.quote(s, into: &output)
            case .enum(let name):
                try check(name, "enum value")
                if ["true", "false", "null"].contains(name) {
                    throw invalid("\(name) cannot be an enum value; use .bool or .null")
                }
                output += name
            case .variable(let name):
                try check(name, "variable name")
                variableUses.append((name, path.joined(separator: " > ")))
                output += "$" + name
            case .list(let values):
                output += "["
                for (index, element) in values.enumerated() {
                    if index > 0 { output += ", " }
                    try write(element, depth: depth + 1)
                }
                output += "]"
            case .object(let members):
                output += "{"
                for (index, key) in members.keys.sorted().enumerated() {
                    try check(key, "input field name")
                    if index > 0 { output += ", " }
                    output += key + ": "
                    try write(members[key] ?? .null, depth: depth + 1)
                }
                output += "}"
            }
        }

        /// Appends `text` as a GraphQL string literal: JSON's escaping (quotes, backslashes, `\n` `\r` `\t`, other
        /// control characters as `\u00xx`) is valid GraphQL, and never uses `\b` / `\f`, which some parsers decode
        /// wrongly.
        static func quote(_ text: String, into out: inout String) {
            JSONWriter.quote(text, into: &out)
        }

        // MARK: Names

        static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
        }

        static func isNameContinue(_ scalar: Unicode.Scalar) -> Bool {
            isNameStart(scalar) || ("0"..."9").contains(scalar)
        }

        static func isName(_ text: String) -> Bool {
            guard let first = text.unicodeScalars.first, isNameStart(first) else { return false }
            return text.unicodeScalars.allSatisfy(isNameContinue)
        }

        /// Throws unless `name` matches `/[_A-Za-z][_0-9A-Za-z]*/`.
        private func check(_ name: String, _ what: String) throws {
            guard !Self.isName(name) else { return }
            throw invalid(
                "invalid \(what) \(name.debugDescription): a GraphQL name starts with a letter or _ and continues "
                    + "with letters, digits or _")
        }

        private var location: String { path.isEmpty ? "" : " at " + path.joined(separator: " > ") }

        private func invalid(_ message: String) -> GQLError {
            GQLError(.invalidArgument, message + location, operation: operationName)
        }
    }
}

import ArgumentParser
import Foundation
import GQLNet

/// The operation `query`, `mutate` and `subscribe` send: inline text or a named operation of a documents folder,
/// with its variables and how the answer is printed.
///
/// ```
/// gql-cli query --url … 'query ($id: ID!) { getObjects(objectId: $id) { text } }' --var id=demo-1
/// gql-cli mutate --url … --documents Queries CreateObject --variables '{"input": {"objectId": "a"}}'
/// ```
struct OperationOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The operation's text (or use --documents).", valueName: "operation"))
    var text: String?

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Send the operation NAME of the .graphql files under DIR (as gql-cli documents show prints it).",
            valueName: "dir name"))
    var documents: [String] = []

    @Option(help: ArgumentHelp("The variables, as a JSON object.", valueName: "json"))
    var variables: String?

    @Option(
        name: .customLong("var"),
        help: ArgumentHelp(
            "One variable (repeatable, over --variables); the value is read as JSON when it parses, else as a string.",
            valueName: "name=value"))
    var variablePairs: [String] = []

    @Flag(help: "Indent the JSON output.")
    var pretty = false

    func validate() throws {
        switch (text, documents.count) {
        case (nil, 0): throw ValidationError("give the operation's text, or --documents DIR NAME")
        case (.some, 1...): throw ValidationError("give the operation's text or --documents, not both")
        case (nil, 2), (.some, 0): break
        default: throw ValidationError("--documents takes a folder and an operation name: --documents DIR NAME")
        }
        _ = try parsedVariables()
    }

    /// `--variables` with the `--var` pairs laid over it.
    func parsedVariables() throws -> [String: GQLValue] {
        var result: [String: GQLValue] = [:]
        if let variables {
            let value: GQLValue
            do {
                value = try GQLValue(json: variables)
            } catch let error as GQLError {
                throw ValidationError("--variables is not valid JSON: \(error.message)")
            }
            guard case .object(let members) = value else {
                throw ValidationError("--variables must be a JSON object, not \(value.kindName)")
            }
            result = members.dictionary
        }
        for (index, pair) in variablePairs.enumerated() {
            let option = "--var #\(index + 1)"
            guard let equals = pair.firstIndex(of: "=") else {
                throw ValidationError("\(option) is not name=value")
            }
            let name = String(pair[..<equals])
            guard Self.isGraphQLName(name) else {
                throw ValidationError(
                    "\(option) needs a GraphQL name before '=' (letters, digits and _, not first a digit)")
            }
            let raw = String(pair[pair.index(after: equals)...])
            if let first = raw.first, "{[\"".contains(first) {
                do {
                    result[name] = try GQLValue(json: raw)
                } catch {
                    throw ValidationError("\(option) (\(name)) starts like JSON but is not valid JSON")
                }
            } else {
                result[name] = (try? GQLValue(json: raw)) ?? .string(raw)
            }
        }
        return result
    }

    /// Whether `name` is a GraphQL name: `[_A-Za-z][_0-9A-Za-z]*`.
    static func isGraphQLName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        }
    }

    /// The text to send, checked against the command: `query` sends queries, `mutate` mutations, `subscribe`
    /// subscriptions. Inline text is parsed here, so a syntax error or the wrong kind is a bad option (exit 64).
    func operationText(for kind: GQLQuery.OperationType) throws -> String {
        if let text {
            try Self.checkInline(text, kind: kind)
            return text
        }
        let (directory, name) = (documents[0], documents[1])
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw ValidationError("--documents: no folder at \(directory)")
        }
        let registry = GQLQuery()
        do {
            try registry.load(directory: URL(fileURLWithPath: directory, isDirectory: true))
        } catch let error as GQLError {
            throw ValidationError("--documents: cannot load the documents in \(directory): \(error.message)")
        }
        guard registry.contains(name) else {
            throw ValidationError(
                "--documents: no operation named \(name) in \(directory) (see gql-cli documents list)")
        }
        let document: GQLQuery.Document
        do {
            document = try registry.document(named: name)
        } catch let error as GQLError {
            throw ValidationError("--documents: cannot use \(name) of \(directory): \(error.message)")
        }
        try Self.check(document.operationType, of: name, against: kind, option: "--documents: ")
        return document.text
    }

    /// Parses inline `text` and checks that its operations are of `kind`.
    private static func checkInline(_ text: String, kind: GQLQuery.OperationType) throws {
        let registry = GQLQuery()
        do {
            try registry.load(text, sourceName: "operation")
        } catch let error as GQLError where error.message.hasPrefix("Syntax error") {
            throw ValidationError(
                "the operation's text has a \(error.message.prefix(1).lowercased())\(error.message.dropFirst())")
        } catch {
            // Parsed, but an operation has no name, which the registry needs: read its kind from its first word.
            if let found = leadingOperationType(text) {
                try check(found, of: "the operation", against: kind, option: "")
            }
            return
        }
        for name in registry.operationNames {
            // A fragment missing from the text is the server's to report.
            guard let document = try? registry.document(named: name) else { continue }
            try check(document.operationType, of: name, against: kind, option: "")
        }
    }

    /// The kind of the operation `text` starts with (`{` is a query), skipping whitespace, commas and comments;
    /// nil when it starts with something else (a fragment).
    private static func leadingOperationType(_ text: String) -> GQLQuery.OperationType? {
        var rest = Substring(text)
        while let first = rest.first {
            if first == "#" {
                rest = rest.drop { $0 != "\n" && $0 != "\r" }
            } else if first.isWhitespace || first == "," || first == "\u{FEFF}" {
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        if rest.first == "{" { return .query }
        let word = rest.prefix { $0.isLetter }
        return GQLQuery.OperationType(rawValue: String(word))
    }

    /// Throws a ``ValidationError`` when `found` is not the `expected` kind.
    private static func check(
        _ found: GQLQuery.OperationType, of name: String, against expected: GQLQuery.OperationType, option: String
    ) throws {
        guard found != expected else { return }
        throw ValidationError(
            "\(option)\(name) is a \(found.rawValue), not a \(expected.rawValue): send it with gql-cli "
                + command(for: found))
    }

    /// Prints one response object as JSON.
    func printed(_ result: GQLResult) throws -> String {
        try printed(json: result.jsonValue)
    }

    /// Prints a response object (with `"source"`, say) as JSON.
    func printed(json: GQLValue) throws -> String {
        try CLIError.guarding("cannot write the response as JSON") {
            try TerminalText.json(json, pretty: pretty)
        }
    }

    static func command(for kind: GQLQuery.OperationType) -> String {
        switch kind {
        case .query: "query"
        case .mutation: "mutate"
        case .subscription: "subscribe"
        }
    }
}

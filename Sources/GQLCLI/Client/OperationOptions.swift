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
            result = members
        }
        for pair in variablePairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--var '\(pair)' is not name=value")
            }
            let raw = String(pair[pair.index(after: equals)...])
            result[String(pair[..<equals])] = (try? GQLValue(json: raw)) ?? .string(raw)
        }
        return result
    }

    /// The text to send, checked against the command when it comes from a documents folder (where the kind is
    /// known): `query` sends queries, `mutate` mutations, `subscribe` subscriptions.
    func operationText(for kind: GQLQuery.OperationType) throws -> String {
        if let text { return text }
        let (directory, name) = (documents[0], documents[1])
        let registry = try DocumentsCommand.registry(directory)
        let document = try CLIError.guarding("cannot use \(name) of \(directory)") {
            try registry.document(named: name)
        }
        guard document.operationType == kind else {
            let verb = Self.command(for: document.operationType)
            throw CLIError(
                "\(name) is a \(document.operationType.rawValue), not a \(kind.rawValue): send it with gql-cli \(verb)")
        }
        return document.text
    }

    /// Prints one response object as JSON.
    func printed(_ result: GQLResult) throws -> String {
        try CLIError.guarding("cannot write the response as JSON") {
            try result.jsonValue.jsonString(pretty: pretty)
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

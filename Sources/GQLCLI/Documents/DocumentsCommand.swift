import ArgumentParser
import Foundation
import GQLNet

/// `gql-cli documents list|show DIR`: the operations of a folder of `.graphql` files, as GQLQuery loads them.
struct DocumentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "List or show the GraphQL operations in a folder of .graphql files.",
        discussion: """
            The folder is read recursively, as GQLQuery.load(directory:) reads it: duplicate, unknown or \
            malformed definitions are errors naming the file and line.
            Example: gql-cli documents show Queries CreateObject
            """,
        subcommands: [List.self, Show.self]
    )

    /// Loads every document under `directory` into a registry of its own.
    static func registry(_ directory: String) throws -> GQLQuery {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw CLIError("no folder at \(directory)")
        }
        let registry = GQLQuery()
        try CLIError.guarding("cannot load the documents in \(directory)") {
            try registry.load(directory: URL(fileURLWithPath: directory, isDirectory: true))
        }
        return registry
    }

    /// `gql-cli documents list DIR`: one operation a line, with its type and where it is defined.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the operations: name, type, fragments used, and the file and line of each.")

        @Argument(help: "The folder of .graphql files.")
        var directory: String

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func run() throws {
            let registry = try DocumentsCommand.registry(directory)
            let documents = try registry.operationNames.sorted().map { name in
                try CLIError.guarding("cannot resolve \(name)") { try registry.document(named: name) }
            }
            if json {
                let items: [GQLValue] = documents.map { document in
                    [
                        "name": .string(document.name), "type": .string(document.operationType.rawValue),
                        "fragments": .array(document.fragments.map { .string($0) }),
                        "file": .string(document.sourceName), "line": .int(Int64(document.line)),
                    ]
                }
                print(try CLIError.guarding("cannot write JSON") { try TerminalText.json(GQLValue.array(items)) })
                return
            }
            for document in documents {
                let fragments = document.fragments.isEmpty ? "" : " uses " + document.fragments.joined(separator: ", ")
                print(
                    "\(document.name)  \(document.operationType.rawValue)\(fragments)  (\(document.sourceName):\(document.line))"
                )
            }
        }
    }

    /// `gql-cli documents show DIR NAME`: the operation's text with exactly the fragments it uses.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an operation with exactly the fragments it uses, ready to send.")

        @Argument(help: "The folder of .graphql files.")
        var directory: String

        @Argument(help: "The operation's name.")
        var name: String

        @Flag(help: "Print the text escaped for a JSON string.")
        var escaped = false

        func run() throws {
            let registry = try DocumentsCommand.registry(directory)
            let document = try CLIError.guarding("cannot show \(name)") { try registry.document(named: name) }
            print(escaped ? document.escaped : document.text)
        }
    }
}

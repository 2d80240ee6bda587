import ArgumentParser
import Foundation
import GQLCache
import GQLCore

extension CacheCommand {
    /// `gql-cli cache write-loop PATH --count N`: writes the answer of ``query`` N times into a GQLCache in PATH,
    /// round r giving every one of its notes the title `round r`, and prints `wrote r` (unbuffered) once round r
    /// committed. Hidden from help.
    ///
    /// A crash-safety test kills it with SIGKILL mid-loop and checks the file: readable, and every note of one
    /// round, the last printed or the one after it (each answer is one transaction).
    struct WriteLoop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write-loop",
            abstract: "Write a 500-note answer into a cache file --count times, printing each committed round.",
            shouldDisplay: false
        )

        @Argument(help: "The cache's database file; created if missing.")
        var path: String

        @Option(help: "How many rounds to write.")
        var count = 1000

        static let query = "query { feed { id title author { id name } } }"
        static let notes = 500

        /// The answer of round `round`.
        static func answer(_ round: Int) -> GQLValue {
            let feed = (0..<notes).map { n -> GQLValue in
                [
                    "__typename": "Note", "id": .string("\(n)"), "title": .string("round \(round)"),
                    "author": ["__typename": "User", "id": .string("\(n % 7)"), "name": .string("round \(round)")],
                ]
            }
            return ["feed": .array(feed)]
        }

        func run() throws {
            let cache = try CLIError.guarding("cannot open a cache in \(path)") { try GQLCache(path: path) }
            for round in 1...max(count, 1) {
                try cache.write(Self.query, data: Self.answer(round))
                FileHandle.standardOutput.write(Data("wrote \(round)\n".utf8))
            }
        }
    }
}

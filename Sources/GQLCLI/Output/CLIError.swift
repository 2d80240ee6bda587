import GQLCore

/// A failure the command line reports: one readable message, printed by ArgumentParser as
/// `Error: <message>` on standard error, with exit code 1. The message may quote a server (an error body, a
/// GraphQL error): it is kept on one line with its control characters visible (``TerminalText``) and cut after
/// ``maximumLength`` characters; only the SQL of a database error follows on a line of its own.
struct CLIError: Error, CustomStringConvertible {
    var message: String

    /// The most characters a message shows (a server's error text can be megabytes long).
    static let maximumLength = 4096

    init(_ message: String) {
        self.message = TerminalText.escaped(message, limit: Self.maximumLength)
    }

    /// A failure of `action` (`"cannot open x.sqlite"`, `"query failed"`) caused by `error`.
    init(_ action: String, _ error: any Error) {
        if let error = error as? CLIError {
            self = error
            return
        }
        guard let error = error as? GQLError else {
            message = TerminalText.escaped("\(action): \(error)", limit: Self.maximumLength)
            return
        }
        var text = TerminalText.escaped("\(action): \(error.message)", limit: Self.maximumLength)
        if let sql = error.sql { text += "\n  SQL: \(sql)" }
        message = text
    }

    var description: String { message }

    /// Runs `body`, turning any error it throws into a ``CLIError`` that names `action`.
    static func guarding<T>(_ action: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CLIError(action(), error)
        }
    }
}

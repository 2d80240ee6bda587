import GQLCore

/// A failure the command line reports: one readable message, printed by ArgumentParser as
/// `Error: <message>` on standard error, with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    /// A failure of `action` (`"cannot open x.sqlite"`, `"query failed"`) caused by `error`.
    init(_ action: String, _ error: any Error) {
        if let error = error as? CLIError {
            self = error
            return
        }
        guard let error = error as? GQLError else {
            message = "\(action): \(error)"
            return
        }
        var text = "\(action): \(error.message)"
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

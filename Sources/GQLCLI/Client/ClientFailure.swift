import ArgumentParser
import Foundation
import GQLNet

/// How `query`, `mutate` and `subscribe` report failures: one readable line on standard error, with the
/// credentials of the command line (keys, secrets, header values) blanked out of it.
///
/// Exit status (``ClientHelp/exitStatus(subscribing:)`` documents it): 1 when the server could not be reached or
/// answered with something other than a GraphQL response (``CLIError``), 2 when it answered with GraphQL errors
/// (``graphQLErrors(_:in:secrets:)``), 64 for bad options (``badOptions(_:)``).
enum ClientFailure {
    /// The exit status of a response that carries GraphQL errors.
    static let graphQLErrorStatus: Int32 = 2

    /// Runs `body`, which checks options that only `run()` can (the operation's text, a documents folder): a
    /// ``ValidationError`` it throws is written as one line on standard error and becomes exit status 64, without
    /// the usage line ArgumentParser would add for a whole-tool error.
    static func badOptions<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ValidationError {
            warn("Error: \(error.message)")
            throw ExitCode.validationFailure
        }
    }

    /// A transport failure of `action` (`"the query failed"`) as a ``CLIError``.
    static func error(_ error: any Error, _ action: String, secrets: [String]) -> CLIError {
        let message: String
        switch error {
        case let error as CLIError:
            message = error.message
        case let error as GQLError where error.code == .http && [401, 403].contains(error.httpStatus):
            let reason = serverReason(error.message).map { ": \($0)" } ?? ""
            message =
                "\(action): the server refused the credentials (HTTP \(error.httpStatus ?? 0))\(reason); "
                + "check --auth (after gql-cli auth signin), --appsync-key, --hasura-secret or --header"
        case let error as GQLError where error.code == .unauthorized:
            message = "\(action): the server refused the credentials: \(error.message)"
        case let error as GQLError where error.code == .connection:
            message = "\(action): cannot connect: \(error.message)"
        case let error as GQLError where error.code == .timeout:
            message = "\(action): \(error.message) (see --timeout)"
        case let error as GQLError:
            message = "\(action): \(error.message)"
        case let error as GQLResult.Failure:
            message = "\(action): the server refused it: \(summary(error.errors, secrets: secrets))"
        default:
            message = "\(action): \(error)"
        }
        return CLIError(redacted(message, secrets: secrets))
    }

    /// The first GraphQL error message of the body an `.http` error quotes (`HTTP 401 from …: {"errors": …}`).
    static func serverReason(_ message: String) -> String? {
        guard let start = message.firstIndex(of: "{"), let body = try? GQLValue(json: String(message[start...])),
            let reason = body["errors"]?.arrayValue?.first?["message"]?.stringValue, !reason.isEmpty
        else { return nil }
        return reason
    }

    /// Writes the summary of a response's GraphQL errors on standard error and returns the exit code to throw.
    static func graphQLErrors(_ errors: [GQLResult.Error], in action: String, secrets: [String]) -> ExitCode {
        let count = errors.count == 1 ? "1 GraphQL error" : "\(errors.count) GraphQL errors"
        warn(
            redacted(
                "Error: the \(action) answered with \(count): \(summary(errors, secrets: secrets))", secrets: secrets))
        return ExitCode(graphQLErrorStatus)
    }

    /// How many GraphQL errors a summary quotes, and how many characters of each.
    static let summarizedErrors = 5
    static let summarizedErrorLength = 500

    /// The first ``summarizedErrors`` errors, each redacted, escaped and cut after ``summarizedErrorLength``
    /// characters, then how many more there were: a server answering thousands of errors prints one short line.
    static func summary(_ errors: [GQLResult.Error], secrets: [String]) -> String {
        var text = errors.prefix(summarizedErrors).map {
            TerminalText.escaped(redacted($0.description, secrets: secrets), limit: summarizedErrorLength)
        }.joined(separator: "; ")
        if errors.count > summarizedErrors { text += "; … and \(errors.count - summarizedErrors) more" }
        return text
    }

    /// `text` with every secret of at least three characters replaced by `<redacted>`.
    static func redacted(_ text: String, secrets: [String]) -> String {
        secrets.filter { $0.count >= 3 }.sorted { $0.count > $1.count }.reduce(text) {
            $0.replacingOccurrences(of: $1, with: "<redacted>")
        }
    }

    /// One line on standard error, its control characters made visible (``TerminalText``).
    static func warn(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.escaped(line) + "\n").utf8))
    }
}

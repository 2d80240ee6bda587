import ArgumentParser
import Foundation
import GQLCore
import GQLServices

/// `gql-cli push register|unregister|send`: OneSignal through GQLPush.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Register devices and users with OneSignal and send notifications to users.",
        discussion: """
            The app comes from --app-id and --rest-key or ONESIGNAL_APP_ID and ONESIGNAL_REST_API_KEY; \
            --api-url (or ONESIGNAL_API_URL) sends the requests to another server, such as a local stand-in.
            Example: gql-cli push send --chat c42 --user user-2 "Hello"
            """,
        subcommands: [Register.self, Unregister.self, Send.self, Inbox.self]
    )

    /// Runs `body` with the client of `options`, shut down afterwards; errors become one readable line.
    static func with<T>(_ options: PushOptions, _ action: String, _ body: (GQLPush) async throws -> T)
        async throws -> T
    {
        let push = try options.push()
        do {
            let result = try await body(push)
            try? await push.shutdown()
            return result
        } catch {
            try? await push.shutdown()
            throw CLIError(action, error)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a device by its push token, and a user to it; prints its subscription (or player) id.")
        @OptionGroup var push: PushOptions
        @Option(help: ArgumentHelp("The device's push token, in hex.", valueName: "hex")) var token: DeviceToken
        @Option(help: ArgumentHelp("The user id (external_user_id) to register to the device.", valueName: "id"))
        var user: String?

        func run() async throws {
            let player = try await PushCommand.with(push, "cannot register the device") { push in
                let player = try await push.token(token.data)
                if let user { try await push.register(user) }
                return player
            }
            print(TerminalText.escaped(player))
        }
    }

    struct Unregister: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take the user from a device (v1: external_user_id set to \"\"); prints its id afterwards.")
        @OptionGroup var push: PushOptions
        @Option(help: ArgumentHelp("The device's push token, in hex.", valueName: "hex")) var token: DeviceToken

        func run() async throws {
            let player = try await PushCommand.with(push, "cannot unregister the device") { push in
                let player = try await push.token(token.data)
                try await push.unregister()
                return push.playerId ?? player
            }
            print(TerminalText.escaped(player))
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a notification to users by their ids; prints OneSignal's answer as JSON.",
            discussion: """
                Exits 1 when the notification reached nobody; user ids without a subscription are listed in \
                invalidUserIds (and on standard error) while the others get it; recipients is null when \
                OneSignal's answer does not give it (today's API does not).
                """)
        @OptionGroup var push: PushOptions
        @Option(help: ArgumentHelp("The chat id, sent as data.chatId.", valueName: "id")) var chat: String
        @Option(name: .customLong("user"), help: ArgumentHelp("A user id to notify (repeatable).", valueName: "id"))
        var users: [String]
        @Argument(help: "The text of the notification.") var text: String

        func validate() throws {
            if users.isEmpty { throw ValidationError("give at least one --user") }
        }

        func run() async throws {
            let sent = try await PushCommand.with(push, "cannot send the notification") { push in
                try await push.send(chatId: chat, userIds: users, text: text)
            }
            let answer: GQLValue = [
                "id": .string(sent.id), "recipients": sent.recipients.map { .int(Int64($0)) } ?? .null,
                "invalidUserIds": .array(sent.invalidUserIds.map { .string($0) }),
            ]
            print(try TerminalText.json(answer))
            if !sent.invalidUserIds.isEmpty {
                FileHandle.standardError.write(
                    Data("no device for: \(TerminalText.escaped(sent.invalidUserIds.joined(separator: ", ")))\n".utf8))
            }
        }
    }

    struct Inbox: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the notifications a local OneSignal emulator accepted, oldest first, as JSON.",
            discussion: """
                Reads GET /_emulator/notifications of the emulator `gql-cli serve --push` runs (a real OneSignal \
                has no such list). Example: gql-cli push inbox --api-url http://127.0.0.1:4003 --user user-2
                """)
        @Option(help: "The emulator's URL (default: ONESIGNAL_API_URL).") var apiURL: String?
        @Option(name: .customLong("user"), help: ArgumentHelp("Only those that reached this user.", valueName: "id"))
        var user: String?
        @Option(help: "Only the last N.") var limit: Int?

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment["ONESIGNAL_API_URL"]
            guard let url = apiURL ?? environment, !url.isEmpty else {
                throw CLIError("no emulator URL: pass --api-url or set ONESIGNAL_API_URL")
            }
            var query: [String: String] = [:]
            if let user { query["external_id"] = user }
            if let limit { query["limit"] = String(limit) }
            let rest = GQLREST(baseURL: url)
            let answer: GQLValue
            do {
                answer = try await rest.invoke(.get, "_emulator/notifications", query: query)
                try? await rest.shutdown()
            } catch {
                try? await rest.shutdown()
                throw CLIError("cannot read the emulator's notifications", error)
            }
            print(try TerminalText.json(answer["notifications"] ?? .array([])))
        }
    }
}

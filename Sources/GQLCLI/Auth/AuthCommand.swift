import ArgumentParser
import Foundation
import GQLServices

/// `gql-cli auth signup|signin|signout|whoami|token|check-password|update-password`: an Auth0 user's session from
/// a shell, kept in a token file (0600) in gql-cli's data directory.
struct AuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Sign up, sign in and out of an Auth0 tenant and print the signed-in user's tokens.",
        discussion: """
            The tenant comes from --domain/--client-id or GQL_AUTH_DOMAIN/GQL_AUTH_CLIENT_ID; signin and signup \
            remember them (never the secret) beside the token file, so later commands need no flags. Passwords \
            come from --password-stdin, GQL_AUTH_PASSWORD or --password.
            Example: gql-cli auth signin --domain example.eu.auth0.com --client-id abc --email ann@example.com \
            --password-stdin < password.txt
            """,
        subcommands: [
            SignUp.self, SignIn.self, SignOut.self, WhoAmI.self, Token.self, CheckPassword.self, UpdatePassword.self,
        ]
    )

    /// Runs `body` with the client of `options`, shut down afterwards; errors become one readable line.
    static func with<T>(
        _ options: AuthOptions, _ action: String, _ body: (GQLAuth, AuthOptions.Tenant) async throws -> T
    ) async throws -> T {
        let (auth, tenant) = try options.auth()
        do {
            let result = try await body(auth, tenant)
            try? await auth.shutdown()
            return result
        } catch {
            try? await auth.shutdown()
            throw CLIError(action, error)
        }
    }

    /// Signs in (creating the user first when `creating`), remembers the tenant, and returns the user id.
    static func signIn(
        _ options: AuthOptions, email: String, password: PasswordOptions, creating: Bool
    ) async throws -> String {
        let password = try password.read()
        return try await with(options, "cannot sign \(creating ? "up" : "in") \(email)") { client, tenant in
            if creating {
                try await client.signUp(email: email, password: password)
            } else {
                try await client.signIn(email: email, password: password)
            }
            try options.remember(tenant)
            return client.userId() ?? ""
        }
    }

    struct SignUp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signup", abstract: "Create a user in the database connection, then sign in.")
        @OptionGroup var auth: AuthOptions
        @Option(help: "The new user's e-mail.") var email: String
        @OptionGroup var password: PasswordOptions

        func run() async throws {
            let userId = try await AuthCommand.signIn(auth, email: email, password: password, creating: true)
            print("signed up and in as \(email) (\(TerminalText.escaped(userId)))")
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signin", abstract: "Sign in with e-mail and password; the tokens go to the token file.")
        @OptionGroup var auth: AuthOptions
        @Option(help: "The user's e-mail.") var email: String
        @OptionGroup var password: PasswordOptions

        func run() async throws {
            let userId = try await AuthCommand.signIn(auth, email: email, password: password, creating: false)
            print("signed in as \(email) (\(TerminalText.escaped(userId)))")
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signout", abstract: "Revoke the refresh token and delete the token file.")
        @OptionGroup var auth: AuthOptions

        func run() async throws {
            let wasSignedIn = try await AuthCommand.with(auth, "cannot sign out") { client, _ in
                let signedIn = client.isSignedIn
                await client.signOut()
                return signedIn
            }
            print(wasSignedIn ? "signed out" : "nobody was signed in")
        }
    }

    struct WhoAmI: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "whoami", abstract: "Print the signed-in user's id and e-mail (exit 1 when signed out).")
        @OptionGroup var auth: AuthOptions

        func run() async throws {
            let line = try await AuthCommand.with(auth, "whoami") { client, _ -> String in
                guard let userId = client.userId() else { throw GQLError(.signedOut, "nobody is signed in") }
                return client.email().map { "\(userId) \($0)" } ?? userId
            }
            print(TerminalText.escaped(line))
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the access token, refreshed first when it is about to expire.")
        @OptionGroup var auth: AuthOptions
        @Flag(help: "Refresh it even if it is still valid.") var refresh = false
        @Flag(help: "Print the Authorization header value (Bearer …).") var header = false

        func run() async throws {
            let token = try await AuthCommand.with(auth, "no access token") { client, _ in
                try await client.accessToken(forceRefresh: refresh)
            }
            // A token from the tenant is printed on one line even if it holds control characters (which no valid
            // token does): pasted into a header, it cannot add another.
            print(TerminalText.escaped(header ? "Bearer \(token)" : token))
        }
    }

    struct CheckPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-password", abstract: "Check the signed-in user's password (exit 1 when wrong).")
        @OptionGroup var auth: AuthOptions
        @OptionGroup var password: PasswordOptions

        func run() async throws {
            let password = try password.read()
            try await AuthCommand.with(auth, "password check failed") { client, _ in
                try await client.checkPassword(password: password)
            }
            print("password ok")
        }
    }

    struct UpdatePassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update-password",
            abstract: "Set a new password (Management API with a client secret; otherwise Auth0's reset e-mail).")
        @OptionGroup var auth: AuthOptions
        @OptionGroup var password: PasswordOptions

        func run() async throws {
            let password = try password.read()
            let outcome = try await AuthCommand.with(auth, "cannot change the password") { client, _ in
                try await client.updatePassword(password: password)
            }
            print(outcome == .changed ? "password changed" : "Auth0 sent the reset e-mail")
        }
    }
}

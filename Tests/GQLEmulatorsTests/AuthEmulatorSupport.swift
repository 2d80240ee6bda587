import Foundation
import GQLCore
import GQLServices
import Testing

@testable import GQLEmulators

/// An Auth0 emulator started for one test (on a free port, its own temporary data folder unless given), with
/// GQLAuth clients and a raw REST client for it.
struct AuthEmulatorFixture {
    let emulator: GQLAuthEmulator
    let started: GQLStartedEmulator
    let rest: GQLREST

    static let password = "correct horse battery"

    /// A configuration on a free port, hashing at a low scrypt cost (the default takes tens of milliseconds per
    /// hash; the tests hash dozens of passwords).
    static func configuration(
        _ folder: GQLDataFolder? = nil, _ change: (inout GQLAuthEmulator.Configuration) -> Void = { _ in }
    ) -> GQLAuthEmulator.Configuration {
        var configuration = GQLAuthEmulator.Configuration()
        configuration.port = 0
        configuration.dataFolder = folder
        configuration.passwordHashCost = .init(n: 1 << 10, r: 8, p: 1)
        change(&configuration)
        return configuration
    }

    /// Runs `body` against a started emulator, stopped afterwards.
    static func with(
        _ folder: GQLDataFolder? = nil, configure change: (inout GQLAuthEmulator.Configuration) -> Void = { _ in },
        _ body: (AuthEmulatorFixture) async throws -> Void
    ) async throws {
        let emulator = try GQLAuthEmulator(configuration: configuration(folder, change))
        let started = try await emulator.start()
        let fixture = AuthEmulatorFixture(emulator: emulator, started: started, rest: GQLREST(baseURL: started.url))
        do {
            try await body(fixture)
        } catch {
            try? await fixture.rest.shutdown()
            await started.shutdown()
            throw error
        }
        try await fixture.rest.shutdown()
        await started.shutdown()
    }

    /// A GQLAuth client of the emulator (the application's secret when `secret`), refreshing `refreshMargin`
    /// seconds ahead of expiry.
    func auth(secret: Bool = false, refreshMargin: TimeInterval = 60) -> GQLAuth {
        var configuration = GQLAuth.Configuration()
        configuration.refreshMargin = refreshMargin
        return GQLAuth(
            domain: emulator.domain, clientId: emulator.configuration.clientId,
            clientSecret: secret ? emulator.configuration.clientSecret : nil, baseURL: started.url,
            configuration: configuration)
    }

    /// A user signed up and signed in on a fresh client.
    func signedIn(_ email: String = "ann@example.com", secret: Bool = false, refreshMargin: TimeInterval = 60)
        async throws -> GQLAuth
    {
        let auth = auth(secret: secret, refreshMargin: refreshMargin)
        try await auth.signUp(email: email, password: Self.password)
        return auth
    }

    /// `POST /oauth/token` with `fields` (the client id added), and the emulator's answer or refusal.
    func token(_ fields: [String: String]) async throws -> GQLValue {
        var form = fields
        form["client_id"] = form["client_id"] ?? emulator.configuration.clientId
        return try await rest.invoke(.post, "oauth/token", form: form)
    }

    /// The status and Auth0 error code of a request that must fail.
    func refusal(_ body: () async throws -> Void) async -> (status: Int?, code: String?) {
        do {
            try await body()
            return (nil, nil)
        } catch let error as GQLError {
            return (error.httpStatus, error.serviceCode)
        } catch {
            return (nil, "\(error)")
        }
    }
}

/// Expects `body` to throw a ``GQLError`` with `code`.
func expectError(
    _ code: GQLError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected GQLError.\(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as GQLError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected GQLError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

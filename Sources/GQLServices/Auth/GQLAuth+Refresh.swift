import Foundation
import GQLCore
import GQLNet

extension GQLAuth {
    /// The signed-in user's access token, refreshed first when it expires within `refreshMargin` seconds.
    ///
    /// ```swift
    /// let token = try await auth.accessToken()
    /// let fresh = try await auth.accessToken(forceRefresh: true)   // the API refused the last one
    /// ```
    /// Callers that ask while a refresh is under way wait for that refresh; none starts a second one.
    /// - Parameter forceRefresh: refresh even if the token looks valid (the API answered 401). When another
    ///   caller refreshed since this one read its token, that result is used instead of a second refresh.
    /// - Throws: ``GQLCore/GQLError`` `.signedOut` when nobody is signed in or Auth0 refused the refresh token (the
    ///   tokens are forgotten then); `.invalidToken` for a refreshed ID token that fails verification; network
    ///   errors (the tokens are kept: try again later).
    public func accessToken(forceRefresh: Bool = false) async throws -> String {
        let current = try currentTokens()
        if !forceRefresh, current.expiresAt.timeIntervalSince(configuration.clock()) > configuration.refreshMargin {
            return current.accessToken
        }
        return try await refresh(replacing: current).accessToken
    }

    /// The `Authorization` value for a request (`"Bearer <access token>"`), for ``GQLServer``'s authorization
    /// provider. When `rejected` is the value the API just refused, the token is refreshed once (shared with any
    /// other caller refused at the same time); nil when nobody is signed in.
    ///
    /// ```swift
    /// let value = try await auth.authorizationValue()                    // "Bearer eyJ…"
    /// let retry = try await auth.authorizationValue(rejected: value)     // after a 401: a refreshed token
    /// ```
    public func authorizationValue(rejected: String? = nil) async throws -> String? {
        guard isSignedIn else { return nil }
        if let rejected {
            let current = try currentTokens()
            if rejected == "Bearer " + current.accessToken || rejected == current.accessToken {
                return "Bearer " + (try await refresh(replacing: current).accessToken)
            }
        }
        return "Bearer " + (try await accessToken())
    }

    /// The provider ``GQLNet/GQLServer`` takes: `"Bearer <access token>"` for every request and connection, refreshed
    /// ahead of expiry, and refreshed once more when the server refuses the value it sent (a 401, 4401 …); nil when
    /// nobody is signed in.
    ///
    /// ```swift
    /// let server = GQLServer(HTTP: "https://api.example.com/graphql", authorization: auth.authorization)
    /// ```
    public var authorization: GQLServer.AuthorizationProvider {
        { [self] request in try await authorizationValue(rejected: request.isRetry ? request.rejected : nil) }
    }

    /// The tokens in memory, or the reason there are none.
    func currentTokens() throws -> Tokens {
        try state.withLock { state in
            if let tokens = state.tokens { return tokens }
            if let error = state.loadError { throw error }
            throw GQLError(.signedOut, "nobody is signed in")
        }
    }

    /// Replaces `old` by refreshed tokens: joins the refresh under way, or uses tokens another caller refreshed
    /// since `old` was read, or starts the one refresh.
    func refresh(replacing old: Tokens) async throws -> Tokens {
        let task = try state.withLock { state -> Task<Tokens, any Error> in
            if let running = state.refresh { return running }
            guard let current = state.tokens else { throw GQLError(.signedOut, "nobody is signed in") }
            if current.accessToken != old.accessToken { return Task { current } }
            let session = state.session
            let task = Task {
                defer { self.state.withLock { $0.refresh = nil } }
                return try await self.performRefresh(current, session: session)
            }
            state.refresh = task
            return task
        }
        return try await task.value
    }

    /// One refresh-token grant; the result is kept only if the session it refreshes is still the current one
    /// (a sign-out or a new sign-in during the request wins).
    private func performRefresh(_ old: Tokens, session: Int) async throws -> Tokens {
        guard let refreshToken = old.refreshToken else {
            forget(session: session)
            throw GQLError(.signedOut, "the access token expired and there is no refresh token (scope offline_access)")
        }
        let answer: TokenAnswer
        do {
            answer = try await tokenRequest(grant: "refresh_token", ["refresh_token": refreshToken], step: .refresh)
        } catch let error as GQLError where error.code == .signedOut {
            forget(session: session)
            throw error
        }
        var tokens = Tokens(
            accessToken: answer.accessToken, idToken: old.idToken, refreshToken: answer.refreshToken ?? refreshToken,
            expiresAt: answer.expiresAt, tokenType: answer.tokenType)
        var claims: GQLValues?
        if let idToken = answer.idToken {
            let verified = try await verifier.verify(idToken, now: configuration.clock())
            guard verified["sub"] == state.withLock({ $0.claims?["sub"] }) else {
                throw GQLError(.invalidToken, "JWT refused: the refreshed ID token names another user")
            }
            tokens.idToken = idToken
            claims = verified
        }
        try keep(tokens, claims: claims, ifSession: session)
        return tokens
    }
}

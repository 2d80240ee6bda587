import GQLCore

/// Turns Auth0's error answers into ``GQLCore/GQLError`` codes a caller can act on, keeping Auth0's own code,
/// description, HTTP status and request id.
enum Auth0Failure {
    /// What GQLAuth was doing, named in the message.
    enum Step: String {
        case signUp = "sign-up"
        case signIn = "sign-in"
        case refresh = "token refresh"
        case checkPassword = "password check"
        case updatePassword = "password change"
        case jwks = "key set (JWKS) download"
    }

    /// `error` in GQLAuth's terms; errors that are not Auth0 answers (network, timeouts) pass unchanged.
    static func map(_ error: any Error, _ step: Step) -> any Error {
        guard let error = error as? GQLError, error.code == .http else { return error }
        let code = error.serviceCode ?? ""
        let text = error.message
        let kind: GQLError.Code
        let reason: String
        switch code {
        case "invalid_grant" where step == .refresh:
            (kind, reason) = (.signedOut, "the session ended (Auth0 refused the refresh token); sign in again")
        case "invalid_grant" where text.localizedCaseInsensitiveContains("blocked"):
            (kind, reason) = (.blocked, "the user is blocked")
        case "invalid_grant":
            (kind, reason) = (.wrongCredentials, "wrong e-mail or password")
        case "user_exists", "username_exists", "invalid_signup":
            (kind, reason) = (.userExists, "a user with this e-mail may already exist")
        case "invalid_password", "password_strength_error", "password_dictionary_error", "password_no_user_info_error",
            "password_leaked":
            (kind, reason) = (.passwordTooWeak, "the password does not meet the connection's policy")
        case _ where text.contains("PasswordStrengthError") || text.contains("PasswordDictionaryError"):
            (kind, reason) = (.passwordTooWeak, "the password does not meet the connection's policy")
        case "too_many_attempts":
            (kind, reason) = (.tooManyAttempts, "too many attempts; Auth0 blocks them for a while")
        case _ where error.httpStatus == 429:
            (kind, reason) = (.tooManyAttempts, "too many requests; Auth0 asks to slow down")
        case "blocked_user":
            (kind, reason) = (.blocked, "the user is blocked")
        case "unauthorized" where text.localizedCaseInsensitiveContains("blocked"):
            (kind, reason) = (.blocked, "the user is blocked")
        default:
            return GQLError(
                .http, "Auth0 refused the \(step.rawValue): \(text)", operation: error.operation,
                httpStatus: error.httpStatus, serviceCode: error.serviceCode, requestId: error.requestId)
        }
        return GQLError(
            kind, "Auth0 refused the \(step.rawValue): \(reason) (\(text))", operation: error.operation,
            httpStatus: error.httpStatus, serviceCode: error.serviceCode, requestId: error.requestId)
    }
}

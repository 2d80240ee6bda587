import GQLCore
import HTTPTypes

/// A refusal in one of Auth0's error shapes: `/oauth/*` answers `{"error", "error_description"}` (RFC 6749 §5.2),
/// `/dbconnections/*` answers `{"name", "code", "description", "statusCode"}`, the Management API
/// `{"statusCode", "error", "message", "errorCode"}`.
struct Auth0Error: Error, Sendable {
    let status: HTTPResponse.Status
    let body: GQLValues

    init(status: HTTPResponse.Status, body: GQLValues) {
        self.status = status
        self.body = body
    }

    /// An `/oauth/*` error.
    static func oauth(_ status: HTTPResponse.Status, _ error: String, _ description: String) -> Auth0Error {
        Auth0Error(status: status, body: ["error": .string(error), "error_description": .string(description)])
    }

    /// A `/dbconnections/*` error.
    static func database(
        _ code: String, _ description: String, name: String = "BadRequestError",
        status: HTTPResponse.Status = .badRequest
    ) -> Auth0Error {
        Auth0Error(
            status: status,
            body: [
                "name": .string(name), "code": .string(code), "description": .string(description),
                "statusCode": .int(Int64(status.code)),
            ])
    }

    /// A Management API (`/api/v2/*`) error.
    static func management(_ status: HTTPResponse.Status, _ message: String, errorCode: String) -> Auth0Error {
        Auth0Error(
            status: status,
            body: [
                "statusCode": .int(Int64(status.code)), "error": .string(status.reasonPhrase),
                "message": .string(message), "errorCode": .string(errorCode),
            ])
    }

    static let unauthorizedClient = oauth(.unauthorized, "access_denied", "Unauthorized")
    static let wrongCredentials = oauth(.forbidden, "invalid_grant", "Wrong email or password.")
    static let badRefreshToken = oauth(.forbidden, "invalid_grant", "Unknown or invalid refresh token.")
}

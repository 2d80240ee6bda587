import Foundation
import GQLCore
import GQLHTTP

extension GQLAuth {
    /// What `/oauth/token` answered, checked for the fields every grant returns.
    struct TokenAnswer: Sendable {
        var accessToken: String
        var idToken: String?
        var refreshToken: String?
        var expiresAt: Date
        var tokenType: String
    }

    /// `POST /oauth/token` with `grant` and `fields` (plus the client id and, when there is one, the secret), form
    /// encoded. Auth0's refusals become ``Auth0Failure`` codes; an answer that is not the expected JSON is an
    /// error that never quotes it (it may hold tokens).
    func tokenRequest(grant: String, _ fields: [String: String], step: Auth0Failure.Step) async throws -> TokenAnswer {
        var form = fields
        form["grant_type"] = grant
        form["client_id"] = clientId
        if let clientSecret { form["client_secret"] = clientSecret }
        let sentAt = configuration.clock()
        let answer: GQLValue
        do {
            answer = try await rest.invoke(.post, "oauth/token", form: form)
        } catch let error as GQLError where error.code == .invalidResponse {
            throw GQLError(
                .invalidResponse, "Auth0's answer to the \(step.rawValue) is not JSON", operation: "oauth/token")
        } catch {
            throw Auth0Failure.map(error, step)
        }
        guard case .string(let accessToken)? = answer["access_token"], !accessToken.isEmpty else {
            throw GQLError(
                .invalidResponse, "Auth0's answer to the \(step.rawValue) has no access_token", operation: "oauth/token"
            )
        }
        let lifetime = answer["expires_in"]?.doubleValue ?? answer["expires_in"]?.stringValue.flatMap(Double.init)
        guard let lifetime, lifetime.isFinite, lifetime > 0 else {
            throw GQLError(
                .invalidResponse, "Auth0's answer to the \(step.rawValue) has no positive expires_in",
                operation: "oauth/token")
        }
        let token = TokenAnswer(
            accessToken: accessToken, idToken: answer["id_token"]?.stringValue,
            refreshToken: answer["refresh_token"]?.stringValue, expiresAt: sentAt.addingTimeInterval(lifetime),
            tokenType: answer["token_type"]?.stringValue ?? "Bearer")
        for (field, value) in [
            ("access_token", token.accessToken), ("id_token", token.idToken), ("refresh_token", token.refreshToken),
            ("token_type", token.tokenType),
        ] {
            guard let value, !Self.isHeaderSafe(value) else { continue }
            // Never stored, never sent, never printed: a CR LF in a value that goes into `Authorization: Bearer …`
            // (or is printed as one by `gql-cli auth token --header`) would start another header.
            throw GQLError(
                .invalidResponse,
                "Auth0's answer to the \(step.rawValue) has a \(field) with a control character (CR, LF …): refused",
                operation: "oauth/token")
        }
        return token
    }

    /// Whether a token can go into a header and onto a terminal as it is: no control character (C0, DEL, C1),
    /// tab included.
    static func isHeaderSafe(_ value: String) -> Bool {
        HeaderCheck.isFieldValue(value)
            && value.unicodeScalars.allSatisfy { $0 != "\t" && !(0x80...0x9F).contains($0.value) }
    }
}

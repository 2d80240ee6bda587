import Foundation
import GQLCore
import HTTPTypes
import Hummingbird

/// Maps HTTP onto the ``PushApp``: today's Users, Subscriptions and Notifications paths, v1's players and
/// notifications, and the emulator's own `GET /_emulator/notifications` (the inbox; `?external_id=` keeps those that
/// reached a user, `?limit=` the last ones). Bodies are JSON, at most 1 MiB, read within the limits' body timeout;
/// refusals are in OneSignal's shape (v1's under `/api/v1`).
struct PushRoutes: Sendable {
    let app: PushApp
    let bodyTimeout: Duration

    static let maxBodyBytes = 1 << 20

    func respond(_ request: Request) async -> Response {
        let parts = request.uri.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        let legacy = parts.first == "api" && parts.dropFirst().first == "v1"
        do {
            return try await route(request, parts, legacy: legacy)
        } catch let error as OneSignalError {
            return EmulatorJSON.response(error.status, error.body(legacy: legacy))
        } catch {
            let failure = OneSignalError(
                "The emulator failed: \(error)", status: .internalServerError, code: "internal")
            return EmulatorJSON.response(failure.status, failure.body(legacy: legacy))
        }
    }

    private func route(_ request: Request, _ parts: [String], legacy: Bool) async throws -> Response {
        let method = request.method
        let authorization = request.headers[.authorization]
        if legacy {
            let rest = Array(parts.dropFirst(2))
            switch (method, rest.count, rest.first) {
            case (.post, 1, "players"?):
                return EmulatorJSON.response(.ok, try app.addPlayer(try await body(request)))
            case (.put, 2, "players"?):
                return EmulatorJSON.response(.ok, try app.editPlayer(rest[1], body: try await body(request)))
            case (.post, 1, "notifications"?):
                return EmulatorJSON.response(
                    .ok, try app.notifyLegacy(body: try await body(request), authorization: authorization))
            default:
                throw OneSignalError.notFound("No route for \(method) \(request.uri.path)")
            }
        }
        if parts == ["_emulator", "notifications"], method == .get {
            let query = request.uri.queryParameters
            let limit = query["limit"].flatMap { Int(String($0)) }
            let notifications = try app.inbox.notifications(
                externalId: query["external_id"].map(String.init), limit: limit)
            return EmulatorJSON.response(.ok, ["notifications": .array(notifications)])
        }
        if parts == ["notifications"], method == .post {
            let caller = try app.caller(authorization: authorization)
            let channel = request.uri.queryParameters["c"].map(String.init)
            return EmulatorJSON.response(
                .ok, try app.notify(channelQuery: channel, body: try await body(request), caller: caller))
        }
        guard parts.count >= 3, parts[0] == "apps" else {
            throw OneSignalError.notFound("No route for \(method) \(request.uri.path)")
        }
        guard parts[1] == app.configuration.appId else {
            throw OneSignalError.notFound("App not found", code: "app-not-found")
        }
        let rest = Array(parts.dropFirst(2))
        let caller = try app.caller(authorization: authorization)
        switch (method, rest.count) {
        case (.post, 1) where rest[0] == "users":
            let (status, user) = try app.createUser(try await body(request), caller: caller)
            return EmulatorJSON.response(HTTPResponse.Status(code: status), user)
        case (.get, 4) where rest[0] == "users" && rest[1] == "by":
            return EmulatorJSON.response(.ok, try app.viewUser(label: rest[2], id: rest[3]))
        case (.post, 5) where rest[0] == "users" && rest[1] == "by" && rest[4] == "subscriptions":
            let (status, subscription) = try app.addSubscription(
                label: rest[2], alias: rest[3], body: try await body(request), caller: caller)
            return EmulatorJSON.response(HTTPResponse.Status(code: status), subscription)
        case (.patch, 2) where rest[0] == "subscriptions":
            try app.updateSubscription(rest[1], body: try await body(request))
            return EmulatorJSON.response(.accepted, [:])
        case (.delete, 2) where rest[0] == "subscriptions":
            try app.deleteSubscription(rest[1])
            return EmulatorJSON.response(.accepted, [:])
        case (.patch, 3) where rest[0] == "subscriptions" && rest[2] == "owner":
            return EmulatorJSON.response(
                .ok, try app.transferSubscription(rest[1], body: try await body(request), caller: caller))
        default:
            throw OneSignalError.notFound("No route for \(method) \(request.uri.path)")
        }
    }

    /// The JSON object body (an empty body is an empty object).
    private func body(_ request: Request) async throws -> GQLValues {
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/json") {
            throw OneSignalError("Content-Type must be application/json")
        }
        do throws(EmulatorJSON.BodyFailure) {
            let bytes = try await EmulatorJSON.body(request, limit: Self.maxBodyBytes, timeout: bodyTimeout)
            return try EmulatorJSON.fields(bytes, contentType: "application/json")
        } catch {
            switch error {
            case .tooLarge:
                throw OneSignalError("The request body is too large (at most 1 MiB)", status: .contentTooLarge)
            case .timedOut: throw OneSignalError("The request body did not arrive in time", status: .requestTimeout)
            case .unreadable: throw OneSignalError("The request body could not be read")
            case .malformed: throw OneSignalError("Body is not valid JSON")
            }
        }
    }
}

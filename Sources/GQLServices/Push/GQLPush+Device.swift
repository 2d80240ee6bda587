import Foundation
import GQLCore

/// This device: its push subscription (today's API) or player (v1), and the user it belongs to.
extension GQLPush {
    /// Registers this device with its push token and returns its id (the push subscription id with an App API key,
    /// the player id with a legacy one); a user id given to ``register(_:identityToken:)`` before goes with it.
    ///
    /// With an App API key: `POST /apps/{app_id}/users` with `subscriptions: [{type: "iOSPush", token, enabled}]`
    /// (and the user's `identity` when one is known). With a legacy key: `POST /api/v1/players`.
    ///
    /// ```swift
    /// let subscriptionId = try await push.token(deviceToken)
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty token, `.http` with OneSignal's errors,
    ///   `.invalidResponse` for an answer without the device's id, and the transport errors.
    @discardableResult
    public func token(_ deviceToken: Data) async throws -> String {
        try await startRegistration(deviceToken).value
    }

    /// Starts registering the device now (so a ``register(_:identityToken:)`` called next waits for it) and
    /// returns the task.
    func startRegistration(_ deviceToken: Data) throws -> Task<String, any Error> {
        guard !deviceToken.isEmpty else {
            throw GQLError(.invalidArgument, "the device token is empty", operation: "token")
        }
        let identifier = Self.hex(deviceToken)
        return state.withLock { state in
            state.registrations += 1
            state.pushToken = identifier
            let serial = state.registrations
            let (userId, identityToken) = (state.userId, state.identityToken)
            let task = Task {
                let result: Result<String, any Error>
                do {
                    result = .success(
                        try await self.addDevice(identifier: identifier, userId: userId, identityToken: identityToken))
                } catch {
                    result = .failure(error)
                }
                self.state.withLock { state in
                    if case .success(let device) = result { state.deviceId = device }
                    if state.registrations == serial { state.registration = nil }
                }
                return try result.get()
            }
            state.registration = task
            return task
        }
    }

    /// Registers the device to `userId` (OneSignal's external id).
    ///
    /// With an App API key: `POST /apps/{app_id}/users` with `identity: {external_id}` and this device's push
    /// subscription, which OneSignal moves to that user (creating the user if it is new). With identity verification
    /// on in the OneSignal app, give the `identityToken` the app's server minted for this user
    /// (``identityToken(appId:externalId:subscriptions:privateKeyPEM:lifetime:now:)``): the call then carries
    /// `Authorization: Bearer <token>` in place of the REST API key. With a legacy key: `PUT /api/v1/players/{id}`
    /// with `external_user_id` and its `external_user_id_auth_hash`, always (see <doc:Push>).
    ///
    /// Called before the device has an id, it waits for the registration in flight, or keeps the user id for
    /// ``token(_:)`` to send.
    ///
    /// ```swift
    /// try await push.register(auth.userId() ?? "", identityToken: tokenFromMyServer)
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty user id, `.http` with OneSignal's errors
    ///   (a refused identity token or hash …), and the transport errors.
    public func register(_ userId: String, identityToken: String? = nil) async throws {
        guard !userId.isEmpty else {
            throw GQLError(
                .invalidArgument, "the user id is empty; use unregister() to remove it", operation: "register")
        }
        guard let device = try await currentDevice(keeping: userId, identityToken: identityToken) else { return }
        let moved = try await assignUser(device, userId: userId, identityToken: identityToken)
        state.withLock {
            $0.userId = userId
            $0.deviceId = moved
        }
    }

    /// Takes this device from its user, so it no longer receives that user's notifications; it stays registered.
    ///
    /// With an App API key, a subscription always belongs to some user (OneSignal's SDK moves it to a new anonymous
    /// one on logout), so GQLPush deletes the subscription (`DELETE /apps/{app_id}/subscriptions/{id}`) and
    /// registers the token again to a new anonymous user, which gives the device a new ``subscriptionId``. A
    /// subscription OneSignal no longer has (404) counts as deleted. Once it is deleted the device has no
    /// ``subscriptionId`` and no ``userId``; if registering it again fails, `unregister()` throws and the next
    /// ``token(_:)`` registers it anew. With a legacy key: `PUT /api/v1/players/{id}` with `external_user_id: ""`.
    ///
    /// ```swift
    /// try await push.unregister()
    /// ```
    public func unregister() async throws {
        guard let device = try await currentDevice(keeping: nil, identityToken: nil) else { return }
        let kept = try await removeUser(device)
        state.withLock {
            $0.userId = nil
            $0.identityToken = nil
            $0.deviceId = kept
        }
    }

    // MARK: - Per API

    /// The device id, after the registration in flight; `nil` (with `userId` kept for ``token(_:)``) when the
    /// device is not registered yet.
    private func currentDevice(keeping userId: String?, identityToken: String?) async throws -> String? {
        let (device, pending) = state.withLock { state in
            if state.deviceId == nil, state.registration == nil {
                state.userId = userId
                state.identityToken = identityToken
            }
            return (state.deviceId, state.registration)
        }
        if let device { return device }
        guard let pending else { return nil }
        return try await pending.value
    }

    private func addDevice(identifier: String, userId: String?, identityToken: String?) async throws -> String {
        guard keyKind == .app else { return try await addPlayer(identifier: identifier, userId: userId) }
        return try await upsertDevice(identifier: identifier, userId: userId, identityToken: identityToken)
    }

    /// Assigns the device to `userId` and returns its id (unchanged: a moved subscription keeps its id).
    private func assignUser(_ device: String, userId: String, identityToken: String?) async throws -> String {
        guard keyKind == .app else {
            try await editPlayer(device, externalUserId: userId, operation: "register")
            return device
        }
        guard let token = state.withLock({ $0.pushToken }) else {
            // Known by its id alone (from an earlier run): OneSignal's transfer moves it by id.
            try await transferSubscription(device, toExternalId: userId, identityToken: identityToken)
            return device
        }
        return try await upsertDevice(identifier: token, userId: userId, identityToken: identityToken)
    }

    /// Takes the device from its user and returns its id afterwards.
    private func removeUser(_ device: String) async throws -> String? {
        guard keyKind == .app else {
            try await editPlayer(device, externalUserId: "", operation: "unregister")
            return device
        }
        do {
            try await deleteSubscription(id: device)
        } catch let error as GQLError where error.httpStatus == 404 {
            // Already gone (deleted before, from a server or an earlier try): what the delete was for.
        }
        // The subscription is gone: forget it and its user before making the new one, so a failure below leaves
        // no deleted id behind for the next call to delete again.
        let token = state.withLock { state in
            if state.deviceId == device {
                state.deviceId = nil
                state.userId = nil
                state.identityToken = nil
            }
            return state.pushToken
        }
        guard let token else { return nil }
        return try await upsertDevice(identifier: token, userId: nil, identityToken: nil)
    }

    /// `POST /apps/{app_id}/users` with this device's push subscription (and `userId` as the external id); the
    /// subscription's id from the answer.
    private func upsertDevice(identifier: String, userId: String?, identityToken: String?) async throws -> String {
        let device = Subscription(
            kind: deviceType.subscriptionType, token: identifier, enabled: true, testType: sandbox ? 1 : nil)
        let user = try await createUser(
            externalId: userId, aliases: [:], subscriptions: [device],
            properties: [
                "language": .string(Locale.current.language.languageCode?.identifier ?? "en"),
                "timezone_id": .string(TimeZone.current.identifier),
            ],
            identityToken: identityToken, operation: userId == nil ? "token" : "register")
        guard let id = user.subscriptions.first(where: { $0.kind == device.kind && $0.token == identifier })?.id,
            !id.isEmpty
        else {
            throw GQLError(
                .invalidResponse, "OneSignal answered without the device's subscription id", operation: "token")
        }
        return id
    }
}

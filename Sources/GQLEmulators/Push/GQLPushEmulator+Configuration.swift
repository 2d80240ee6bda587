import Foundation

extension GQLPushEmulator {
    /// Where the OneSignal emulator listens, the app it serves, and whether it checks identities.
    ///
    /// ```swift
    /// var configuration = GQLPushEmulator.Configuration()
    /// configuration.port = 0                                               // any free port
    /// configuration.identityVerificationKey = try key.publicKeyPEM()       // ES256 identity tokens required
    /// ```
    public struct Configuration: Sendable {
        /// The address to bind; meant for loopback. Default `127.0.0.1`.
        public var host = "127.0.0.1"
        /// The port; 0 picks a free one. Default 4003.
        public var port = 4003
        /// The OneSignal app id. Default ``GQLEmulatorCredentials/pushAppId``.
        public var appId = GQLEmulatorCredentials().pushAppId
        /// The REST API key: `Authorization: Key <key>` for today's API, `Authorization: Basic <key>` for v1's.
        /// Default ``GQLEmulatorCredentials/pushRestKey``.
        public var restKey = GQLEmulatorCredentials().pushRestKey
        /// Identity verification for today's API: the PEM text of the app's ES256 public key (`BEGIN PUBLIC
        /// KEY`). When set, logging a user in (an `external_id`), adding an email or SMS subscription and moving a
        /// subscription need the REST API key or `Authorization: Bearer <identity JWT>` signed by the matching
        /// private key. `nil`: off.
        public var identityVerificationKey: String?
        /// Identity verification for v1: an `external_user_id` sent to `/api/v1/players` needs
        /// `external_user_id_auth_hash`, HMAC-SHA256 of it under the REST API key. Default off.
        public var legacyIdentityVerification = false
        /// Where users, subscriptions and the notifications sent are kept; `nil`: a fresh temporary folder.
        public var dataFolder: GQLDataFolder?
        /// The timeouts and header limits of every connection.
        public var limits = GQLEmulatorLimits()
        /// The time notifications are stamped with and identity tokens checked at. Default: the system clock.
        public var clock: @Sendable () -> Date = Date.init

        public init() {}
    }
}

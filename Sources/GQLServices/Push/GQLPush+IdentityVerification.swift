import Foundation
import GQLCore
import GQLCrypto

/// Identity verification as OneSignal documents it today
/// (<https://documentation.onesignal.com/docs/identity-verification>):
/// the app's server, after signing the user in, mints a JWT for that user with the OneSignal app's
/// identity-verification private key (Settings > Keys & IDs > Identity Verification); the device passes it to
/// OneSignal, which checks it with the public half before it lets the device log in as the user, add email or SMS
/// subscriptions or change the user's aliases.
extension GQLPush {
    /// The longest lifetime ``identityToken(appId:externalId:subscriptions:privateKeyPEM:lifetime:now:)`` accepts:
    /// one year (365 days).
    public static let maxIdentityTokenLifetime: Duration = .seconds(365 * 24 * 3600)

    /// 10000-01-01T00:00:00Z in seconds since 1970: `now` must be before it.
    private static let latestIdentityTokenTime: TimeInterval = 253_402_300_800

    /// Mints OneSignal's identity-verification token for the user `externalId`: a JWT signed with ES256 under the
    /// app's identity-verification private key, with the claims OneSignal names: `iss` (the app id), `exp`,
    /// `identity: {"external_id": …}`, and `subscriptions` (`[{type, token}]`) when email or SMS subscriptions are
    /// to be added with it.
    ///
    /// This runs on the app's **server**: the private key must never ship in an app. The device hands the token
    /// to ``register(_:identityToken:)``.
    ///
    /// ```swift
    /// // On the server, once the user is signed in:
    /// let token = try GQLPush.identityToken(
    ///     appId: appId, externalId: user.id, privateKeyPEM: env["ONESIGNAL_IDENTITY_VERIFICATION_KEY"] ?? "")
    /// ```
    /// - Parameters:
    ///   - lifetime: how long OneSignal accepts the token: more than zero, at most one year
    ///     (``maxIdentityTokenLifetime``). Default one hour.
    ///   - now: the clock's time, for `exp`: a time between 1970 and the end of year 9999.
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty app id or external id, a lifetime that is
    ///   not positive or is longer than a year, or a `now` outside 1970…9999; `.crypto` when the PEM text holds no
    ///   P-256 private key or an encrypted one (the text is never quoted).
    public static func identityToken(
        appId: String, externalId: String, subscriptions: [Subscription] = [], privateKeyPEM: String,
        lifetime: Duration = .seconds(3600), now: Date = Date()
    ) throws -> String {
        guard !appId.isEmpty, !externalId.isEmpty, lifetime > .zero else {
            throw GQLError(
                .invalidArgument, "an identity token needs an app id, an external id and a positive lifetime",
                operation: "identityToken")
        }
        guard lifetime <= maxIdentityTokenLifetime else {
            throw GQLError(
                .invalidArgument, "an identity token's lifetime is at most one year", operation: "identityToken")
        }
        let seconds = now.timeIntervalSince1970
        guard seconds.isFinite, seconds >= 0, seconds < latestIdentityTokenTime else {
            throw GQLError(
                .invalidArgument, "the time for an identity token's exp is not between 1970 and the end of 9999",
                operation: "identityToken")
        }
        let key = try P256PrivateKey(pem: privateKeyPEM)
        var claims: GQLValues = [
            "iss": .string(appId),
            "exp": .int(Int64(now.timeIntervalSince1970) + lifetime.components.seconds),
            "identity": ["external_id": .string(externalId)],
        ]
        if !subscriptions.isEmpty {
            claims["subscriptions"] = .array(
                subscriptions.map { .object(["type": .string($0.kind.rawValue), "token": .string($0.token)]) })
        }
        return try JWTSigner.es256(claims, key: key)
    }
}

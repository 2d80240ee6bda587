import GQLCrypto

/// The credentials the emulators accept: the S3 access key pair, the Auth0 application's client id and secret, the
/// OneSignal app id and REST API key. The defaults are fixed and public (meant for 127.0.0.1 only), so a script
/// can use them without reading anything; `gql-cli serve` prints them and `--endpoints-file` writes them.
///
/// ```swift
/// var credentials = GQLEmulatorCredentials()
/// credentials.storageSecretKey = "my-local-secret"
/// ```
///
/// Its `description` names which credentials are set, never their values.
public struct GQLEmulatorCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The S3 access key id (`AWS_ACCESS_KEY_ID`). Default `GQLLOCALACCESSKEY000`.
    public var storageAccessKey = "GQLLOCALACCESSKEY000"
    /// The S3 secret access key (`AWS_SECRET_ACCESS_KEY`). Default `gql-local-storage-secret-key`.
    public var storageSecretKey = "gql-local-storage-secret-key"
    /// The Auth0 application's client id. Default `gql-local-client`.
    public var authClientId = "gql-local-client"
    /// The Auth0 application's client secret. Default `gql-local-client-secret`.
    public var authClientSecret = "gql-local-client-secret"
    /// The OneSignal app id (a UUID). Default `00000000-0000-4000-8000-000000000001`.
    public var pushAppId = "00000000-0000-4000-8000-000000000001"
    /// The OneSignal REST API key (`Authorization: Key …`, and `Basic …` for v1). Default
    /// `os_v2_app_gqllocalrestkey`: in the form of today's App API keys, so ``GQLPush`` speaks today's API with it.
    public var pushRestKey = "os_v2_app_gqllocalrestkey"

    public init() {}

    public var description: String {
        "GQLEmulatorCredentials(storageAccessKey: \(storageAccessKey), authClientId: \(authClientId), "
            + "pushAppId: \(pushAppId), secrets: redacted)"
    }

    /// Whether `presented` is `expected`, in time that does not depend on where they differ.
    package static func same(_ presented: String, _ expected: String) -> Bool {
        Bytes.constantTimeEquals(Array(presented.utf8), Array(expected.utf8))
    }
}

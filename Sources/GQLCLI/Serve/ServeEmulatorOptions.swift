import ArgumentParser
import Foundation
import GQLDevServer
import GQLEmulators

/// `gql-cli serve`'s local emulators of the services GQLServices talks to, beside the GraphQL API: which run, on
/// which ports, with which credentials, and the folder their state is kept in.
struct ServeEmulatorOptions: ParsableArguments {
    private static let defaults = GQLEmulatorCredentials()

    @Flag(help: "Run every emulator (storage, auth, push) beside the GraphQL API.")
    var all = false

    @Flag(help: "Run the S3-compatible storage emulator.")
    var storage = false

    @Flag(help: "Run the Auth0-compatible auth emulator.")
    var auth = false

    @Flag(help: "Run the OneSignal-compatible push emulator.")
    var push = false

    @Option(help: ArgumentHelp("The storage emulator's port; 0 picks a free one.", valueName: "port"))
    var storagePort = GQLStorageEmulator.Configuration().port

    @Option(help: ArgumentHelp("The auth emulator's port; 0 picks a free one.", valueName: "port"))
    var authPort = GQLAuthEmulator.Configuration().port

    @Option(help: ArgumentHelp("The push emulator's port; 0 picks a free one.", valueName: "port"))
    var pushPort = GQLPushEmulator.Configuration().port

    @Option(help: ArgumentHelp("The S3 access key id the storage emulator accepts.", valueName: "key"))
    var storageAccessKey = defaults.storageAccessKey

    @Option(help: ArgumentHelp("The S3 secret access key the storage emulator accepts.", valueName: "secret"))
    var storageSecretKey = defaults.storageSecretKey

    @Option(
        name: .customLong("storage-bucket"),
        help: ArgumentHelp(
            "A bucket the storage emulator creates at start when missing (repeatable).", valueName: "name"))
    var storageBuckets: [String] = []

    @Option(
        help: ArgumentHelp("The Auth0 application's client id the auth emulator issues tokens to.", valueName: "id"))
    var authClientId = defaults.authClientId

    @Option(help: ArgumentHelp("The Auth0 application's client secret.", valueName: "secret"))
    var authClientSecret = defaults.authClientSecret

    @Option(help: ArgumentHelp("The OneSignal app id the push emulator accepts.", valueName: "id"))
    var pushAppId = defaults.pushAppId

    @Option(help: ArgumentHelp("The OneSignal REST API key the push emulator accepts.", valueName: "key"))
    var pushRestKey = defaults.pushRestKey

    @Option(
        help: ArgumentHelp(
            "The folder every emulator and the GraphQL API keep their state in (created if missing). Default: a "
                + "fresh temporary folder.", valueName: "dir"))
    var data: String?

    @Option(
        help: ArgumentHelp(
            "Write one JSON object with every endpoint and credential to this file once everything listens.",
            valueName: "file"))
    var endpointsFile: String?

    /// Whether any emulator or suite option was given: `serve` then runs the suite, not the GraphQL API alone.
    var isSuite: Bool { all || storage || auth || push || data != nil || endpointsFile != nil }

    func validate() throws {
        for (name, port) in [("--storage-port", storagePort), ("--auth-port", authPort), ("--push-port", pushPort)]
        where !(0...65535).contains(port) {
            throw ValidationError("\(name) must be from 0 to 65535")
        }
        for (name, value) in [
            ("--storage-access-key", storageAccessKey), ("--storage-secret-key", storageSecretKey),
            ("--auth-client-id", authClientId), ("--auth-client-secret", authClientSecret),
            ("--push-app-id", pushAppId), ("--push-rest-key", pushRestKey),
        ] where value.isEmpty {
            throw ValidationError("\(name) must not be empty")
        }
    }

    /// The suite's configuration around the GraphQL API's.
    func suiteConfiguration(graphQL: GQLDevServer.Configuration, host: String) throws -> GQLEmulatorSuite.Configuration
    {
        var configuration = GQLEmulatorSuite.Configuration()
        configuration.dataFolder = try data.map { try GQLDataFolder(path: $0) }
        configuration.graphQL = graphQL
        if all || storage {
            var storage = GQLStorageEmulator.Configuration()
            storage.host = host
            storage.port = storagePort
            storage.accessKey = storageAccessKey
            storage.secretKey = storageSecretKey
            storage.buckets = storageBuckets
            configuration.storage = storage
        }
        if all || auth {
            var auth = GQLAuthEmulator.Configuration()
            auth.host = host
            auth.port = authPort
            auth.clientId = authClientId
            auth.clientSecret = authClientSecret
            configuration.auth = auth
        }
        if all || push {
            var push = GQLPushEmulator.Configuration()
            push.host = host
            push.port = pushPort
            push.appId = pushAppId
            push.restKey = pushRestKey
            configuration.push = push
        }
        return configuration
    }
}

import ArgumentParser
import Foundation
import GQLServices

/// Which OneSignal app `gql-cli push` talks to: flags first, then `ONESIGNAL_APP_ID`, `ONESIGNAL_REST_API_KEY` and
/// `ONESIGNAL_API_URL`.
struct PushOptions: ParsableArguments {
    @Option(help: "The OneSignal app id (default: ONESIGNAL_APP_ID).")
    var appId: String?

    @Option(help: "The app's REST API key (default: ONESIGNAL_REST_API_KEY; prefer the variable, flags show in ps).")
    var restKey: String?

    @Option(
        help: """
            OneSignal's API URL, e.g. a local stand-in (default: ONESIGNAL_API_URL, else https://api.onesignal.com \
            for an App API key, https://onesignal.com for a legacy one).
            """)
    var apiURL: String?

    @Option(
        help: """
            The REST API key's kind: app (Authorization: Key, today's API) or legacy (Authorization: Basic, the v1 \
            API). Default: by its form (os_v2_… is app).
            """)
    var keyKind: GQLPush.KeyKind?

    @Flag(help: ArgumentHelp("Accepted for older scripts: the v1 identity hash is always sent.", visibility: .hidden))
    var identityVerification = false

    /// The client these options describe.
    func push(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GQLPush {
        func value(_ flag: String?, _ name: String) -> String? {
            if let flag, !flag.isEmpty { return flag }
            return environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let appId = value(appId, "ONESIGNAL_APP_ID") else {
            throw CLIError("no app id: set ONESIGNAL_APP_ID or pass --app-id")
        }
        guard let restKey = value(restKey, "ONESIGNAL_REST_API_KEY") else {
            throw CLIError("no REST API key: set ONESIGNAL_REST_API_KEY or pass --rest-key")
        }
        guard !restKey.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw CLIError("the REST API key contains control characters")
        }
        return GQLPush(appId: appId, restKey: restKey, keyKind: keyKind, baseURL: value(apiURL, "ONESIGNAL_API_URL"))
    }
}

/// A push token given as hex on the command line.
struct DeviceToken: ExpressibleByArgument, Sendable {
    var data: Data

    init?(argument: String) {
        let digits = Array(argument.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        data = Data(bytes)
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

extension GQLPush.KeyKind: ExpressibleByArgument {}

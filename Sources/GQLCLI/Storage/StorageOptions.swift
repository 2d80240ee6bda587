import ArgumentParser
import Foundation
import GQLServices

/// Where `gql-cli storage` sends requests and with which credentials: flags first, then the standard AWS
/// environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` /
/// `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`).
struct StorageOptions: ParsableArguments {
    @Option(help: "An S3-compatible endpoint, e.g. http://127.0.0.1:9000 (default: Amazon S3 in --region).")
    var endpoint: String?

    @Option(help: "The region requests are signed for (default: AWS_REGION, AWS_DEFAULT_REGION or us-east-1).")
    var region: String?

    @Flag(help: "Address buckets in the path (endpoint/bucket/key) instead of the host; the default with --endpoint.")
    var pathStyle = false

    @Flag(help: "Address buckets in the host (bucket.host/key) even with --endpoint.")
    var virtualHosted = false

    @Option(help: "The access key id (default: AWS_ACCESS_KEY_ID).")
    var accessKey: String?

    @Option(help: "The secret access key (default: AWS_SECRET_ACCESS_KEY; prefer the variable, flags show in ps).")
    var secretKey: String?

    @Option(help: "A session token for temporary credentials (default: AWS_SESSION_TOKEN).")
    var sessionToken: String?

    func validate() throws {
        if pathStyle && virtualHosted { throw ValidationError("--path-style and --virtual-hosted exclude each other") }
    }

    /// The storage these options describe.
    func storage(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GQLStorage {
        func value(_ flag: String?, _ names: [String]) -> String? {
            if let flag, !flag.isEmpty { return flag }
            return names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        guard let accessKey = value(accessKey, ["AWS_ACCESS_KEY_ID"]) else {
            throw CLIError("no access key: set AWS_ACCESS_KEY_ID or pass --access-key")
        }
        guard let secretKey = value(secretKey, ["AWS_SECRET_ACCESS_KEY"]) else {
            throw CLIError("no secret key: set AWS_SECRET_ACCESS_KEY or pass --secret-key")
        }
        let token = value(sessionToken, ["AWS_SESSION_TOKEN"])
        let region = value(region, ["AWS_REGION", "AWS_DEFAULT_REGION"]) ?? "us-east-1"
        for (name, text) in [
            ("access key", accessKey), ("secret key", secretKey), ("session token", token ?? ""), ("region", region),
        ] where text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            throw CLIError("the \(name) contains control characters")
        }
        guard let endpoint = value(endpoint, ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]) else {
            return GQLStorage(AmazonS3: region, accessKey: accessKey, secretKey: secretKey, sessionToken: token)
        }
        return GQLStorage(
            endpoint: endpoint, region: region, accessKey: accessKey, secretKey: secretKey, sessionToken: token,
            pathStyle: !virtualHosted)
    }
}

/// `BUCKET/KEY` (or `s3://BUCKET/KEY`) split in two.
struct ObjectPath: ExpressibleByArgument, Sendable {
    var bucket: String
    var key: String

    init?(argument: String) {
        var text = Substring(argument)
        if text.hasPrefix("s3://") { text = text.dropFirst(5) }
        guard let slash = text.firstIndex(of: "/") else { return nil }
        bucket = String(text[..<slash])
        key = String(text[text.index(after: slash)...])
        guard !bucket.isEmpty else { return nil }
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

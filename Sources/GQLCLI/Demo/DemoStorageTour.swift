import Foundation
import GQLCore
import GQLEmulators
import GQLServices

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The storage step of `gql-cli demo`: GQLStorage against the S3 emulator of the demo's `gql-cli serve --all`
/// (``DemoServices``): a file uploaded in parts and downloaded with progress bars, then a presigned URL fetched by
/// a plain HTTP client that holds no credentials.
struct DemoStorageTour: DemoStep {
    /// Where the demo keeps its files (removed by the demo).
    let directory: URL
    /// The running `serve --all`.
    let services: DemoServices

    func run() async throws {
        heading("13. Files (GQLStorage against the S3 emulator of gql-cli serve --all)")
        let endpoints = services.endpoints
        guard let emulator = services.suite.storage, let url = endpoints.storage,
            let accessKey = endpoints.storageAccessKey, let secretKey = endpoints.storageSecretKey
        else { throw CLIError("the demo's gql-cli serve --all runs no storage emulator") }
        say("GQLStorageEmulator at \(url), bucket \(DemoServices.bucket), signatures checked as S3 checks them")
        var clientConfiguration = GQLStorage.Configuration()
        clientConfiguration.multipartThreshold = 8 << 20
        clientConfiguration.partSize = 5 << 20
        let storage = GQLStorage(
            endpoint: url, region: emulator.configuration.region, accessKey: accessKey, secretKey: secretKey,
            configuration: clientConfiguration)
        do {
            try await tour(storage)
            try await storage.shutdown()
        } catch {
            try? await storage.shutdown()
            throw error
        }
    }

    private func tour(_ storage: GQLStorage) async throws {
        let size = 12 << 20
        let source = directory.appendingPathComponent("holiday.mov")
        var random = SplitMix64(seed: 11)
        let block = Data((0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        try Data(repeating: 0, count: 0).write(to: source)
        let handle = try FileHandle(forWritingTo: source)
        for _ in 0..<(size / block.count) { try handle.write(contentsOf: block) }
        try handle.close()
        let up = ProgressBar(label: "   upload holiday.mov")
        let etag = try await storage.upload("demo-photos", "2026/holiday.mov", file: source) { done, total in
            up.update(done: done, total: total)
        }
        up.finish()
        say("uploaded \(ProgressBar.size(Int64(size))) in parts of 5 MiB: ETag \(etag)")
        let back = directory.appendingPathComponent("holiday copy.mov")
        let down = ProgressBar(label: "   download holiday.mov")
        try await storage.download("demo-photos", "2026/holiday.mov", to: back) { done, total in
            down.update(done: done, total: total)
        }
        down.finish()
        let same = try Data(contentsOf: back) == Data(contentsOf: source)
        say("downloaded it again: \(same ? "the same bytes" : "different bytes (unexpected)")")
        try await storage.upload(
            "demo-photos", "2026/note.txt", Data("See you at the lake!".utf8), contentType: "text/plain")
        let url = try storage.presignedURL(.get, "demo-photos", "2026/note.txt", expires: .seconds(300))
        say("presigned URL, valid 5 minutes: \(url.absoluteString.prefix(72))…")
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await URLSession.shared.data(from: url)
        } catch {
            // The error's description, not the error: Foundation's names the URL, whose query holds the signature.
            throw CLIError(
                "13. Files: the presigned URL could not be fetched: \((error as NSError).localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        say("fetched with no credentials -> HTTP \(status): \"\(String(decoding: data, as: UTF8.self))\"")
        var listed: [String] = []
        for try await object in storage.list("demo-photos", prefix: "2026/") { listed.append(object.key) }
        say("list demo-photos/2026/ -> \(listed.joined(separator: ", "))")
    }
}

import AsyncHTTPClient
import Foundation
import GQLCore
import GQLEmulators
import GQLTestSupport
import Testing

@testable import GQLServices

/// The S3-shaped servers GQLStorage's suites run against: moto's S3 server (Tests/Interop/s3_peer.py), and
/// GQLEmulators' storage emulator (what `gql-cli serve --storage` runs), in-process on 127.0.0.1.
enum StorageServer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case moto
    case emulator

    var testDescription: String { self == .moto ? "s3_peer.py (moto)" : "GQLStorageEmulator" }
}

/// GQLStorage against each ``StorageServer`` with request authentication on: every request must carry a valid
/// SigV4 signature of the server's access key.
///
/// Keys sent to moto avoid `+ ! ' ( ) *`, which moto's own signature check wrongly refuses (S3 takes any UTF-8
/// key); the emulator gets them too, and SigV4OracleTests covers them against botocore.
@Suite(.serialized) struct StorageTests {
    /// The server's port and credentials (moto's from its READY line).
    struct PeerInfo: Decodable {
        var port: Int
        var accessKey: String
        var secretKey: String
    }

    /// Runs `body` with a client of a fresh `server`. `authenticated: false` starts moto without its signature
    /// check; the emulator always checks signatures, presigned ones included.
    /// Multipart uploads from 5 MiB on, in parts of 5 MiB, `parts` of them sent at once.
    static func multipart(inFlight parts: Int) -> (inout GQLStorage.Configuration) -> Void {
        { configuration in
            configuration.multipartThreshold = 5 << 20
            configuration.partSize = 5 << 20
            configuration.maximumConcurrentParts = parts
        }
    }

    static func withStorage<T>(
        _ server: StorageServer = .moto, secret: String? = nil, authenticated: Bool = true,
        configure: (inout GQLStorage.Configuration) -> Void = { _ in },
        _ body: (GQLStorage, PeerInfo) async throws -> T
    ) async throws -> T {
        func run(_ info: PeerInfo) async throws -> T {
            var configuration = GQLStorage.Configuration()
            configuration.backoff = GQLBackoff(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
            configure(&configuration)
            let storage = GQLStorage(
                endpoint: "http://127.0.0.1:\(info.port)", region: "us-east-1", accessKey: info.accessKey,
                secretKey: secret ?? info.secretKey, pathStyle: true, configuration: configuration)
            do {
                let result = try await body(storage, info)
                try await storage.shutdown()
                return result
            } catch {
                try? await storage.shutdown()
                throw error
            }
        }
        switch server {
        case .moto:
            return try await PythonPeer.with("s3_peer.py", authenticated ? [] : ["--no-auth"]) { peer in
                try await run(try JSONDecoder().decode(PeerInfo.self, from: Data(peer.ready.utf8)))
            }
        case .emulator:
            let directory = try TemporaryDirectory(prefix: "gql-storage")
            defer { directory.cleanup() }
            var emulator = GQLStorageEmulator.Configuration()
            emulator.port = 0
            emulator.dataFolder = try GQLDataFolder(path: directory.path("data"))
            let started = try await GQLStorageEmulator(configuration: emulator).start()
            do {
                let result = try await run(
                    PeerInfo(port: started.port, accessKey: emulator.accessKey, secretKey: emulator.secretKey))
                await started.shutdown()
                return result
            } catch {
                await started.shutdown()
                throw error
            }
        }
    }

    static func bytes(_ count: Int, seed: UInt64) -> Data { TestSeed.bytes(count, seed: seed) }

    @Test(arguments: StorageServer.allCases)
    func roundTripsOfSmallObjectsWithGeneratedKeys(_ server: StorageServer) async throws {
        try await Self.withStorage(server) { storage, _ in
            try await storage.createBucket("round-trips")
            let everywhere = [
                "plain.txt", "folder/file name.png", "deep/a/b/c/d.bin", "unicode/é日本ü😀.txt", "percent%20literal%",
                "query?and#hash&amp=1", "colon:at@dollar$comma,semi;", "tilde~under_score-dash.dot",
                "brackets[]{}^`|", "spaces  twice", "trailing/slash/", "x<y>z\"q",
            ]
            // S3 takes any UTF-8 key. moto's signature check refuses `+ ! ' ( ) *` (see above), and moto answers
            // NoSuchKey to a key with a tab or a newline it has just stored: the emulator gets them all.
            let notMoto: [String] = server == .moto ? [] : ["a+b.txt", "bang!quote'(paren)*star", "한/tab\tnewline\n"]
            let keys: [String] = everywhere + notMoto
            for (index, key) in keys.enumerated() {
                let data = Self.bytes([0, 1, 17, 1000, 4096][index % 5], seed: UInt64(index))
                let etag = try await storage.upload("round-trips", key, data)
                #expect(!etag.isEmpty, "key \(key)")
                let back = try await storage.download("round-trips", key)
                #expect(back == data, "key \(key)")
                let info = try await storage.info("round-trips", key)
                #expect(info?.size == data.count, "key \(key)")
            }
            var listed: [String] = []
            for try await object in storage.list("round-trips", pageSize: 3) { listed.append(object.key) }
            #expect(listed == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            var prefixed: [String] = []
            for try await object in storage.list("round-trips", prefix: "deep/") { prefixed.append(object.key) }
            #expect(prefixed == ["deep/a/b/c/d.bin"])
            try await storage.delete("round-trips", "plain.txt")
            #expect(try await storage.info("round-trips", "plain.txt") == nil)
        }
    }

    @Test(arguments: StorageServer.allCases)
    func missingObjectsAndBucketsAreNotFound(_ server: StorageServer) async throws {
        try await Self.withStorage(server) { storage, _ in
            try await storage.createBucket("present")
            let missingKey = await #expect(throws: GQLError.self) { try await storage.download("present", "nope") }
            #expect(missingKey?.code == .notFound)
            #expect(missingKey?.serviceCode == "NoSuchKey")
            #expect(missingKey?.httpStatus == 404)
            let missingBucket = await #expect(throws: GQLError.self) { try await storage.download("absent", "k") }
            #expect(missingBucket?.code == .notFound)
            #expect(missingBucket?.serviceCode == "NoSuchBucket")
            // Deleting a missing object succeeds, as in S3.
            try await storage.delete("present", "nope")
        }
    }

    @Test(arguments: StorageServer.allCases)
    func aWrongSecretIsASignatureErrorThatQuotesNoSecret(_ server: StorageServer) async throws {
        try await Self.withStorage(server, secret: "not-the-secret-0123456789") { storage, info in
            let error = await #expect(throws: GQLError.self) { try await storage.createBucket("refused") }
            #expect(error?.code == .signature)
            #expect(error?.serviceCode == "SignatureDoesNotMatch")
            #expect(error?.httpStatus == 403)
            let text = "\(error.map { "\($0)" } ?? "") \(storage)"
            #expect(!text.contains("not-the-secret-0123456789"))
            #expect(!text.contains(info.secretKey))
        }
    }

    @Test func emptyNamesAndBadEndpointsAreRefusedBeforeSending() async throws {
        let storage = GQLStorage(endpoint: "ftp://example", accessKey: "a", secretKey: "b")
        let badEndpoint = await #expect(throws: GQLError.self) { try await storage.download("bucket", "key") }
        #expect(badEndpoint?.code == .invalidArgument)
        try await storage.shutdown()
        try await Self.withStorage { storage, _ in
            let emptyKey = await #expect(throws: GQLError.self) { try await storage.upload("bucket", "", Data()) }
            #expect(emptyKey?.code == .invalidArgument)
            let emptyBucket = await #expect(throws: GQLError.self) { try await storage.download("", "key") }
            #expect(emptyBucket?.code == .invalidArgument)
            #expect(throws: GQLError.self) { try storage.presignedURL(.get, "b", "k", expires: .seconds(0)) }
            #expect(throws: GQLError.self) { try storage.presignedURL(.get, "b", "k", expires: .seconds(604_801)) }
        }
    }

    /// moto cannot check presigned URLs while it authenticates (see Tests/Interop/s3_peer.py): its round trip runs
    /// against a peer that checks nothing, and SigV4OracleTests proves the signatures against botocore. The
    /// emulator checks them as S3 does.
    @Test(arguments: StorageServer.allCases)
    func presignedGetAndPutWorkWithAPlainHTTPClient(_ server: StorageServer) async throws {
        try await Self.withStorage(server, authenticated: false) { storage, _ in
            try await storage.createBucket("presigned")
            let data = Self.bytes(3000, seed: 7)
            let key = "shared/report 2026 (final).pdf"
            let put = try storage.presignedURL(.put, "presigned", key, expires: .seconds(900))
            #expect(put.absoluteString.contains("X-Amz-Expires=900"))
            var upload = HTTPClientRequest(url: put.absoluteString)
            upload.method = .PUT
            upload.body = .bytes(data)
            let uploaded = try await HTTPClient.shared.execute(upload, timeout: .seconds(30))
            #expect(uploaded.status == .ok)
            #expect(try await storage.download("presigned", key) == data)

            let get = try storage.presignedURL(.get, "presigned", key, expires: .seconds(900))
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: get.absoluteString), timeout: .seconds(30))
            #expect(response.status == .ok)
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(Data(body.readableBytesView) == data)
        }
    }

    @Test(arguments: StorageServer.allCases)
    func multipartUploadAndStreamedDownloadOfFiles(_ server: StorageServer) async throws {
        try await Self.withStorage(server, configure: StorageTests.multipart(inFlight: 3)) { storage, _ in
            try await storage.createBucket("files")
            let directory = try TemporaryFiles()
            // Exactly one part, and many parts with a short last one.
            for (name, size) in [("one-part.bin", 5 << 20), ("many-parts.bin", (17 << 20) + 12_345)] {
                let data = Self.bytes(size, seed: UInt64(size))
                let source = directory.url(name)
                try data.write(to: source)
                let reported = GQLLocked<[Int64]>([])
                try await storage.upload("files", name, file: source) { sent, total in
                    reported.withLock { $0.append(sent) }
                    #expect(total == Int64(size))
                }
                #expect(reported.withLock { $0.max() } == Int64(size))
                let info = try await storage.info("files", name)
                #expect(info?.size == size)
                #expect(info?.etag.hasSuffix("-\((size + (5 << 20) - 1) / (5 << 20))") == true)

                let target = directory.url("back-" + name)
                let received = GQLLocked<Int64>(0)
                try await storage.download("files", name, to: target) { done, _ in received.withLock { $0 = done } }
                #expect(received.withLock { $0 } == Int64(size))
                #expect(try Data(contentsOf: target) == data)
            }
            // No partial file is left beside the destinations.
            #expect(directory.names().allSatisfy { !$0.hasSuffix(".part") })
        }
    }

    @Test(arguments: StorageServer.allCases)
    func aCancelledMultipartUploadIsAborted(_ server: StorageServer) async throws {
        try await Self.withStorage(server, configure: StorageTests.multipart(inFlight: 1)) { storage, _ in
            try await storage.createBucket("aborted")
            let directory = try TemporaryFiles()
            let source = directory.url("big.bin")
            try Self.bytes(16 << 20, seed: 3).write(to: source)
            let (parts, partStored) = AsyncStream.makeStream(of: Void.self)
            let upload = Task {
                try await storage.upload("aborted", "big.bin", file: source) { _, _ in partStored.yield() }
            }
            // Cancel the upload once its first part is stored.
            for await _ in parts { break }
            upload.cancel()
            await #expect(throws: (any Error).self) { try await upload.value }
            // Nothing under the key, and no unfinished multipart upload left behind.
            #expect(try await storage.info("aborted", "big.bin") == nil)
            let uploads = try await storage.send(
                .init(method: "GET", bucket: "aborted", key: nil, query: [("uploads", "")], operation: "list"))
            let open = try S3XML.parse(uploads.body, answer: "the uploads", operation: "list")?.children("Upload") ?? []
            #expect(open.isEmpty)
        }
    }

    @Test(arguments: StorageServer.allCases)
    func downloadsThatFailLeaveNoFile(_ server: StorageServer) async throws {
        try await Self.withStorage(server) { storage, _ in
            try await storage.createBucket("nofile")
            let directory = try TemporaryFiles()
            let target = directory.url("missing.bin")
            await #expect(throws: GQLError.self) { try await storage.download("nofile", "missing", to: target) }
            #expect(directory.names().isEmpty)
        }
    }
}

/// A temporary directory removed when the value goes away.
final class TemporaryFiles {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("gqlstorage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func url(_ name: String) -> URL { root.appendingPathComponent(name) }

    func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] }

    deinit { try? FileManager.default.removeItem(at: root) }
}

/// GQLStorage's retries against moto behind a fault injector (Tests/Interop/s3_peer.py --fail-every K) that
/// answers 503 SlowDown in S3's shape.
@Suite(.serialized) struct StorageRetryTests {
    private static func withFaultyStorage(
        every: Int, attempts: Int, _ body: (GQLStorage, @escaping () async throws -> Int) async throws -> Void
    ) async throws {
        try await PythonPeer.with("s3_peer.py", ["--fail-every", String(every)]) { peer in
            let info = try JSONDecoder().decode(StorageTests.PeerInfo.self, from: Data(peer.ready.utf8))
            var configuration = GQLStorage.Configuration()
            configuration.backoff = GQLBackoff(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
            configuration.maximumAttempts = attempts
            configuration.multipartThreshold = 5 << 20
            configuration.partSize = 5 << 20
            let storage = GQLStorage(
                endpoint: "http://127.0.0.1:\(info.port)", accessKey: info.accessKey, secretKey: info.secretKey,
                configuration: configuration)
            let injected = {
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(info.port)/__faults"), timeout: .seconds(10))
                return Int(String(buffer: try await response.body.collect(upTo: 64))) ?? -1
            }
            do {
                try await body(storage, injected)
                try await storage.shutdown()
            } catch {
                try? await storage.shutdown()
                throw error
            }
        }
    }

    @Test func slowDownIsRetriedUntilTheRequestSucceeds() async throws {
        // Every request fails once: each call takes two attempts and succeeds.
        try await Self.withFaultyStorage(every: 2, attempts: 2) { storage, injected in
            try await storage.createBucket("retried")
            let data = StorageTests.bytes(10_000, seed: 11)
            try await storage.upload("retried", "a.bin", data)
            #expect(try await storage.download("retried", "a.bin") == data)
            let directory = try TemporaryFiles()
            let big = StorageTests.bytes((11 << 20) + 5, seed: 12)
            try big.write(to: directory.url("big.bin"))
            try await storage.upload("retried", "big.bin", file: directory.url("big.bin"))
            try await storage.download("retried", "big.bin", to: directory.url("back.bin"))
            #expect(try Data(contentsOf: directory.url("back.bin")) == big)
            // create, put, get, multipart (create, 3 parts, complete), download: one fault each.
            let faults = try await injected()
            #expect(faults >= 9)
        }
    }

    @Test func aServerThatKeepsFailingGetsItsErrorAfterTheLastAttempt() async throws {
        try await Self.withFaultyStorage(every: 1, attempts: 3) { storage, injected in
            let error = await #expect(throws: GQLError.self) { try await storage.createBucket("never") }
            #expect(error?.code == .service)
            #expect(error?.serviceCode == "SlowDown")
            #expect(error?.httpStatus == 503)
            #expect(error?.requestId == "FAULT")
            let faults = try await injected()
            #expect(faults == 3)
        }
    }
}

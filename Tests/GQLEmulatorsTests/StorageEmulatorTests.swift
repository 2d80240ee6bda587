import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto
import GQLEmulators
import GQLServices
import GQLTestSupport
import NIOCore
import Testing

/// GQLStorage, the toolkit's own S3 client, against the storage emulator: every call it makes, signed as it signs,
/// answered as S3 answers.
@Suite struct StorageEmulatorTests {
    @Test func roundTripsOfObjectsWithAwkwardKeys() async throws {
        try await StorageFixture.with { fixture in
            let storage = fixture.storage
            let keys = [
                "plain.txt", "folder/file name.png", "deep/a/b/c/d.bin", "unicode/é日本ü😀.txt", "percent%20literal%",
                "query?and#hash&amp=1", "colon:at@dollar$comma,semi;", "tilde~under_score-dash.dot",
                "brackets[]{}^`|", "spaces  twice", "trailing/slash/", "plus+bang!quote'(paren)*star", "a//b",
                "../escape", "/leading", "nul\u{1}ctrl",
            ]
            for (index, key) in keys.enumerated() {
                let data = StorageFixture.bytes([0, 1, 17, 1000, 4096][index % 5], seed: UInt64(index))
                let etag = try await storage.upload("bucket", key, data)
                #expect(etag == Bytes.hex(MD5.hash(data)), "key \(key)")
                #expect(try await storage.download("bucket", key) == data, "key \(key)")
                #expect(try await storage.info("bucket", key)?.size == data.count, "key \(key)")
            }
            var listed: [String] = []
            for try await object in storage.list("bucket", pageSize: 5) { listed.append(object.key) }
            #expect(listed == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            // Nothing outside the data folder.
            #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("escape")))
            for key in keys { try await storage.delete("bucket", key) }
            var left = 0
            for try await _ in storage.list("bucket") { left += 1 }
            #expect(left == 0)
        }
    }

    @Test func aMissingKeyIsNotFoundAndAMissingBucketToo() async throws {
        try await StorageFixture.with { fixture in
            await #expect(throws: GQLError.self) { try await fixture.storage.download("bucket", "nothing") }
            #expect(try await fixture.storage.info("bucket", "nothing") == nil)
            do {
                _ = try await fixture.storage.download("no-such-bucket", "x")
                Issue.record("a download from a missing bucket succeeded")
            } catch let error as GQLError {
                #expect(error.code == .notFound)
                #expect(error.serviceCode == "NoSuchBucket")
            }
        }
    }

    @Test func aWrongSecretIsRefusedWithSignatureDoesNotMatch() async throws {
        try await StorageFixture.with(secret: "not-the-secret") { fixture in
            do {
                try await fixture.storage.upload("bucket", "x", Data("x".utf8))
                Issue.record("an upload signed with a wrong secret succeeded")
            } catch let error as GQLError {
                #expect(error.code == .signature)
                #expect(error.serviceCode == "SignatureDoesNotMatch")
                #expect(!error.message.contains("not-the-secret"))
            }
        }
    }

    @Test func unsignedPayloadsAndChecksumsAreAccepted() async throws {
        try await StorageFixture.with(client: { $0.signsPayload = false }) { fixture in
            let data = StorageFixture.bytes(70_000, seed: 7)
            try await fixture.storage.upload("bucket", "unsigned.bin", data)
            #expect(try await fixture.storage.download("bucket", "unsigned.bin") == data)
        }
    }

    @Test func filesGoInPartsAndComeBackWhole() async throws {
        let seed = TestSeed.make("multipart file")
        try await StorageFixture.with(
            client: {
                $0.multipartThreshold = 5 << 20
                $0.partSize = 5 << 20
            }
        ) { fixture in
            let data = StorageFixture.bytes((11 << 20) + 12345, seed: seed)
            let source = fixture.directory.url.appendingPathComponent("source.bin")
            try data.write(to: source)
            let progress = GQLLocked<Int64>(0)
            let etag = try await fixture.storage.upload("bucket", "big.bin", file: source) { done, _ in
                progress.withLock { $0 = done }
            }
            #expect(etag.hasSuffix("-3"))
            #expect(progress.withLock { $0 } == Int64(data.count))
            let target = fixture.directory.url.appendingPathComponent("target.bin")
            try await fixture.storage.download("bucket", "big.bin", to: target)
            #expect(try Data(contentsOf: target) == data)
            #expect(try await fixture.storage.info("bucket", "big.bin")?.etag == etag)
        }
    }

    @Test func presignedURLsWorkUntilTheyExpire() async throws {
        let now = GQLLocked(Date())
        try await StorageFixture.with(configure: { configuration in
            configuration.clock = { now.withLock { $0 } }
        }) { fixture in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            let put = try fixture.storage.presignedURL(.put, "bucket", "shared file.txt", expires: .seconds(60))
            var request = HTTPClientRequest(url: put.absoluteString)
            request.method = .PUT
            request.body = .bytes(ByteBuffer(string: "hello"))
            let stored = try await client.execute(request, timeout: .seconds(10))
            #expect(stored.status == .ok)
            let get = try fixture.storage.presignedURL(.get, "bucket", "shared file.txt", expires: .seconds(60))
            let fetched = try await client.execute(HTTPClientRequest(url: get.absoluteString), timeout: .seconds(10))
            #expect(fetched.status == .ok)
            #expect(String(buffer: try await fetched.body.collect(upTo: 1024)) == "hello")
            // Altered: another key under the same signature.
            let altered = get.absoluteString.replacingOccurrences(of: "shared%20file", with: "shared%20filx")
            let refused = try await client.execute(HTTPClientRequest(url: altered), timeout: .seconds(10))
            #expect(refused.status == .forbidden)
            #expect(String(buffer: try await refused.body.collect(upTo: 4096)).contains("SignatureDoesNotMatch"))
            // Expired: the emulator's clock moves well past the expiry (the URLs were signed by the client's own
            // clock, some seconds after the emulator's was read: 61 seconds on was not always past).
            now.withLock { $0 = $0.addingTimeInterval(600) }
            let expired = try await client.execute(HTTPClientRequest(url: get.absoluteString), timeout: .seconds(10))
            #expect(expired.status == .forbidden)
            #expect(String(buffer: try await expired.body.collect(upTo: 4096)).contains("Request has expired"))
        }
    }

    @Test func bucketsAreCreatedListedAndDeletedOnlyWhenEmpty() async throws {
        try await StorageFixture.with(buckets: []) { fixture in
            try await fixture.storage.createBucket("made-here")
            try await fixture.storage.upload("made-here", "x", Data("x".utf8))
            do {
                try await fixture.storage.deleteBucket("made-here")
                Issue.record("a bucket with an object was deleted")
            } catch let error as GQLError {
                #expect(error.serviceCode == "BucketNotEmpty")
            }
            try await fixture.storage.delete("made-here", "x")
            try await fixture.storage.deleteBucket("made-here")
            await #expect(throws: GQLError.self) { try await fixture.storage.upload("made-here", "x", Data()) }
        }
    }

    /// One storage emulator per data folder: a second one (here in the same process; another process is refused
    /// the same way, see ServeEmulatorTests) is refused while the first runs, and the first's objects are
    /// untouched; once the first has shut down, the folder is free.
    @Test func aSecondEmulatorOnTheSameFolderIsRefusedUntilTheFirstShutsDown() async throws {
        try await StorageFixture.with(buckets: ["held"]) { fixture in
            try await fixture.storage.upload("held", "k", Data("first".utf8))
            let folder = try #require(fixture.configuration.dataFolder)
            #expect {
                try GQLStorageEmulator(configuration: fixture.configuration)
            } throws: { error in
                guard let error = error as? GQLError, error.code == .io else { return false }
                return error.message.contains("data folder \(folder.url.path) is in use by another storage emulator")
                    && error.message.contains("(process \(getpid()))")
            }
            #expect(try await fixture.storage.download("held", "k") == Data("first".utf8))
            await fixture.started.shutdown()
            let second = try await GQLStorageEmulator(configuration: fixture.configuration).start()
            let client = GQLStorage(
                endpoint: second.url, accessKey: fixture.configuration.accessKey,
                secretKey: fixture.configuration.secretKey)
            #expect(try await client.download("held", "k") == Data("first".utf8))
            try await client.shutdown()
            await second.shutdown()
        }
    }

    @Test func objectsSurviveARestartOfTheEmulator() async throws {
        let directory = try TemporaryDirectory(prefix: "gql-s3emu-restart")
        defer { directory.cleanup() }
        var configuration = GQLStorageEmulator.Configuration()
        configuration.port = 0
        configuration.buckets = ["keep"]
        configuration.dataFolder = try GQLDataFolder(path: directory.path("data"))
        for round in 0..<2 {
            let started = try await GQLStorageEmulator(configuration: configuration).start()
            let storage = GQLStorage(
                endpoint: started.url, accessKey: configuration.accessKey, secretKey: configuration.secretKey)
            if round == 0 {
                try await storage.upload("keep", "a/b.txt", Data("kept".utf8))
            } else {
                #expect(try await storage.download("keep", "a/b.txt") == Data("kept".utf8))
            }
            try await storage.shutdown()
            await started.shutdown()
        }
    }
}

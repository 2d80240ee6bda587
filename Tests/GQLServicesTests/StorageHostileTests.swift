import AsyncHTTPClient
import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLStorage against a hostile S3 stand-in (Tests/Interop/hostile_s3_peer.py), whose bucket names pick the
/// answer: XML too deep to free recursively, listings that never end or never stop growing, keys that are not what
/// they seem, downloads that crawl. Every case ends with a clear error (or the right keys), the process alive.
/// These are answers only a stand-in gives; what a real server answers (keys with XML's entities, and at the
/// emulator a control character, percent-encoded in listings; multipart ETags) StorageTests checks against moto and
/// the storage emulator.
@Suite(.serialized) struct StorageHostileTests {
    static func withHostile<T>(
        configure: (inout GQLStorage.Configuration) -> Void = { _ in },
        _ body: (GQLStorage, _ stat: @escaping @Sendable (String) async throws -> Int) async throws -> T
    ) async throws -> T {
        try await PythonPeer.with("hostile_s3_peer.py") { peer in
            var configuration = GQLStorage.Configuration()
            configuration.maximumAttempts = 1
            configure(&configuration)
            let storage = GQLStorage(
                endpoint: peer.ready, accessKey: "AKIDHOSTILE", secretKey: "hostile-secret",
                configuration: configuration)
            let url = peer.ready
            // The peer's counters: `sent` (bytes of the last huge answer) and `requests`.
            let stat: @Sendable (String) async throws -> Int = { name in
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "\(url)/__\(name)"), timeout: .seconds(10))
                return Int(String(buffer: try await response.body.collect(upTo: 64))) ?? -1
            }
            do {
                let result = try await body(storage, stat)
                try await storage.shutdown()
                return result
            } catch {
                try? await storage.shutdown()
                throw error
            }
        }
    }

    static func keys(_ storage: GQLStorage, _ bucket: String, prefix: String = "") async throws -> [String] {
        var keys: [String] = []
        for try await object in storage.list(bucket, prefix: prefix) { keys.append(object.key) }
        return keys
    }

    /// What `keys` collects before its error, and the error.
    static func failedListing(_ storage: GQLStorage, _ bucket: String) async -> ([String], GQLError?) {
        var keys: [String] = []
        do {
            for try await object in storage.list(bucket) { keys.append(object.key) }
            return (keys, nil)
        } catch {
            return (keys, error as? GQLError)
        }
    }

    /// 50,000 levels of XML (350 KB) used to overflow the stack when the parsed tree was freed: a listing, the
    /// start of a multipart upload, and the error bodies of an upload, a delete and a bucket creation.
    @Test func deepXMLAnswersAreRefusedWithAClearError() async throws {
        try await Self.withHostile(configure: {
            $0.multipartThreshold = 5 << 20
            $0.partSize = 5 << 20
        }) { storage, _ in
            let listing = await #expect(throws: GQLError.self) { _ = try await Self.keys(storage, "deep") }
            #expect(listing?.code == .invalidResponse)
            #expect(listing?.operation == "list")
            #expect(listing?.message.contains("answer to the list of") == true)
            #expect(listing?.message.contains("deeper than 16 levels") == true)

            let directory = try TemporaryFiles()
            try Data(count: 5 << 20).write(to: directory.url("big.bin"))
            let multipart = await #expect(throws: GQLError.self) {
                try await storage.upload("deep", "big.bin", file: directory.url("big.bin"))
            }
            #expect(multipart?.code == .invalidResponse)
            #expect(multipart?.message.contains("deeper than 16 levels") == true)

            let refusals: [(String, () async throws -> Void)] = [
                ("upload", { _ = try await storage.upload("deep-error", "k", Data("x".utf8)) }),
                ("delete", { try await storage.delete("deep-error", "k") }),
                ("createBucket", { try await storage.createBucket("deep-error") }),
                ("list", { _ = try await Self.keys(storage, "deep-error") }),
            ]
            for (operation, call) in refusals {
                let error = await #expect(throws: GQLError.self, "\(operation)") { try await call() }
                #expect(error?.code == .invalidResponse, "\(operation)")
                #expect(error?.operation == operation)
                #expect(error?.httpStatus == 400, "\(operation)")
                #expect(error?.message.contains("HTTP 400 answer to the \(operation) of") == true, "\(operation)")
            }
        }
    }

    @Test func listingsWithADocumentTypeAreRefused() async throws {
        try await Self.withHostile { storage, _ in
            for prefix in ["laughs", "external"] {
                let error = await #expect(throws: GQLError.self) {
                    _ = try await Self.keys(storage, "dtd", prefix: prefix)
                }
                #expect(error?.code == .invalidResponse, "\(prefix)")
                #expect(error?.message.contains("document type declaration") == true, "\(prefix)")
            }
        }
    }

    @Test func aRepeatedContinuationTokenEndsTheListing() async throws {
        try await Self.withHostile { storage, stat in
            let (keys, failure) = await Self.failedListing(storage, "repeat")
            #expect(keys == ["key-first"])
            #expect(failure?.code == .invalidResponse)
            #expect(
                failure?.message.contains("page 2 of the listing of repeat repeats the continuation token of page 1")
                    == true)
            let requests = try await stat("requests")
            #expect(requests == 2)
        }
    }

    @Test func aListingThatNeverEndsStopsAtThePageCap() async throws {
        try await Self.withHostile(configure: { $0.maximumListingPages = 40 }) { storage, stat in
            let (keys, failure) = await Self.failedListing(storage, "endless")
            #expect(keys == (1...40).map { String(format: "key-%08d", $0) })
            #expect(failure?.code == .invalidResponse)
            #expect(failure?.message.contains("did not end after 40 pages") == true)
            let requests = try await stat("requests")
            #expect(requests == 40)
        }
    }

    /// A 128 MiB page without a Content-Length: the read stops once it passes the 8 MiB cap, so memory stays near
    /// the cap; the peer's count of what it could write before the client stopped reading shows it (the socket
    /// buffers hold a few MiB more).
    @Test func anOversizedListingPageStopsAtTheCap() async throws {
        try await Self.withHostile { storage, stat in
            let error = await #expect(throws: GQLError.self) { _ = try await Self.keys(storage, "huge") }
            #expect(error?.code == .responseTooLarge)
            #expect(error?.message.contains("larger than 8388608 bytes (Configuration.maximumXMLResponseSize)") == true)
            let sent = try await stat("sent")
            #expect(sent > 0 && sent < 32 << 20, "the peer wrote \(sent) bytes")
        }
    }

    @Test func keysKeepTheirEntitiesAndTheirEncoding() async throws {
        try await Self.withHostile { storage, _ in
            let entities = try await Self.keys(storage, "entities")
            #expect(entities == ["a&b", "x<y>z\"q'", "Aé日", String(repeating: "&", count: 3000) + "end"])
            // encoding-type=url as S3 answers it: a space is '+', a '+' is %2B.
            let encoded = try await Self.keys(storage, "encoded")
            #expect(encoded == ["a b.txt", "a+b.txt", "100%.csv", "한/x y\n"])
            for bucket in ["bad-percent", "bad-utf8"] {
                let (keys, failure) = await Self.failedListing(storage, bucket)
                #expect(keys.isEmpty, "\(bucket)")
                #expect(failure?.code == .invalidResponse, "\(bucket)")
                #expect(failure?.message.contains("a key that is not valid percent-encoded UTF-8") == true, "\(bucket)")
                #expect(failure?.message.contains("key'") == true, "\(bucket): \(failure?.message ?? "")")
            }
        }
    }

    /// A download cancelled in the middle of its body (announced with a length, and chunked without one or an
    /// ETag) ends with `.cancelled` and leaves neither the destination nor its temporary `.part` file.
    @Test func aCancelledDownloadLeavesNoFile() async throws {
        try await Self.withHostile { storage, _ in
            for bucket in ["slow", "slow-chunked"] {
                let directory = try TemporaryFiles()
                let (received, receiving) = AsyncStream.makeStream(of: Int64.self)
                let target = directory.url("big.bin")
                let download = Task {
                    try await storage.download(bucket, "big.bin", to: target) { done, _ in
                        receiving.yield(done)
                    }
                }
                // Cancel once a few chunks were written into the temporary file.
                for await done in received where done >= 4 * 65_536 { break }
                #expect(directory.names().contains { $0.hasSuffix(".part") }, "\(bucket): no temporary file seen")
                download.cancel()
                let error = await #expect(throws: GQLError.self, "\(bucket)") { try await download.value }
                #expect(error?.code == .cancelled, "\(bucket)")
                #expect(directory.names().isEmpty, "\(bucket): \(directory.names())")
            }
        }
    }

    /// The peer's `etag` object: 6 MiB + 123 bytes, byte i being i mod 251; `damaged` changes the byte at 3,000,000.
    static func etagObject(damaged: Bool) -> Data {
        var data = Data((0..<((6 << 20) + 123)).map { UInt8($0 % 251) })
        if damaged { data[3_000_000] ^= 0xFF }
        return data
    }

    /// A single-part object's body is checked against the MD5 its ETag is, in memory and to a file: a damaged one is
    /// refused (`.invalidResponse`, no file left), an intact one kept. ETags that are no digest of the body (a
    /// multipart ETag `<md5>-N`, an object encrypted with KMS or a customer's key) are not checked as one: the same
    /// damaged body is taken as it came, as S3's documentation leaves nothing to check it against.
    @Test func aDamagedBodyIsRefusedWhenItsETagIsItsMD5AndOnlyThen() async throws {
        try await Self.withHostile { storage, _ in
            let directory = try TemporaryFiles()
            let damaged = await #expect(throws: GQLError.self) { try await storage.download("etag", "damaged") }
            #expect(damaged?.code == .invalidResponse)
            #expect(damaged?.message.contains("does not match its ETag") == true)
            let target = directory.url("damaged.bin")
            let damagedFile = await #expect(throws: GQLError.self) {
                try await storage.download("etag", "damaged", to: target)
            }
            #expect(damagedFile?.code == .invalidResponse)
            #expect(damagedFile?.message.contains("does not match its ETag") == true)
            #expect(directory.names().isEmpty, "\(directory.names())")

            let cases = [
                ("intact", false), ("multipart", true), ("kms", true), ("customer-key", true),
            ]
            for (key, isDamaged) in cases {
                let expected = Self.etagObject(damaged: isDamaged)
                #expect(try await storage.download("etag", key) == expected, "\(key)")
                let file = directory.url("\(key).bin")
                try await storage.download("etag", key, to: file)
                #expect(try Data(contentsOf: file) == expected, "\(key)")
            }
            #expect(directory.names().allSatisfy { !$0.hasSuffix(".part") })
        }
    }

    /// An object whose ETag is no digest of its body (a multipart upload's) is checked against the whole-object
    /// checksum S3 answers when asked (`x-amz-checksum-mode: ENABLED`, which GQLStorage sends as the AWS SDKs do):
    /// a damaged body is refused against a CRC-64/NVME or a CRC-32 of the full object, in memory and to a file; an
    /// intact one is kept; a composite CRC-32 (of the parts' CRCs, `…-2`, typed COMPOSITE or untyped) says nothing
    /// of the body and is not checked.
    @Test func aDamagedBodyIsRefusedAgainstTheWholeObjectChecksumS3Answers() async throws {
        try await Self.withHostile { storage, _ in
            let directory = try TemporaryFiles()
            let intact = Self.etagObject(damaged: false).prefix(200_000)
            var damaged = intact
            damaged[100_000] ^= 0xFF
            for (key, named) in [("crc64-damaged", "CRC-64/NVME"), ("crc32-damaged", "CRC-32")] {
                let refused = await #expect(throws: GQLError.self) { try await storage.download("crc", key) }
                #expect(refused?.code == .invalidResponse, "\(key)")
                #expect(refused?.message.contains("does not match the \(named) S3 answered") == true, "\(key)")
                let refusedFile = await #expect(throws: GQLError.self) {
                    try await storage.download("crc", key, to: directory.url("\(key).bin"))
                }
                #expect(refusedFile?.code == .invalidResponse, "\(key)")
            }
            #expect(directory.names().isEmpty, "\(directory.names())")
            for (key, expected) in [
                ("crc64-intact", intact), ("composite-damaged", damaged), ("composite-untyped-damaged", damaged),
            ] {
                #expect(try await storage.download("crc", key) == Data(expected), "\(key)")
                let file = directory.url("\(key).bin")
                try await storage.download("crc", key, to: file)
                #expect(try Data(contentsOf: file) == Data(expected), "\(key)")
            }
        }
    }

    /// A download to a file is hashed as it is written, a chunk at a time (6 MiB here, more than the 4 MiB the
    /// writer queues): a body whose CRC-32 is not the whole object's one S3 answered is refused once it has all come,
    /// the hidden file is removed, and a file already at the destination is left as it was, never replaced by the
    /// damaged body.
    @Test func aLargeDownloadWithAWrongCRCLeavesTheDestinationAsItWas() async throws {
        try await Self.withHostile { storage, _ in
            let directory = try TemporaryFiles()
            let fresh = directory.url("fresh.bin")
            let refused = await #expect(throws: GQLError.self) {
                try await storage.download("crc", "crc32-damaged-big", to: fresh)
            }
            #expect(refused?.code == .invalidResponse)
            #expect(refused?.message.contains("does not match the CRC-32 S3 answered") == true)
            #expect(directory.names().isEmpty, "\(directory.names())")

            let kept = directory.url("kept.bin")
            let earlier = Data("the earlier version".utf8)
            try earlier.write(to: kept)
            let received = GQLLocked<Int64>(0)
            await #expect(throws: GQLError.self) {
                try await storage.download("crc", "crc32-damaged-big", to: kept) { done, _ in
                    received.withLock { $0 = done }
                }
            }
            #expect(
                received.withLock { $0 } == Int64(Self.etagObject(damaged: true).count),
                "the whole body came before the refusal")
            #expect(try Data(contentsOf: kept) == earlier)
            #expect(directory.names() == ["kept.bin"])
        }
    }

    /// GQLStorage asks for whole objects only: an answer that is a range of one (206 Partial Content, or a 200
    /// with a Content-Range; each with the whole object's CRC-64/NVME, which says nothing of the range) is refused
    /// as not the object, in memory and to a file, never checked as if it were it; no file is left.
    @Test func aPartOfTheObjectIsNotTakenForAllOfIt() async throws {
        try await Self.withHostile { storage, _ in
            let directory = try TemporaryFiles()
            // The message says what was seen: the status, and the Content-Range both answers carry.
            for (key, seen) in [
                ("crc64-range", "(status 206 with a Content-Range)"),
                ("crc64-range-200", "(status 200 with a Content-Range)"),
            ] {
                let refused = await #expect(throws: GQLError.self) { try await storage.download("crc", key) }
                #expect(refused?.code == .invalidResponse, "\(key)")
                let message = refused?.message ?? ""
                #expect(message.contains("is a part of the object \(seen)"), "\(key): \(message)")
                let refusedFile = await #expect(throws: GQLError.self) {
                    try await storage.download("crc", key, to: directory.url("range.bin"))
                }
                #expect(refusedFile?.code == .invalidResponse, "\(key)")
                #expect(refusedFile?.message.contains("is a part of the object") == true, "\(key)")
            }
            #expect(directory.names().isEmpty, "\(directory.names())")
        }
    }

    /// A download whose answer stops halfway (its length announced, the connection closed) fails and leaves no
    /// file (one attempt, so no retry can hide it); the next download of the same key starts again from its first
    /// byte into a new temporary file and is the whole object, its MD5 checked on that answer alone.
    @Test func aDownloadCutHalfwayLeavesNothingAndTheNextIsWhole() async throws {
        try await Self.withHostile { storage, stat in
            let directory = try TemporaryFiles()
            let file = directory.url("cut.bin")
            let before = try await stat("requests")
            await #expect(throws: GQLError.self) { try await storage.download("cut", "to-file", to: file) }
            #expect(directory.names().isEmpty, "\(directory.names())")
            try await storage.download("cut", "to-file", to: file)
            #expect(try Data(contentsOf: file) == Self.etagObject(damaged: false))
            #expect(directory.names() == ["cut.bin"])
            #expect(try await stat("requests") - before == 2)
            await #expect(throws: GQLError.self) { try await storage.download("cut", "in-memory") }
            #expect(try await storage.download("cut", "in-memory") == Self.etagObject(damaged: false))
        }
    }
}

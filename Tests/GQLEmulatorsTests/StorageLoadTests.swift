import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

#if canImport(Glibc)
    import Glibc
#endif

/// Many keys and many writers: a listing of 10,000 keys pages through every one of them once, in S3's order, and
/// multipart uploads of one key racing each other leave one of them whole, never a mix.
@Suite struct StorageLoadTests {
    /// Writes `keys` into `bucket` of `folder` as the store keeps them (a record per key, named by the key's hash,
    /// all sharing one data file), before the emulator opens the folder: 10,000 uploads through HTTP would take
    /// far longer than the listing under test.
    static func seed(_ folder: GQLDataFolder, bucket: String, keys: [String]) throws {
        let store = try ObjectStore(folder: folder)
        try store.createBucket(bucket, at: Date())
        for part in ["data", "meta"] {
            try FileManager.default.createDirectory(
                at: folder.resolve("buckets/\(bucket)/\(part)"), withIntermediateDirectories: true)
        }
        let data = Data("x".utf8)
        try data.write(to: folder.resolve("buckets/\(bucket)/data/shared"))
        let encoder = JSONEncoder()
        let etag = Bytes.hex(MD5.hash(data))
        for key in keys {
            let object = StoredObject(key: key, size: 1, etag: etag, lastModified: Date(), dataFile: "shared")
            try Self.write(
                encoder.encode(object), to: folder.resolve("buckets/\(bucket)/meta/\(ObjectStore.hashName(key)).json"))
        }
    }

    /// Writes `data` to a new file with plain write(2), not synced (Foundation's `Data.write` syncs each file:
    /// 10,000 of them took seconds).
    static func write(_ data: Data, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw GQLError(.io, "cannot create \(url.path)") }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count else { throw GQLError(.io, "cannot write \(url.path)") }
    }

    @Test func aListingOf10000KeysPagesThroughEveryKeyOnceInOrder() async throws {
        var random = SplitMix64(seed: TestSeed.make("10,000 keys"))
        var unique = Set<String>()
        while unique.count < 10_000 {
            let folder = ["photos", "docs", "é", "a b", "z"][Int(random.next() % 5)]
            unique.insert("\(folder)/\(String(random.next() % 1_000_000_000, radix: 36))-\(random.next() % 97)")
        }
        let keys = unique.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var seeding: (any Error)? = nil
        try await StorageFixture.with(
            buckets: ["many"],
            configure: { configuration in
                do {
                    try Self.seed(try #require(configuration.dataFolder), bucket: "many", keys: keys)
                } catch {
                    seeding = error
                }
            }
        ) { fixture in
            if let seeding { throw seeding }
            var listed: [String] = []
            for try await object in fixture.storage.list("many", pageSize: 1000) { listed.append(object.key) }
            #expect(listed.count == 10_000)
            #expect(listed == keys)
            var inFolder = 0
            for try await _ in fixture.storage.list("many", prefix: "é/", pageSize: 700) { inFolder += 1 }
            #expect(inFolder == keys.filter { $0.hasPrefix("é/") }.count)
            // One page with a delimiter: the five folders, nothing else.
            let call = GQLStorage.Call(
                method: "GET", bucket: "many", query: [("list-type", "2"), ("delimiter", "/")], operation: "list")
            let page = try #require(try fixture.storage.parseXML(try await fixture.storage.send(call), call: call))
            #expect(
                page.children("CommonPrefixes").compactMap { $0["Prefix"] } == ["a b/", "docs/", "photos/", "z/", "é/"])
            #expect(page.children("Contents").isEmpty)
            #expect(page["IsTruncated"] == "false")
        }
    }

    /// Uploads of one key racing: parts of every upload sent at once, then every completion at once; the object
    /// is one upload's bytes whole, with that upload's ETag. Then completions one after another in a seeded order:
    /// the last one wins.
    @Test func concurrentMultipartUploadsOfOneKeyLeaveOneWholeUpload() async throws {
        try await StorageFixture.with(configure: { $0.minimumPartSize = 1024 }) { fixture in
            let storage = fixture.storage
            let partSizes = [64 << 10, 64 << 10, 10_000]
            /// Upload `index`: every byte of it is `index`.
            @Sendable func start(_ index: Int) async throws -> (id: String, etags: [String]) {
                let create = GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "raced.bin", query: [("uploads", "")], operation: "upload")
                let id = try #require(try storage.parseXML(try await storage.send(create), call: create)?["UploadId"])
                let etags = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                    for (number, size) in partSizes.enumerated() {
                        group.addTask {
                            var part = GQLStorage.Call(
                                method: "PUT", bucket: "bucket", key: "raced.bin",
                                query: [("partNumber", String(number + 1)), ("uploadId", id)], operation: "upload")
                            part.body = Data(repeating: UInt8(index), count: size)
                            let response = try await storage.send(part)
                            return (number, response.headers.first(name: "ETag") ?? "")
                        }
                    }
                    var etags = [String](repeating: "", count: partSizes.count)
                    for try await (number, etag) in group { etags[number] = etag }
                    return etags
                }
                return (id, etags)
            }
            @Sendable func complete(_ upload: (id: String, etags: [String])) async throws -> String {
                var call = GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "raced.bin", query: [("uploadId", upload.id)],
                    operation: "upload")
                call.body = Data(
                    ("<CompleteMultipartUpload>"
                        + upload.etags.enumerated().map {
                            "<Part><PartNumber>\($0 + 1)</PartNumber><ETag>\($1)</ETag></Part>"
                        }
                        .joined() + "</CompleteMultipartUpload>").utf8)
                let answer = try storage.parseXML(try await storage.send(call), call: call)
                return GQLStorage.unquoted(answer?["ETag"] ?? "")
            }
            func object() async throws -> (bytes: Set<UInt8>, size: Int, etag: String?) {
                let data = try await storage.download("bucket", "raced.bin")
                let etag = try await storage.info("bucket", "raced.bin")?.etag
                return (Set(data), data.count, etag)
            }
            let total = partSizes.reduce(0, +)
            // Everything at once.
            let uploads = try await withThrowingTaskGroup(of: (Int, (id: String, etags: [String])).self) { group in
                for index in 1...6 { group.addTask { (index, try await start(index)) } }
                var uploads: [Int: (id: String, etags: [String])] = [:]
                for try await (index, upload) in group { uploads[index] = upload }
                return uploads
            }
            let etags = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for (index, upload) in uploads { group.addTask { (index, try await complete(upload)) } }
                var etags: [Int: String] = [:]
                for try await (index, etag) in group { etags[index] = etag }
                return etags
            }
            let raced = try await object()
            #expect(raced.size == total)
            #expect(raced.bytes.count == 1, "bytes of more than one upload: \(raced.bytes.sorted())")
            let winner = Int(raced.bytes.first ?? 0)
            #expect(raced.etag == etags[winner])
            #expect(etags.values.allSatisfy { $0.hasSuffix("-3") })
            // One after another, in a seeded order: the last completed is the object.
            var random = SplitMix64(seed: TestSeed.make("multipart completion order"))
            let order = Array(11...14).shuffled(using: &random)
            var started: [Int: (id: String, etags: [String])] = [:]
            for index in order { started[index] = try await start(index) }
            var lastETag = ""
            for index in order { lastETag = try await complete(try #require(started[index])) }
            let last = try await object()
            #expect(last.bytes == [UInt8(order[order.count - 1])])
            #expect(last.size == total)
            #expect(last.etag == lastETag)
        }
    }
}

import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// "A killed upload leaves no partial object": a client that declares a body, sends half of it and closes its
/// socket — a PutObject, an UploadPart, an `aws-chunked` upload cut between two signed chunks — leaves no object
/// and no part (GET and HEAD say NoSuchKey, a listing does not show it), or the earlier object or part whole when
/// there was one, and no file anywhere in the data folder that no record names.
///
/// Each cut upload declares 4 MiB and sends 2 MiB. The emulator writes its temporary file a MiB at a time, so the
/// test waits until that file has grown — the upload really was under way — before it closes the socket, then until
/// the emulator has removed it: it decides by those outcomes, with a bound of 10 s on each wait for a loaded machine.
@Suite struct StorageCutUploadTests {
    static let declared = 4 << 20
    static let sent = 2 << 20

    @Test func aPutObjectCutOffMidBodyLeavesNoObjectAndTheEarlierOneWhole() async throws {
        let seed = TestSeed.make("cut PutObject")
        try await StorageFixture.with { fixture in
            let earlier = StorageFixture.bytes(1 << 20, seed: seed)
            try await fixture.storage.upload("bucket", "kept.bin", earlier)
            let half = Array(StorageFixture.bytes(Self.sent, seed: seed &+ 1))
            for key in ["new.bin", "kept.bin"] {
                let (head, _) = Self.signedPut(fixture, key: key, contentLength: Self.declared)
                try await Self.cut(fixture, head: head, body: half)
            }
            try await Self.expectNoObject(fixture, "new.bin")
            #expect(try await fixture.storage.download("bucket", "kept.bin") == earlier)
            #expect(try await Self.keys(fixture) == ["kept.bin"])
            #expect(try Self.unreferencedFiles(fixture) == [])
        }
    }

    @Test func anUploadPartCutOffMidBodyLeavesNoPartAndTheEarlierPartWhole() async throws {
        let seed = TestSeed.make("cut UploadPart")
        try await StorageFixture.with(configure: { $0.minimumPartSize = 1 }) { fixture in
            let storage = fixture.storage
            let create = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploads", "")], operation: "upload")
            let uploadId = try #require(try storage.parseXML(try await storage.send(create), call: create)?["UploadId"])
            let first = StorageFixture.bytes(1 << 20, seed: seed)
            var part = GQLStorage.Call(
                method: "PUT", bucket: "bucket", key: "multi.bin",
                query: [("partNumber", "1"), ("uploadId", uploadId)],
                operation: "upload")
            part.body = first
            _ = try await storage.send(part)
            let half = Array(StorageFixture.bytes(Self.sent, seed: seed &+ 1))
            // Part 2 is new; part 1 is sent again over the whole one.
            for number in ["2", "1"] {
                let (head, _) = Self.signedPut(
                    fixture, key: "multi.bin", query: [("partNumber", number), ("uploadId", uploadId)],
                    contentLength: Self.declared)
                try await Self.cut(fixture, head: head, body: half)
            }
            let listParts = GQLStorage.Call(
                method: "GET", bucket: "bucket", key: "multi.bin", query: [("uploadId", uploadId)], operation: "upload")
            let parts = String(decoding: try await storage.send(listParts).body, as: UTF8.self)
            #expect(parts.contains("<PartNumber>1</PartNumber>"), "\(parts)")
            #expect(!parts.contains("<PartNumber>2</PartNumber>"), "\(parts)")
            #expect(try Self.unreferencedFiles(fixture) == [])
            try await Self.expectNoObject(fixture, "multi.bin")
            // The upload completes from the whole part 1, as it was before the cuts.
            let etag = Bytes.hex(MD5.hash(first))
            var complete = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploadId", uploadId)],
                headers: [("Content-Type", "application/xml")], operation: "upload")
            complete.body = Data(
                ("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"\(etag)\"</ETag></Part>"
                    + "</CompleteMultipartUpload>").utf8)
            _ = try await storage.send(complete)
            #expect(try await storage.download("bucket", "multi.bin") == first)
            #expect(try Self.unreferencedFiles(fixture) == [])
        }
    }

    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`, what the AWS SDKs send over http by default: one whole upload signed
    /// here chunk by chunk (the signing is right: the emulator stores it), then two cut after their second chunk.
    @Test func aChunkedUploadCutOffBetweenChunksLeavesNoObjectAndTheEarlierOneWhole() async throws {
        let seed = TestSeed.make("cut aws-chunked")
        try await StorageFixture.with { fixture in
            let earlier = Array(StorageFixture.bytes(Self.sent, seed: seed))
            let whole = try Self.chunkedPut(fixture, key: "kept.bin", data: earlier, declared: earlier.count)
            let answers = await (try RawConnection(port: fixture.started.port)).sendAndRead(whole)
            #expect(answers.first?.status == 200, "\(answers)")
            #expect(try await fixture.storage.download("bucket", "kept.bin") == Data(earlier))

            let half = Array(StorageFixture.bytes(Self.sent, seed: seed &+ 1))
            for key in ["new.bin", "kept.bin"] {
                let cut = try Self.chunkedPut(fixture, key: key, data: half, declared: Self.declared)
                try await Self.cut(fixture, head: "", body: cut)
            }
            try await Self.expectNoObject(fixture, "new.bin")
            #expect(try await fixture.storage.download("bucket", "kept.bin") == Data(earlier))
            #expect(try await Self.keys(fixture) == ["kept.bin"])
            #expect(try Self.unreferencedFiles(fixture) == [])
        }
    }

    /// What a process killed at each step of a write leaves, planted by hand, and what the next start makes of it:
    /// the emulator's own temporary files (UUID names) are removed, and so are a data file no record names, a
    /// part's file no part record names and an upload folder without its record; a file or folder of another name
    /// in `.tmp` is not the emulator's and stays, and the object and the upload's part stay whole.
    @Test func aStartRemovesWhatAKilledWriteLeftAndNothingElse() async throws {
        let directory = try TemporaryDirectory(prefix: "gql-s3emu-start")
        defer { directory.cleanup() }
        let folder = try GQLDataFolder(path: directory.path("data"))
        let store = try ObjectStore(folder: folder)
        try store.createBucket("bucket", at: Date())
        let bytes = Data("whole".utf8)
        var temporary = try folder.temporaryFileURL()
        try GQLDataFolder.writeSynced(bytes, to: temporary)
        try store.commit(
            "bucket", temporary: temporary,
            StoredObject(key: "kept.bin", size: 5, etag: Bytes.hex(MD5.hash(bytes)), lastModified: Date(), dataFile: "")
        )
        let uploads = try MultipartStore(folder: folder)
        let upload = try uploads.create(
            StoredUpload(id: "", bucket: "bucket", key: "multi.bin", initiated: Date(), headers: [:], metadata: [:]))
        temporary = try folder.temporaryFileURL()
        try GQLDataFolder.writeSynced(bytes, to: temporary)
        try await uploads.addPart(
            upload.id, temporary: temporary,
            StoredUpload.Part(number: 1, size: 5, etag: Bytes.hex(MD5.hash(bytes)), lastModified: Date(), file: ""))

        let root = folder.url
        let stale = [
            ".tmp/\(UUID().uuidString)", "buckets/bucket/data/\(UUID().uuidString)",
            "uploads/\(upload.id)/part-1-\(UUID().uuidString)",
            "uploads/\(String(repeating: "ab", count: 16))/part-1-x",
        ]
        let foreign = [".tmp/notes.txt", ".tmp/\(UUID().uuidString)/inside.txt"]
        for path in stale + foreign {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("left".utf8).write(to: url)
        }
        #expect(try Self.unreferencedFiles(root).count == stale.count + foreign.count)

        let reopened = try ObjectStore(folder: folder)
        let reopenedUploads = try MultipartStore(folder: folder)
        #expect(try Self.unreferencedFiles(root) == foreign.sorted())
        let (object, _) = try reopened.open("bucket", "kept.bin")
        #expect(object.size == 5)
        let part = try #require(try reopenedUploads.upload(upload.id, bucket: "bucket", key: "multi.bin").parts[1])
        #expect(try Data(contentsOf: reopenedUploads.partURL(upload.id, part)) == bytes)
        #expect(reopenedUploads.uploads(in: "bucket").map(\.id) == [upload.id])
    }

    // MARK: Cutting

    /// Sends `head` and `body` on a fresh connection, waits until the emulator's temporary file has grown to a MiB,
    /// closes the socket, and waits until the emulator has removed every temporary file.
    static func cut(_ fixture: StorageFixture, head: String, body: [UInt8]) async throws {
        let descriptor = try RawConnection.connect(port: fixture.started.port)
        let bytes = Array(head.utf8) + body
        let sent = await onThread { RawConnection.send(descriptor, bytes, timeout: 10) }
        let grew =
            sent == bytes.count ? await pollUntil { temporaries(fixture).contains { $0.size >= 1 << 20 } } : false
        close(descriptor)
        try #require(sent == bytes.count, "sent \(sent) of \(bytes.count) bytes")
        try #require(grew, "no temporary file grew to a MiB: \(temporaries(fixture))")
        let removed = await pollUntil { temporaries(fixture).isEmpty }
        try #require(removed, "temporary files left after the cut: \(temporaries(fixture))")
    }

    /// The files in the data folder's `.tmp`, with their sizes.
    static func temporaries(_ fixture: StorageFixture) -> [(name: String, size: Int)] {
        fileSizes(in: fixture.directory.url.appendingPathComponent("data/.tmp"))
    }

    // MARK: Signed requests on the wire

    /// The head of a PUT of `key` in `bucket` signed as GQLStorage signs (with `payloadHash`, `UNSIGNED-PAYLOAD`
    /// by default), and the headers signing added.
    static func signedPut(
        _ fixture: StorageFixture, key: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [], payloadHash: String = SigV4Signer.unsignedPayload,
        contentLength: Int
    ) -> (head: String, signed: [(name: String, value: String)]) {
        let host = "127.0.0.1:\(fixture.started.port)"
        let path = "/bucket/" + SigV4Signer.encodePath(key)
        let signed = fixture.storage.signer.sign(
            SigV4Signer.Request(
                method: "PUT", origin: fixture.started.url, host: host, encodedPath: path, query: query,
                headers: headers, payloadHash: payloadHash), at: Date())
        let target = path + (query.isEmpty ? "" : "?" + SigV4Signer.canonicalQuery(query))
        let head =
            "PUT \(target) HTTP/1.1\r\nHost: \(host)\r\n"
            + (headers + signed).map { "\($0.name): \($0.value)\r\n" }.joined()
            + "Content-Length: \(contentLength)\r\n\r\n"
        return (head, signed)
    }

    /// An `aws-chunked` PUT of `key` declaring `declared` bytes, carrying `data` in signed chunks of a MiB; the final
    /// empty chunk only when `data` is all of it.
    static func chunkedPut(_ fixture: StorageFixture, key: String, data: [UInt8], declared: Int) throws -> [UInt8] {
        let chunk = 1 << 20
        let chunks = stride(from: 0, to: data.count, by: chunk).map { Array(data[$0..<min($0 + chunk, data.count)]) }
        let signatureLength = 64
        func framing(_ size: Int) -> Int {
            String(size, radix: 16).utf8.count + ";chunk-signature=".utf8.count + signatureLength + 4
        }
        let fullSizes = stride(from: 0, to: declared, by: chunk).map { min(chunk, declared - $0) }
        let encodedLength = fullSizes.reduce(0) { $0 + framing($1) + $1 } + framing(0)
        let (head, signed) = signedPut(
            fixture, key: key,
            headers: [("Content-Encoding", "aws-chunked"), ("x-amz-decoded-content-length", String(declared))],
            payloadHash: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", contentLength: encodedLength)
        // The first chunk's signature chains from the request's (the seed), under the request's date and scope.
        let seed = try #require(
            signed.first { $0.name == "Authorization" }?.value.components(separatedBy: "Signature=").last)
        let stamp = try #require(signed.first { $0.name == "x-amz-date" }?.value)
        let day = String(stamp.prefix(8))
        let configuration = fixture.configuration
        let verifier = SigV4Verifier(
            accessKey: configuration.accessKey, secretKey: configuration.secretKey, region: configuration.region,
            clock: configuration.clock)
        var signer = ChunkSigner(
            key: verifier.signingKey(day), amzDate: stamp, scope: "\(day)/\(configuration.region)/s3/aws4_request",
            previous: seed)
        var out = Array(head.utf8)
        for piece in chunks + (data.count == declared ? [[]] : []) {
            let signature = signer.chunkSignature(dataHash: SHA256.hash(piece))
            out +=
                Array("\(String(piece.count, radix: 16));chunk-signature=\(signature)\r\n".utf8) + piece
                + Array("\r\n".utf8)
            signer.previous = signature
        }
        return out
    }

    // MARK: What is left

    /// Checks that GET and HEAD of `key` find no object.
    static func expectNoObject(_ fixture: StorageFixture, _ key: String) async throws {
        #expect(try await fixture.storage.info("bucket", key) == nil)
        do {
            _ = try await fixture.storage.download("bucket", key)
            Issue.record("GET \(key) found an object")
        } catch let error as GQLError {
            #expect(error.serviceCode == "NoSuchKey", "\(error)")
        }
    }

    /// The keys ListObjectsV2 shows.
    static func keys(_ fixture: StorageFixture) async throws -> [String] {
        var keys: [String] = []
        for try await object in fixture.storage.list("bucket") { keys.append(object.key) }
        return keys
    }

    /// Every file in the data folder (walked whole) that is neither a record nor named by one: a bucket's
    /// `bucket.json` and object records, the data files those records name, an upload's `upload.json` and part
    /// records, the part files those name, and the folder's `.lock`. A temporary or partial file left anywhere shows
    /// here.
    static func unreferencedFiles(_ fixture: StorageFixture) throws -> [String] {
        try unreferencedFiles(fixture.directory.url.appendingPathComponent("data"))
    }

    /// The same for the data folder `root`.
    static func unreferencedFiles(_ root: URL) throws -> [String] {
        let decoder = JSONDecoder()
        var files = Set<String>()
        var named = Set<String>()
        let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walk?.nextObject() as? URL {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            files.insert(relative)
            let parts = relative.split(separator: "/").map(String.init)
            switch (parts.first, parts.count) {
            case (".lock", 1):  // the running emulator's hold on the folder
                named.insert(relative)
            case ("buckets", 3) where parts[2] == "bucket.json":
                named.insert(relative)
            case ("buckets", 4) where parts[2] == "meta":
                let object = try decoder.decode(StoredObject.self, from: Data(contentsOf: url))
                named.formUnion([relative, "buckets/\(parts[1])/data/\(object.dataFile)"])
            case ("uploads", 3) where parts[2] == "upload.json":
                named.insert(relative)
            case ("uploads", 3) where parts[2].hasPrefix("part-") && parts[2].hasSuffix(".json"):
                let part = try decoder.decode(StoredUpload.Part.self, from: Data(contentsOf: url))
                named.formUnion([relative, "uploads/\(parts[1])/\(part.file)"])
            default: break
            }
        }
        return files.subtracting(named).sorted()
    }
}

extension RawConnection {
    /// Sends `bytes` and reads one answer.
    fileprivate func sendAndRead(_ bytes: [UInt8]) async -> [(status: Int, body: String)] {
        _ = await sendUntilBlocked(bytes, timeout: 10)
        return await readAnswers(1)
    }
}

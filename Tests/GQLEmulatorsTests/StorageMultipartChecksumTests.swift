import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

/// A multipart upload's checksums as S3 handles them today (its API reference, and its answers as recorded by
/// others' test suites): the whole object's CRC-64/NVME a CompleteMultipartUpload sends (`x-amz-checksum-crc64nvme`,
/// `x-amz-checksum-type: FULL_OBJECT`) is compared with the joined object's (`BadDigest`, the upload staying open),
/// an upload started with CRC64NVME or CRC32 FULL_OBJECT follows those rules for its parts and its completion. Sent
/// through GQLStorage's signed requests; the expected CRCs are computed here over the bytes sent.
@Suite struct StorageMultipartChecksumTests {
    /// The S3 error code and HTTP status of `call`'s refusal; `nil` when it was answered 2xx.
    static func refusal(_ storage: GQLStorage, _ call: GQLStorage.Call) async throws -> String? {
        do {
            _ = try await storage.send(call)
            return nil
        } catch let error as GQLError {
            return "\(error.serviceCode ?? "-") \(error.httpStatus.map(String.init) ?? "-")"
        }
    }

    /// Calls of one key's multipart upload.
    struct Upload {
        let storage: GQLStorage
        let key: String
        var id = ""

        func call(_ method: String, _ query: [(name: String, value: String)]) -> GQLStorage.Call {
            GQLStorage.Call(method: method, bucket: "bucket", key: key, query: query, operation: "upload")
        }

        /// Starts the upload with `headers`; the answer's headers.
        mutating func create(_ headers: [(name: String, value: String)] = []) async throws -> [String: String] {
            var create = call("POST", [("uploads", "")])
            create.headers = headers
            let response = try await storage.send(create)
            id = try #require(try storage.parseXML(response, call: create)?["UploadId"])
            var answered: [String: String] = [:]
            for name in ["x-amz-checksum-algorithm", "x-amz-checksum-type"] {
                answered[name] = response.headers.first(name: name)
            }
            return answered
        }

        func part(_ number: Int, _ body: Data, headers: [(name: String, value: String)] = []) -> GQLStorage.Call {
            var part = call("PUT", [("partNumber", String(number)), ("uploadId", id)])
            part.body = body
            part.headers = headers
            return part
        }

        /// Sends part `number`; its ETag and the CRC-64/NVME the answer carries.
        func send(_ number: Int, _ body: Data, headers: [(name: String, value: String)] = []) async throws
            -> (etag: String, crc64: String?)
        {
            let response = try await storage.send(part(number, body, headers: headers))
            return (
                response.headers.first(name: "ETag") ?? "", response.headers.first(name: "x-amz-checksum-crc64nvme")
            )
        }

        func complete(
            _ etags: [String], listing: (Int) -> String = { _ in "" }, headers: [(name: String, value: String)] = []
        ) -> GQLStorage.Call {
            var complete = call("POST", [("uploadId", id)])
            complete.body = Data(
                ("<CompleteMultipartUpload>"
                    + etags.enumerated().map {
                        "<Part><PartNumber>\($0 + 1)</PartNumber><ETag>\($1)</ETag>\(listing($0 + 1))</Part>"
                    }.joined() + "</CompleteMultipartUpload>").utf8)
            complete.headers = headers
            return complete
        }

        func listParts() async throws -> S3XML {
            let list = call("GET", [("uploadId", id)])
            return try #require(try storage.parseXML(try await storage.send(list), call: list))
        }
    }

    static func fixture(_ body: (GQLStorage) async throws -> Void) async throws {
        try await StorageFixture.with(configure: { $0.minimumPartSize = 1024 }, client: { $0.sendsChecksums = false }) {
            try await body($0.storage)
        }
    }

    static func head(_ storage: GQLStorage, _ key: String) async throws -> [String: String] {
        var head = GQLStorage.Call(method: "HEAD", bucket: "bucket", key: key, operation: "check")
        head.headers.append(("x-amz-checksum-mode", "ENABLED"))
        let response = try await storage.send(head)
        var found: [String: String] = [:]
        for name in ["x-amz-checksum-crc64nvme", "x-amz-checksum-crc32", "x-amz-checksum-type"] {
            found[name] = response.headers.first(name: name)
        }
        return found
    }

    static let parts = [70_000, 65_536, 1_234].enumerated().map { StorageFixture.bytes($1, seed: UInt64(200 + $0)) }
    static let whole = parts.reduce(Data(), +)

    /// An upload started without a checksum: the CRC-64/NVME its completion sends is the object's (S3's default
    /// checksum), or the completion is `BadDigest` and the upload stays open for a right one.
    @Test func theCRC64NVMEACompletionSendsIsComparedWithTheJoinedObjects() async throws {
        try await Self.fixture { storage in
            var upload = Upload(storage: storage, key: "default.bin")
            #expect(try await upload.create() == [:])
            var etags: [String] = []
            for (index, body) in Self.parts.enumerated() { etags.append(try await upload.send(index + 1, body).etag) }
            let wrong = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", CRC64NVME(Self.parts[0]).base64)])
            #expect(try await Self.refusal(storage, wrong) == "BadDigest 400")
            #expect(try await storage.info("bucket", "default.bin") == nil)
            #expect(try await upload.listParts().children("Part").count == 3, "the upload is still open")
            // S3 takes no checksum type for an upload started without an algorithm ("null" mode).
            let typed = upload.complete(
                etags,
                headers: [
                    ("x-amz-checksum-crc64nvme", CRC64NVME(Self.whole).base64), ("x-amz-checksum-type", "FULL_OBJECT"),
                ])
            #expect(try await Self.refusal(storage, typed) == "InvalidRequest 400")
            // Nor part checksums in the list.
            let listing = upload.complete(etags) {
                "<ChecksumCRC32>\(CRC32(Self.parts[$0 - 1]).base64)</ChecksumCRC32>"
            }
            #expect(try await Self.refusal(storage, listing) == "InvalidPart 400")

            let right = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", CRC64NVME(Self.whole).base64)])
            let answer = try #require(try storage.parseXML(try await storage.send(right), call: right))
            #expect(answer["ChecksumCRC64NVME"] == CRC64NVME(Self.whole).base64)
            #expect(answer["ChecksumType"] == "FULL_OBJECT")
            #expect(
                try await Self.head(storage, "default.bin")
                    == ["x-amz-checksum-crc64nvme": CRC64NVME(Self.whole).base64, "x-amz-checksum-type": "FULL_OBJECT"])
            #expect(try await storage.download("bucket", "default.bin") == Self.whole)
        }
    }

    /// `x-amz-checksum-algorithm: CRC64NVME` (FULL_OBJECT, its only type): parts declaring another algorithm or
    /// a wrong CRC are refused, one declaring none gets its CRC computed; the completion's checksum must come with
    /// `x-amz-checksum-type: FULL_OBJECT` and be the object's.
    @Test func anUploadStartedWithCRC64NVMEFollowsS3sFullObjectRules() async throws {
        try await Self.fixture { storage in
            var upload = Upload(storage: storage, key: "full.bin")
            #expect(
                try await upload.create([("x-amz-checksum-algorithm", "CRC64NVME")])
                    == ["x-amz-checksum-algorithm": "CRC64NVME", "x-amz-checksum-type": "FULL_OBJECT"])
            let crcs = Self.parts.map { CRC64NVME($0).base64 }
            let crc32: [(name: String, value: String)] = [("x-amz-checksum-crc32", CRC32(Self.parts[0]).base64)]
            #expect(
                try await Self.refusal(storage, upload.part(1, Self.parts[0], headers: crc32)) == "InvalidRequest 400")
            let wrong: [(name: String, value: String)] = [("x-amz-checksum-crc64nvme", crcs[1])]
            #expect(try await Self.refusal(storage, upload.part(1, Self.parts[0], headers: wrong)) == "BadDigest 400")
            var etags: [String] = []
            for (index, body) in Self.parts.enumerated() {
                // Part 2 declares no checksum: computed here, as its answer shows.
                let headers: [(name: String, value: String)] =
                    index == 1 ? [] : [("x-amz-checksum-crc64nvme", crcs[index])]
                let (etag, answered) = try await upload.send(index + 1, body, headers: headers)
                #expect(answered == crcs[index])
                etags.append(etag)
            }
            let listed = try await upload.listParts()
            #expect(listed["ChecksumAlgorithm"] == "CRC64NVME")
            #expect(listed["ChecksumType"] == "FULL_OBJECT")
            #expect(listed.children("Part").map { $0["ChecksumCRC64NVME"] } == crcs)
            let list = GQLStorage.Call(method: "GET", bucket: "bucket", query: [("uploads", "")], operation: "list")
            let uploads = try #require(try storage.parseXML(try await storage.send(list), call: list))
            #expect(uploads.children("Upload").map { $0["ChecksumAlgorithm"] } == ["CRC64NVME"])

            let object = CRC64NVME(Self.whole).base64
            let fullObject: (name: String, value: String) = ("x-amz-checksum-type", "FULL_OBJECT")
            let refused: [(headers: [(name: String, value: String)], listing: (Int) -> String, code: String)] = [
                ([("x-amz-checksum-type", "COMPOSITE")], { _ in "" }, "InvalidRequest 400"),
                ([("x-amz-checksum-crc64nvme", object)], { _ in "" }, "BadDigest 400"),  // no type
                ([("x-amz-checksum-crc32", CRC32(Self.whole).base64), fullObject], { _ in "" }, "BadDigest 400"),
                ([("x-amz-checksum-crc64nvme", crcs[0]), fullObject], { _ in "" }, "BadDigest 400"),
                ([], { "<ChecksumCRC64NVME>\(crcs[3 - $0])</ChecksumCRC64NVME>" }, "InvalidPart 400"),
                ([("x-amz-mp-object-size", String(Self.whole.count + 1))], { _ in "" }, "InvalidRequest 400"),
            ]
            for (headers, listing, code) in refused {
                let call = upload.complete(etags, listing: listing, headers: headers)
                #expect(try await Self.refusal(storage, call) == code, "\(headers)")
            }
            #expect(try await upload.listParts().children("Part").count == 3, "the upload is still open")

            let right = upload.complete(
                etags, listing: { "<ChecksumCRC64NVME>\(crcs[$0 - 1])</ChecksumCRC64NVME>" },
                headers: [
                    ("x-amz-checksum-crc64nvme", object), fullObject, ("x-amz-mp-object-size", "\(Self.whole.count)"),
                ])
            let answer = try #require(try storage.parseXML(try await storage.send(right), call: right))
            #expect(answer["ChecksumCRC64NVME"] == object)
            #expect(answer["ChecksumType"] == "FULL_OBJECT")
            #expect(
                try await Self.head(storage, "full.bin")
                    == ["x-amz-checksum-crc64nvme": object, "x-amz-checksum-type": "FULL_OBJECT"])
            #expect(try await storage.download("bucket", "full.bin") == Self.whole)
        }
    }

    /// CRC32 with `x-amz-checksum-type: FULL_OBJECT`: the object's checksum is the CRC-32 of its whole bytes
    /// (combined from the parts'), checked against the completion's; the composite default needs every part's
    /// CRC-32 listed.
    @Test func crc32UploadsAreFullObjectOrCompositeAsStarted() async throws {
        try await Self.fixture { storage in
            var full = Upload(storage: storage, key: "crc32-full.bin")
            #expect(
                try await full.create([("x-amz-checksum-algorithm", "crc32"), ("x-amz-checksum-type", "FULL_OBJECT")])
                    == ["x-amz-checksum-algorithm": "CRC32", "x-amz-checksum-type": "FULL_OBJECT"])
            var etags: [String] = []
            for (index, body) in Self.parts.enumerated() { etags.append(try await full.send(index + 1, body).etag) }
            let fullObject: (name: String, value: String) = ("x-amz-checksum-type", "FULL_OBJECT")
            let wrong = full.complete(
                etags, headers: [("x-amz-checksum-crc32", CRC32(Self.parts[2]).base64), fullObject])
            #expect(try await Self.refusal(storage, wrong) == "BadDigest 400")
            let right = full.complete(etags, headers: [("x-amz-checksum-crc32", CRC32(Self.whole).base64), fullObject])
            let answer = try #require(try storage.parseXML(try await storage.send(right), call: right))
            #expect(answer["ChecksumCRC32"] == CRC32(Self.whole).base64)
            #expect(answer["ChecksumType"] == "FULL_OBJECT")
            #expect(
                try await Self.head(storage, "crc32-full.bin")
                    == ["x-amz-checksum-crc32": CRC32(Self.whole).base64, "x-amz-checksum-type": "FULL_OBJECT"])

            var composite = Upload(storage: storage, key: "crc32-composite.bin")
            #expect(
                try await composite.create([("x-amz-checksum-algorithm", "CRC32")])
                    == ["x-amz-checksum-algorithm": "CRC32", "x-amz-checksum-type": "COMPOSITE"])
            etags = []
            for (index, body) in Self.parts.enumerated() {
                etags.append(try await composite.send(index + 1, body).etag)
            }
            let crcs = Self.parts.map { CRC32($0) }
            let missing = composite.complete(etags) {
                $0 == 2 ? "" : "<ChecksumCRC32>\(crcs[$0 - 1].base64)</ChecksumCRC32>"
            }
            #expect(try await Self.refusal(storage, missing) == "InvalidRequest 400")
            let listed = composite.complete(etags) { "<ChecksumCRC32>\(crcs[$0 - 1].base64)</ChecksumCRC32>" }
            let done = try #require(try storage.parseXML(try await storage.send(listed), call: listed))
            #expect(done["ChecksumCRC32"] == CRC32.composite(crcs))
            #expect(done["ChecksumType"] == "COMPOSITE")
        }
    }

    /// CreateMultipartUpload's refusals: a type without an algorithm, an unknown algorithm, a composite
    /// CRC-64/NVME, a full-object SHA-256.
    @Test func createMultipartUploadRefusesWhatS3Refuses() async throws {
        try await Self.fixture { storage in
            let refused: [[(name: String, value: String)]] = [
                [("x-amz-checksum-type", "FULL_OBJECT")],
                [("x-amz-checksum-algorithm", "TEST")],
                [("x-amz-checksum-algorithm", "CRC64NVME"), ("x-amz-checksum-type", "COMPOSITE")],
                [("x-amz-checksum-algorithm", "SHA256"), ("x-amz-checksum-type", "FULL_OBJECT")],
                [("x-amz-checksum-algorithm", "CRC32"), ("x-amz-checksum-type", "WHOLE")],
            ]
            for headers in refused {
                var create = GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "refused.bin", query: [("uploads", "")], operation: "upload")
                create.headers = headers
                #expect(try await Self.refusal(storage, create) == "InvalidRequest 400", "\(headers)")
            }
            let list = GQLStorage.Call(method: "GET", bucket: "bucket", query: [("uploads", "")], operation: "list")
            let uploads = try #require(try storage.parseXML(try await storage.send(list), call: list))
            #expect(uploads.children("Upload").isEmpty)
        }
    }
}

import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

/// S3's default checksum, as its API documents it today: an object uploaded without a checksum gets the CRC-64/NVME
/// of its whole bytes ("full object"), answered on PutObject, on HeadObject and GetObject with ChecksumMode ENABLED
/// (not for a range), in CompleteMultipartUpload's answer, in CopyObject's and in listings. An upload that sent
/// CRC-32 keeps only that. GQLStorage uploading without checksums reads such objects back unchanged. The expected
/// CRCs are computed here over the bytes sent (GQLCrypto's CRC64NVME, checked against a bitwise reference in
/// CRC64NVMETests and against Python in Tests/Interop/s3_client_checks.py).
@Suite struct StorageDefaultChecksumTests {
    /// The checksum headers of `call`'s answer.
    static func checksums(_ storage: GQLStorage, _ call: GQLStorage.Call) async throws -> [String: String] {
        let response = try await storage.send(call)
        var found: [String: String] = [:]
        for name in ["x-amz-checksum-crc64nvme", "x-amz-checksum-crc32", "x-amz-checksum-type"] {
            found[name] = response.headers.first(name: name)
        }
        return found
    }

    static func call(_ method: String, _ key: String, mode: Bool = true, range: String? = nil) -> GQLStorage.Call {
        var call = GQLStorage.Call(method: method, bucket: "bucket", key: key, operation: "check")
        if mode { call.headers.append(("x-amz-checksum-mode", "ENABLED")) }
        if let range { call.headers.append(("Range", range)) }
        return call
    }

    @Test func aPutWithoutAChecksumGetsItsCRC64NVME() async throws {
        try await StorageFixture.with(client: { $0.sendsChecksums = false }) { fixture in
            let storage = fixture.storage
            let data = StorageFixture.bytes(70_001, seed: 64)
            let expected = CRC64NVME(data).base64
            var put = GQLStorage.Call(method: "PUT", bucket: "bucket", key: "plain.bin", operation: "upload")
            put.body = data
            #expect(
                try await Self.checksums(storage, put)
                    == ["x-amz-checksum-crc64nvme": expected, "x-amz-checksum-type": "FULL_OBJECT"])
            for method in ["HEAD", "GET"] {
                #expect(
                    try await Self.checksums(storage, Self.call(method, "plain.bin"))
                        == ["x-amz-checksum-crc64nvme": expected, "x-amz-checksum-type": "FULL_OBJECT"], "\(method)")
            }
            #expect(try await Self.checksums(storage, Self.call("HEAD", "plain.bin", mode: false)) == [:])
            #expect(try await Self.checksums(storage, Self.call("GET", "plain.bin", range: "bytes=0-99")) == [:])

            // GQLStorage itself, without checksums: the same object up and down, listed, copied.
            try await storage.upload("bucket", "by-gqlstorage.bin", data)
            #expect(try await storage.download("bucket", "by-gqlstorage.bin") == data)
            #expect(try await storage.info("bucket", "by-gqlstorage.bin")?.size == data.count)
            #expect(
                try await Self.checksums(storage, Self.call("HEAD", "by-gqlstorage.bin"))["x-amz-checksum-crc64nvme"]
                    == expected)
            let list = GQLStorage.Call(method: "GET", bucket: "bucket", query: [("list-type", "2")], operation: "list")
            let page = try #require(try storage.parseXML(try await storage.send(list), call: list))
            #expect(page.children("Contents").map { $0["ChecksumAlgorithm"] } == ["CRC64NVME", "CRC64NVME"])
            var copy = GQLStorage.Call(method: "PUT", bucket: "bucket", key: "copy.bin", operation: "copy")
            copy.headers.append(("x-amz-copy-source", "/bucket/plain.bin"))
            let copied = try #require(try storage.parseXML(try await storage.send(copy), call: copy))
            #expect(copied["ChecksumCRC64NVME"] == expected)
            #expect(
                try await Self.checksums(storage, Self.call("HEAD", "copy.bin"))["x-amz-checksum-crc64nvme"] == expected
            )
        }
    }

    @Test func anUploadWithACRC32KeepsThatOneOnly() async throws {
        try await StorageFixture.with { fixture in
            let data = StorageFixture.bytes(5_000, seed: 32)
            try await fixture.storage.upload("bucket", "crc32.bin", data)
            // A single upload's CRC-32 is of the full object, as the PUT's answer says, on HEAD, GET and listings.
            for method in ["HEAD", "GET"] {
                #expect(
                    try await Self.checksums(fixture.storage, Self.call(method, "crc32.bin"))
                        == ["x-amz-checksum-crc32": CRC32(data).base64, "x-amz-checksum-type": "FULL_OBJECT"],
                    "\(method)")
            }
            let list = GQLStorage.Call(method: "GET", bucket: "bucket", query: [("list-type", "2")], operation: "list")
            let page = try #require(try fixture.storage.parseXML(try await fixture.storage.send(list), call: list))
            #expect(page.children("Contents").map { $0["ChecksumType"] } == ["FULL_OBJECT"])
        }
    }

    @Test func aCRC64NVMESentIsCheckedAndKept() async throws {
        try await StorageFixture.with(client: { $0.sendsChecksums = false }) { fixture in
            let data = StorageFixture.bytes(3_000, seed: 65)
            var wrong = GQLStorage.Call(method: "PUT", bucket: "bucket", key: "sent.bin", operation: "upload")
            wrong.body = data
            wrong.headers.append(("x-amz-checksum-crc64nvme", CRC64NVME(data.dropLast()).base64))
            await #expect {
                _ = try await fixture.storage.send(wrong)
            } throws: { error in
                "\(error)".contains("BadDigest")
            }
            #expect(try await fixture.storage.info("bucket", "sent.bin") == nil)
            var right = wrong
            right.headers = [("x-amz-checksum-crc64nvme", CRC64NVME(data).base64)]
            _ = try await fixture.storage.send(right)
            #expect(
                try await Self.checksums(fixture.storage, Self.call("HEAD", "sent.bin"))
                    == ["x-amz-checksum-crc64nvme": CRC64NVME(data).base64, "x-amz-checksum-type": "FULL_OBJECT"])
        }
    }

    /// Parts of different sizes sent without checksums: the answer to the completion carries the whole object's
    /// CRC-64/NVME (computed here over the whole bytes, where the emulator combines the parts').
    @Test func aMultipartUploadWithoutChecksumsGetsTheWholeObjectsCRC64NVME() async throws {
        try await StorageFixture.with(
            configure: { $0.minimumPartSize = 1024 }, client: { $0.sendsChecksums = false }
        ) { fixture in
            let storage = fixture.storage
            let parts = [70_000, 65_536, 1_234].enumerated().map { StorageFixture.bytes($1, seed: UInt64(100 + $0)) }
            let create = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploads", "")], operation: "upload")
            let id = try #require(try storage.parseXML(try await storage.send(create), call: create)?["UploadId"])
            var etags: [String] = []
            for (number, body) in parts.enumerated() {
                var part = GQLStorage.Call(
                    method: "PUT", bucket: "bucket", key: "multi.bin",
                    query: [("partNumber", String(number + 1)), ("uploadId", id)], operation: "upload")
                part.body = body
                etags.append(try await storage.send(part).headers.first(name: "ETag") ?? "")
            }
            var complete = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploadId", id)], operation: "upload")
            complete.body = Data(
                ("<CompleteMultipartUpload>"
                    + etags.enumerated().map { "<Part><PartNumber>\($0 + 1)</PartNumber><ETag>\($1)</ETag></Part>" }
                    .joined() + "</CompleteMultipartUpload>").utf8)
            let answer = try #require(try storage.parseXML(try await storage.send(complete), call: complete))
            let whole = parts.reduce(Data(), +)
            #expect(answer["ChecksumCRC64NVME"] == CRC64NVME(whole).base64)
            #expect(answer["ChecksumType"] == "FULL_OBJECT")
            #expect(answer["ChecksumCRC32"] == nil)
            #expect(
                try await Self.checksums(storage, Self.call("HEAD", "multi.bin"))
                    == ["x-amz-checksum-crc64nvme": CRC64NVME(whole).base64, "x-amz-checksum-type": "FULL_OBJECT"])
            #expect(try await storage.download("bucket", "multi.bin") == whole)
        }
    }
}

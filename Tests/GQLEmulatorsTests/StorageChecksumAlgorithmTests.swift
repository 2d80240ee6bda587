import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

/// The checksum algorithms S3 names today beyond the first five (MD5, SHA-512, the XXHashes): every one is taken by
/// CreateMultipartUpload with the checksum types S3 allows it, and a part declaring another algorithm than its
/// upload's is refused; MD5, which the emulator computes, is checked and listed for each part.
@Suite struct StorageChecksumAlgorithmTests {
    typealias Upload = StorageMultipartChecksumTests.Upload

    /// Each algorithm's types: composite for all but CRC-64/NVME, full-object for the CRCs only.
    @Test func createMultipartUploadTakesEveryAlgorithmWithItsTypes() async throws {
        try await StorageMultipartChecksumTests.fixture { storage in
            for algorithm in ["MD5", "SHA512", "XXHASH64", "XXHASH3", "XXHASH128", "CRC32C"] {
                var upload = Upload(storage: storage, key: "\(algorithm).bin")
                let created = try await upload.create([("x-amz-checksum-algorithm", algorithm)])
                #expect(created == ["x-amz-checksum-algorithm": algorithm, "x-amz-checksum-type": "COMPOSITE"])
                var full = GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "full.bin", query: [("uploads", "")], operation: "upload")
                full.headers = [("x-amz-checksum-algorithm", algorithm), ("x-amz-checksum-type", "FULL_OBJECT")]
                let expected = algorithm == "CRC32C" ? nil : "InvalidRequest 400"
                let refused = try await StorageMultipartChecksumTests.refusal(storage, full)
                #expect(refused == expected, "\(algorithm)")
            }
        }
    }

    /// A part declaring MD5 on a CRC32 upload (and CRC32 on an MD5 one) is refused before its body is kept; an MD5
    /// upload's parts are checked against the MD5 they send, listed with it, and its completion needs each part's.
    @Test func md5PartsAreCheckedListedAndRequired() async throws {
        try await StorageMultipartChecksumTests.fixture { storage in
            let parts = StorageMultipartChecksumTests.parts
            let md5s = parts.map { Data(MD5.hash($0)).base64EncodedString() }
            var crc32 = Upload(storage: storage, key: "crc32.bin")
            _ = try await crc32.create([("x-amz-checksum-algorithm", "CRC32")])
            let declaresMD5 = crc32.part(1, parts[0], headers: [("x-amz-checksum-md5", md5s[0])])
            let mismatch = try await StorageMultipartChecksumTests.refusal(storage, declaresMD5)
            #expect(mismatch == "InvalidRequest 400")
            let kept = try await crc32.listParts().children("Part")
            #expect(kept.isEmpty)

            var upload = Upload(storage: storage, key: "md5.bin")
            _ = try await upload.create([("x-amz-checksum-algorithm", "MD5")])
            let declaresCRC32 = upload.part(1, parts[0], headers: [("x-amz-checksum-crc32", CRC32(parts[0]).base64)])
            let declared = try await StorageMultipartChecksumTests.refusal(storage, declaresCRC32)
            #expect(declared == "InvalidRequest 400")
            let wrong = upload.part(1, parts[0], headers: [("x-amz-checksum-md5", md5s[1])])
            let wrongDigest = try await StorageMultipartChecksumTests.refusal(storage, wrong)
            #expect(wrongDigest == "BadDigest 400")
            var etags: [String] = []
            for (index, body) in parts.enumerated() {
                let headers: [(name: String, value: String)] = index == 1 ? [] : [("x-amz-checksum-md5", md5s[index])]
                let response = try await storage.send(upload.part(index + 1, body, headers: headers))
                #expect(response.headers.first(name: "x-amz-checksum-md5") == md5s[index])
                etags.append(response.headers.first(name: "ETag") ?? "")
            }
            let listed = try await upload.listParts()
            #expect(listed["ChecksumAlgorithm"] == "MD5")
            #expect(listed.children("Part").map { $0["ChecksumMD5"] } == md5s)

            let refused: [(listing: (Int) -> String, code: String)] = [
                ({ $0 == 2 ? "" : "<ChecksumMD5>\(md5s[$0 - 1])</ChecksumMD5>" }, "InvalidRequest 400"),
                ({ "<ChecksumMD5>\(md5s[3 - $0])</ChecksumMD5>" }, "InvalidPart 400"),
            ]
            for (listing, code) in refused {
                let call = upload.complete(etags, listing: listing)
                let refusal = try await StorageMultipartChecksumTests.refusal(storage, call)
                #expect(refusal == code)
            }
            let right = upload.complete(etags) { "<ChecksumMD5>\(md5s[$0 - 1])</ChecksumMD5>" }
            _ = try await storage.send(right)
            let downloaded = try await storage.download("bucket", "md5.bin")
            #expect(downloaded == StorageMultipartChecksumTests.whole)
        }
    }
}

/// An upload started without an algorithm: ListParts answers each part's default CRC-64/NVME (S3's `Part`:
/// present "if the object was uploaded without a checksum"), and a completion may echo them back.
@Suite struct StorageDefaultPartChecksumTests {
    @Test func listPartsAnswersTheDefaultCRC64NVMEAndTakesItEchoed() async throws {
        try await StorageMultipartChecksumTests.fixture { storage in
            let parts = StorageMultipartChecksumTests.parts
            let crcs = parts.map { CRC64NVME($0).base64 }
            var upload = StorageMultipartChecksumTests.Upload(storage: storage, key: "default.bin")
            _ = try await upload.create()
            var etags: [String] = []
            for (index, body) in parts.enumerated() { etags.append(try await upload.send(index + 1, body).etag) }
            let listed = try await upload.listParts()
            #expect(listed["ChecksumAlgorithm"] == nil)
            #expect(listed.children("Part").map { $0["ChecksumCRC64NVME"] } == crcs)
            let swapped = upload.complete(etags) { "<ChecksumCRC64NVME>\(crcs[3 - $0])</ChecksumCRC64NVME>" }
            let swappedRefusal = try await StorageMultipartChecksumTests.refusal(storage, swapped)
            #expect(swappedRefusal == "InvalidPart 400")
            let echoed = upload.complete(etags) { "<ChecksumCRC64NVME>\(crcs[$0 - 1])</ChecksumCRC64NVME>" }
            let answer = try #require(try storage.parseXML(try await storage.send(echoed), call: echoed))
            #expect(answer["ChecksumCRC64NVME"] == CRC64NVME(StorageMultipartChecksumTests.whole).base64)
        }
    }
}

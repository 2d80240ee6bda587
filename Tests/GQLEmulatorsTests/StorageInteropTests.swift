import Foundation
import GQLCore
import GQLEmulators
import GQLTestSupport
import Testing

/// boto3 and botocore, the AWS SDK for Python, at their defaults against the storage emulator
/// (Tests/Interop/s3_client_checks.py): an independent client must accept it.
@Suite(.serialized) struct StorageInteropTests {
    /// Runs one check of the script against a fresh emulator and returns what it saw.
    static func check(_ name: String) async throws -> GQLValue {
        try await StorageFixture.clientCheck("s3_client_checks.py", name, bucket: "boto-bucket")
    }

    @Test func uploadFileGoesInPartsAndDownloadFileInRanges() async throws {
        let seen = try await Self.check("transfers")
        let size: Int64 = 20 * 1024 * 1024 + 12345
        #expect(seen["sentTotal"]?.intValue == size)
        #expect(seen["etag"]?.stringValue?.hasSuffix("-3\"") == true, "multipart ETag: \(seen)")
        #expect(seen["metadata"] == ["origin": "boto3"])
        #expect(seen["contentType"]?.stringValue == "application/x-test")
        #expect(seen["contentLength"]?.intValue == size)
        #expect(seen["downloadedSame"] == true)
        #expect(seen["receivedTotal"]?.intValue == size)
        #expect(seen["rangeStatus"]?.intValue == 206)
        #expect(seen["contentRange"]?.stringValue == "bytes 100-199/\(size)")
        #expect(seen["rangeSame"] == true)
        #expect(seen["smallETag"]?.stringValue?.count == 34)
    }

    @Test func listingsPageAndRollUpAndDeleteObjectsDeletes() async throws {
        let seen = try await Self.check("listing")
        #expect(seen["count"]?.intValue == 251)
        #expect(seen["pages"]?.intValue == 3)
        #expect(seen["listedSorted"] == true)
        #expect(seen["commonPrefixes"] == ["list/a/", "list/b/"])
        #expect(seen["folderKeys"] == ["list/top.txt"])
        #expect(seen["v1Truncated"] == true)
        #expect(seen["v1Count"]?.intValue == 10)
        #expect(seen["deleted"]?.intValue == 50)
        #expect(seen["left"]?.intValue == 201)
    }

    /// S3's default CRC-64/NVME, read by boto3 at its defaults; the script computes the expected value from the
    /// definition (botocore can compute it only with the AWS CRT, which it does not have here, so it does not
    /// check the body against it itself).
    @Test func anObjectUploadedWithoutAChecksumCarriesS3sDefaultCRC64NVME() async throws {
        let seen = try await Self.check("defaultChecksum")
        let expected = try #require(seen["expected"]?.stringValue)
        #expect(seen["putAnswer"]?.stringValue == expected)
        #expect(seen["head"]?.stringValue == expected)
        #expect(seen["headType"]?.stringValue == "FULL_OBJECT")
        #expect(seen["get"]?.stringValue == expected)
        #expect(seen["getSame"] == true)
        #expect(seen["withoutMode"] == false)
        #expect(seen["crc32Object"]?["crc32"]?.stringValue?.count == 8, "\(seen)")
        #expect(seen["crc32Object"]?["crc64nvme"] == .null, "\(seen)")
        #expect(seen["listed"] == ["default/crc32.bin": ["CRC32"], "default/plain.bin": ["CRC64NVME"]])
    }

    /// A whole-object CRC-64/NVME sent with CompleteMultipartUpload (boto3's low-level client; at its defaults
    /// boto3 sends none, as recorded here), checked against the joined object: a wrong one is S3's `BadDigest` (400)
    /// and leaves the upload open, the right one completes and the object reports it.
    @Test func aFullObjectCRC64NVMEOnCompletionIsChecked() async throws {
        let seen = try await StorageFixture.clientCheck(
            "s3_client_checks.py", "fullObjectChecksum", bucket: "boto-bucket", configure: { $0.minimumPartSize = 1024 }
        )
        // upload_file at its defaults: CRC32 composite, nothing for the whole object at the completion.
        let defaults = try #require(seen["defaults"])
        #expect(defaults["CreateMultipartUpload"] == [["x-amz-checksum-algorithm": "CRC32"]], "\(seen)")
        #expect(defaults["CompleteMultipartUpload"] == [[:]], "\(seen)")
        // Read back whole, and its composite CRC-32 answered with x-amz-checksum-mode: ENABLED.
        #expect(seen["defaultsSame"] == true)
        let composite = try #require(seen["defaultsExpected"]?.stringValue)
        #expect(seen["defaultsHead"] == [.string(composite), "COMPOSITE"], "\(seen)")
        #expect(seen["created"] == ["CRC64NVME", "FULL_OBJECT"])
        #expect(seen["defaultPart"] == "InvalidRequest", "a part with botocore's default CRC-32")
        #expect(seen["wrong"] == ["BadDigest", 400])
        #expect(seen["stillOpen"] == 2)
        let expected = try #require(seen["expected"]?.stringValue)
        #expect(seen["completed"] == [.string(expected), "FULL_OBJECT"])
        #expect(seen["head"] == [.string(expected), "FULL_OBJECT"])
        #expect(seen["same"] == true)
    }

    @Test func presignedURLsFromBotocoreWork() async throws {
        let seen = try await Self.check("presigned")
        #expect(seen["putStatus"]?.intValue == 200)
        #expect(seen["got"]?.stringValue == "hello from a presigned PUT")
        #expect(seen["v2"] == true, "botocore's default presigned URL is Signature Version 2: \(seen)")
        #expect(seen["v4"] == true)
        #expect(seen["gotV4"]?.stringValue == "hello from a presigned PUT")
        #expect(seen["alteredStatus"]?.intValue == 403)
        #expect(seen["alteredSignatureMismatch"] == true)
    }

    @Test func aWrongSecretAndAnUnknownKeyAreRefused() async throws {
        let seen = try await Self.check("refusals")
        #expect(seen["wrongSecret"]?.stringValue == "SignatureDoesNotMatch")
        #expect(seen["unknownKey"]?.stringValue == "InvalidAccessKeyId")
        #expect(seen["missing"]?.stringValue == "NoSuchKey")
        #expect(seen["missingHead"]?.stringValue == "404")
    }

    @Test func virtualHostedAddressingAndCopyWork() async throws {
        let seen = try await Self.check("virtualHosted")
        #expect(seen["body"]?.stringValue == "virtual")
        #expect(seen["metadata"] == ["b": "2"])
    }
}

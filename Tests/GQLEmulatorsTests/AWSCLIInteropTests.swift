import Foundation
import GQLCore
import GQLCrypto
import Testing

/// The AWS CLI (`aws s3`, `aws s3api`, pinned in Tests/Interop/requirements.txt) at its defaults against the storage
/// emulator (Tests/Interop/aws_cli_checks.py): every command runs with `--endpoint-url` on 127.0.0.1 and a HOME and
/// AWS_CONFIG_FILE of its own, so nothing of the machine's configuration is read.
@Suite(.serialized) struct AWSCLIInteropTests {
    static func check(_ name: String) async throws -> GQLValue {
        try await StorageFixture.clientCheck("aws_cli_checks.py", name, bucket: "cli-bucket")
    }

    @Test func cpGoesUpInPartsAndComesDownWholeAndLsListsAPrefix() async throws {
        let seen = try await Self.check("transfers")
        #expect(seen["etag"]?.stringValue?.hasSuffix("-3\"") == true, "17 MiB in the CLI's 8 MiB parts: \(seen)")
        let size: Int64 = 17 * 1024 * 1024 + 4321
        #expect(seen["contentLength"]?.intValue == size)
        #expect(seen["downloadedSame"] == true)
        #expect(seen["listing"] == ["PRE sub/", "OBJ big file.bin"])
    }

    @Test func syncUploadsOnlyWhatChangedAndRmRecursiveEmptiesThePrefix() async throws {
        let seen = try await Self.check("sync")
        #expect(seen["firstUploads"]?.intValue == 4)
        #expect(seen["secondUploads"] == ["s3://cli-bucket/sync/a.txt"])
        #expect(seen["downloadedSame"] == true)
        #expect(
            seen["recursive"] == [
                "sync/a.txt", "sync/nested/b.txt", "sync/nested/deeper/c.bin", "sync/with space/d.txt",
            ])
        #expect(seen["removed"]?.intValue == 4)
        #expect(seen["left"]?.intValue == 0)
    }

    @Test func s3apiPutHeadAndPagedListWork() async throws {
        let seen = try await Self.check("s3api")
        let md5 = "\"" + Bytes.hex(MD5.hash(Data("put through s3api".utf8))) + "\""
        #expect(seen["putETag"]?.stringValue == md5)
        #expect(seen["headETag"]?.stringValue == md5)
        #expect(seen["contentType"]?.stringValue == "text/plain")
        #expect(seen["metadata"] == ["origin": "awscli"])
        #expect(seen["contentLength"]?.intValue == 17)
        #expect(seen["pages"]?.intValue == 2, "6 keys, --max-items 4: \(seen)")
        #expect(seen["keys"] == .array((0..<6).map { .string("api/page/\($0).txt") }))
    }

    @Test func presignedURLsOfBothSignatureVersionsWork() async throws {
        let seen = try await Self.check("presign")
        #expect(seen["presignedV2"] == true, "the CLI presigns with Signature Version 2 by default: \(seen)")
        #expect(seen["presignedGot"]?.stringValue == "put through s3api")
        #expect(seen["presignedV4"] == true)
        #expect(seen["presignedV4Got"]?.stringValue == "put through s3api")
        #expect(seen["alteredStatus"] == [403, 403])
    }

    @Test func aWrongSecretAndAnUnknownKeyAreRefused() async throws {
        let seen = try await Self.check("refusals")
        #expect(seen["wrongSecret"]?["code"]?.stringValue == "SignatureDoesNotMatch")
        #expect(seen["wrongSecret"]?["status"]?.intValue != 0)
        #expect(seen["unknownKey"]?["code"]?.stringValue == "InvalidAccessKeyId")
        #expect(seen["unknownKey"]?["status"]?.intValue != 0)
        #expect(seen["missing"]?["status"]?.intValue != 0)
        #expect(seen["missing"]?["says404"] == true)
    }
}

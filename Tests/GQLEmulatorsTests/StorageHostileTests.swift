import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto
import GQLServices
import NIOCore
import Testing

@testable import GQLEmulators

/// Signed requests in hostile hands: the holder of a presigned URL or a signed stream may send what the signature
/// covers, nothing more.
@Suite struct StorageHostileTests {
    @Test func aPresignedPutRefusesUnsignedAmzHeadersSuchAsACopySource() async throws {
        try await StorageFixture.with(buckets: ["bucket", "private"]) { fixture in
            try await fixture.storage.upload("private", "secret.txt", Data("the secret".utf8))
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            let put = try fixture.storage.presignedURL(.put, "bucket", "k.txt", expires: .seconds(60))
            var request = HTTPClientRequest(url: put.absoluteString)
            request.method = .PUT
            request.headers.add(name: "x-amz-copy-source", value: "private/secret.txt")
            let refused = try await client.execute(request, timeout: .seconds(10))
            #expect(refused.status == .forbidden)
            #expect(String(buffer: try await refused.body.collect(upTo: 4096)).contains("were not signed"))
            #expect(try await fixture.storage.info("bucket", "k.txt") == nil)
        }
    }

    @Test func aPresignedPutWithAContentHashChecksTheBody() async throws {
        try await StorageFixture.with { fixture in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            let hash = Bytes.hex(SHA256.hash(Array("hello".utf8)))
            let url = Self.presignedPut(fixture, path: "/bucket/k.txt", contentHash: hash)
            var wrong = HTTPClientRequest(url: url)
            wrong.method = .PUT
            wrong.body = .bytes(ByteBuffer(string: "bye!!"))
            let refused = try await client.execute(wrong, timeout: .seconds(10))
            #expect(refused.status == .badRequest)
            #expect(String(buffer: try await refused.body.collect(upTo: 4096)).contains("XAmzContentSHA256Mismatch"))
            #expect(try await fixture.storage.info("bucket", "k.txt") == nil)
            var right = HTTPClientRequest(url: url)
            right.method = .PUT
            right.body = .bytes(ByteBuffer(string: "hello"))
            let stored = try await client.execute(right, timeout: .seconds(10))
            #expect(stored.status == .ok)
            #expect(try await fixture.storage.download("bucket", "k.txt") == Data("hello".utf8))
        }
    }

    /// A presigned PUT URL whose signed query carries `X-Amz-Content-Sha256` (GQLStorage's presigner never adds
    /// one; some SDKs do), signed here by SigV4's steps.
    static func presignedPut(_ fixture: StorageFixture, path: String, contentHash: String) -> String {
        let configuration = fixture.configuration
        let stamp = Self.stamp(Date())
        let day = String(stamp.prefix(8))
        let scope = "\(day)/\(configuration.region)/s3/aws4_request"
        let query = [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Content-Sha256=\(contentHash)",
            "X-Amz-Credential=\(configuration.accessKey)%2F\(scope.replacingOccurrences(of: "/", with: "%2F"))",
            "X-Amz-Date=\(stamp)", "X-Amz-Expires=60", "X-Amz-SignedHeaders=host",
        ].joined(separator: "&")
        let host = String(fixture.started.url.dropFirst("http://".count))
        let canonical = ["PUT", path, query, "host:\(host)\n", "host", contentHash].joined(separator: "\n")
        let stringToSign = [
            "AWS4-HMAC-SHA256", stamp, scope, Bytes.hex(SHA256.hash(Array(canonical.utf8))),
        ].joined(separator: "\n")
        var key = Array(("AWS4" + configuration.secretKey).utf8)
        for part in [day, configuration.region, "s3", "aws4_request"] {
            key = HMACSHA256.authenticate(Array(part.utf8), key: key)
        }
        let signature = Bytes.hex(HMACSHA256.authenticate(Array(stringToSign.utf8), key: key))
        return fixture.started.url + path + "?" + query + "&X-Amz-Signature=" + signature
    }

    static func stamp(_ date: Date) -> String {
        let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC") ?? .current, from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
    }
    @Test func nothingUnsignedIsAcceptedAfterTheTrailerSignature() throws {
        let seed = ChunkSigner(
            key: Array(repeating: 7, count: 32), amzDate: "20260101T000000Z",
            scope: "20260101/us-east-1/s3/aws4_request",
            previous: String(repeating: "a", count: 64))
        let lastChunk = seed.chunkSignature(dataHash: SHA256.hash([UInt8]()))
        var chained = seed
        chained.previous = lastChunk
        let checksum = "x-amz-checksum-crc32:AAAAAA=="
        let trailerSignature = chained.trailerSignature(trailer: checksum + "\n")
        func decode(_ extra: String) throws(S3Error) -> [(name: String, value: String)] {
            let decoder = AWSChunkedDecoder(signer: seed, signsTrailer: true)
            let body =
                "0;chunk-signature=\(lastChunk)\r\n\(checksum)\r\nx-amz-trailer-signature:\(trailerSignature)\r\n"
                + extra + "\r\n"
            try decoder.feed(ByteBuffer(string: body)) { _ in }
            #expect(decoder.isDone)
            return decoder.trailers
        }
        #expect(try decode("").map(\.name) == ["x-amz-checksum-crc32"])
        #expect(throws: S3Error.self) { try decode("x-amz-checksum-sha256:unsigned\r\n") }
    }
}

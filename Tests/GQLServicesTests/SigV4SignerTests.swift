import Foundation
import GQLCrypto
import Testing

@testable import GQLServices

/// The examples of AWS's "Signature Calculations for the Authorization Header" and "Query String Authentication"
/// pages for S3 (bucket `examplebucket`, 24 May 2013, the documentation's example key).
@Suite struct SigV4SignerTests {
    private let signer = SigV4Signer(
        credentials: .init(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    private let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    private func request(
        _ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        payload: String = SigV4Signer.emptyPayloadHash
    ) -> SigV4Signer.Request {
        SigV4Signer.Request(
            method: method, origin: "https://examplebucket.s3.amazonaws.com", host: "examplebucket.s3.amazonaws.com",
            encodedPath: SigV4Signer.encodePath(path), query: query.map { (name: $0.0, value: $0.1) },
            headers: headers.map { (name: $0.0, value: $0.1) }, payloadHash: payload)
    }

    private func authorization(_ request: SigV4Signer.Request) -> String? {
        signer.sign(request, at: date).first { $0.name == "Authorization" }?.value
    }

    @Test func timestamps() {
        #expect(SigV4Signer.timestamps(date) == ("20130524T000000Z", "20130524"))
        #expect(SigV4Signer.timestamps(Date(timeIntervalSince1970: 951_825_599)) == ("20000229T115959Z", "20000229"))
        #expect(SigV4Signer.timestamps(Date(timeIntervalSince1970: -1)) == ("19691231T235959Z", "19691231"))
    }

    @Test func getObject() {
        let auth = authorization(request("GET", "/test.txt", headers: [("Range", "bytes=0-9")]))
        #expect(
            auth == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObject() {
        let body = Array("Welcome to Amazon S3.".utf8)
        let auth = authorization(
            request(
                "PUT", "/test$file.text",
                headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                payload: Bytes.hex(SHA256.hash(body))))
        #expect(
            auth == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
                + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test func getBucketLifecycle() {
        let auth = authorization(request("GET", "/", query: [("lifecycle", "")]))
        #expect(auth?.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
    }

    @Test func listObjects() {
        let auth = authorization(request("GET", "/", query: [("prefix", "J"), ("max-keys", "2")]))
        #expect(auth?.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
    }

    @Test func presignedGet() {
        let url = signer.presign(request("GET", "/test.txt"), at: date, expires: 86_400)
        #expect(
            url == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func sessionTokenIsSignedAndSent() {
        let withToken = SigV4Signer(
            credentials: .init(accessKey: "AKID", secretKey: "secret", sessionToken: "token/with+chars"),
            region: "eu-west-3")
        let headers = withToken.sign(request("GET", "/a"), at: date)
        #expect(headers.contains { $0.name == "x-amz-security-token" && $0.value == "token/with+chars" })
        let auth = headers.first { $0.name == "Authorization" }?.value ?? ""
        #expect(auth.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        #expect(auth.contains("/20130524/eu-west-3/s3/aws4_request"))
    }

    @Test func pathsAreEncodedOncePerSegment() {
        #expect(SigV4Signer.encodePath("/folder/file name+(1).png") == "/folder/file%20name%2B%281%29.png")
        #expect(SigV4Signer.encodePath("/a!'*%~b/é") == "/a%21%27%2A%25~b/%C3%A9")
        #expect(SigV4Signer.encode("a/b c") == "a%2Fb%20c")
    }

    @Test func headerValuesAreFoldedAndNamesSorted() {
        let (text, signed) = SigV4Signer.canonicalHeaders([
            ("X-B", "  two   words "), ("x-a", "1"), ("X-A", "2"), ("Host", "h"),
        ])
        #expect(text == "host:h\nx-a:1,2\nx-b:two words\n")
        #expect(signed == "host;x-a;x-b")
    }
}

import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLStorage's signer against botocore's (Tests/Interop/sigv4_oracle.py): a few hundred generated requests —
/// keys with every character S3 allows, query parameters, headers, bodies, session tokens, regions — signed by
/// both must carry the same Authorization header.
///
/// Keys with `+ ! ' ( ) *` are checked here and not against moto, whose own signature check wrongly refuses them
/// (it decodes the path before canonicalising it); the signer follows AWS's rules, not moto's.
@Suite struct SigV4OracleTests {
    /// A generated request and what both signers get to know about it.
    struct Case: Encodable {
        var method: String
        var url: String
        var bucket: String
        var key: String
        var query: [[String]]
        var headers: [[String]]
        var body: String
        var timestamp: String
        var region: String
        var accessKey: String
        var secretKey: String
        var sessionToken: String?
        /// Presigned for this many seconds instead of signed in a header.
        var expires: Int?
    }

    private static let keyCharacters = Array(
        "abcXYZ019 -_.~+!'()*%&=?#:@$,;/é日本ü\u{1F600}[]{}^`|\"<>")
    private static let valueCharacters = Array("abcXYZ019 -_.~+!'()*%&=?#:@$,;/é日")

    private static func string(_ alphabet: [Character], _ length: ClosedRange<Int>, _ rng: inout SplitMix64) -> String {
        String((0..<Int.random(in: length, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    static func cases(count: Int) -> [Case] {
        var rng = SplitMix64(seed: 20_261_123)
        let regions = ["us-east-1", "us-east-2", "eu-west-3", "ap-southeast-2"]
        return (0..<count).map { index in
            var key = string(keyCharacters, 1...24, &rng)
            if key.hasPrefix("/") { key = "k" + key }
            let bucket = "bucket-\(index % 7)"
            let port = [nil, 9000, 443][index % 3]
            let host = "127.0.0.1" + (port.map { ":\($0)" } ?? "")
            var query: [[String]] = []
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                query.append([string(valueCharacters, 1...8, &rng), string(valueCharacters, 0...12, &rng)])
            }
            var headers: [[String]] = []
            var names = Set<String>()
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let name = "x-amz-meta-" + string(Array("abcdefgh-"), 1...6, &rng)
                guard names.insert(name.lowercased()).inserted else { continue }
                headers.append([name, "  " + string(Array("abc XYZ 019 -_.;=/"), 0...16, &rng) + " "])
            }
            if index % 5 == 0 { headers.append(["Content-Type", "application/octet-stream"]) }
            let body = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let timestamp = SigV4Signer.timestamps(Date(timeIntervalSince1970: Double(1_600_000_000 + index * 86_413)))
            return Case(
                method: ["GET", "PUT", "DELETE", "HEAD", "POST"][index % 5], url: "http://\(host)", bucket: bucket,
                key: key, query: query, headers: headers, body: Bytes.hex(body), timestamp: timestamp.stamp,
                region: regions[index % regions.count], accessKey: "AKID\(index)",
                secretKey: string(valueCharacters, 20...40, &rng),
                sessionToken: index % 4 == 0 ? "token/\(index)+==" : nil)
        }
    }

    @Test func authorizationMatchesBotocore() async throws {
        let cases = Self.cases(count: 300)
        let expected = try await Self.oracle(cases)
        try #require(expected.count == cases.count)
        for (index, testCase) in cases.enumerated() {
            #expect(Self.authorization(testCase) == expected[index], "case \(index): key \(testCase.key)")
        }
    }

    @Test func presignedSignaturesMatchBotocore() async throws {
        let cases = Self.cases(count: 60).enumerated().map { index, testCase in
            var presigned = testCase
            presigned.method = index % 2 == 0 ? "GET" : "PUT"
            presigned.headers = []
            presigned.body = ""
            presigned.expires = [1, 900, 86_400, 604_800][index % 4]
            return presigned
        }
        let expected = try await Self.oracle(cases)
        try #require(expected.count == cases.count)
        for (index, testCase) in cases.enumerated() {
            let url = Self.presign(testCase)
            #expect(url.hasSuffix("&X-Amz-Signature=" + expected[index]), "case \(index): key \(testCase.key)")
        }
    }

    /// The presigned URL GQLStorage's signer gives a case.
    static func presign(_ c: Case) -> String {
        let signer = SigV4Signer(
            credentials: .init(accessKey: c.accessKey, secretKey: c.secretKey, sessionToken: c.sessionToken),
            region: c.region)
        let host = String(c.url.dropFirst("http://".count))
        let request = SigV4Signer.Request(
            method: c.method, origin: c.url, host: host,
            encodedPath: "/" + SigV4Signer.encode(c.bucket) + "/" + SigV4Signer.encodePath(c.key),
            query: c.query.map { (name: $0[0], value: $0[1]) }, headers: [], payloadHash: SigV4Signer.unsignedPayload)
        return signer.presign(request, at: date(c.timestamp) ?? Date(), expires: c.expires ?? 0)
    }

    /// The Authorization header GQLStorage's signer gives a case.
    static func authorization(_ c: Case) -> String? {
        let signer = SigV4Signer(
            credentials: .init(accessKey: c.accessKey, secretKey: c.secretKey, sessionToken: c.sessionToken),
            region: c.region)
        let host = String(c.url.dropFirst("http://".count))
        let request = SigV4Signer.Request(
            method: c.method, origin: c.url, host: host,
            encodedPath: "/" + SigV4Signer.encode(c.bucket) + "/" + SigV4Signer.encodePath(c.key),
            query: c.query.map { (name: $0[0], value: $0[1]) }, headers: c.headers.map { (name: $0[0], value: $0[1]) },
            payloadHash: Bytes.hex(SHA256.hash(Bytes.unhex(c.body) ?? [])))
        let day = String(c.timestamp.prefix(8))
        let date = Self.date(c.timestamp) ?? Date()
        #expect(SigV4Signer.timestamps(date).day == day)
        return signer.sign(request, at: date).first { $0.name == "Authorization" }?.value
    }

    private static func date(_ stamp: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: stamp)
    }

    /// Runs the oracle on every case at once.
    static func oracle(_ cases: [Case]) async throws -> [String] {
        let output = try await PythonPeer.run("sigv4_oracle.py", input: try JSONEncoder().encode(cases))
        return try JSONDecoder().decode([String].self, from: output)
    }
}

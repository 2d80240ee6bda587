import Foundation
import GQLCore
import GQLCrypto

/// AWS Signature Version 4, as S3 checks it: a canonical request, a string to sign and a signature under a key
/// derived from the secret, the date, the region and the service.
///
/// S3 paths are encoded once per segment (other services normalise and encode twice); the signing key is derived
/// once a day and reused.
struct SigV4Signer: Sendable {
    /// The access key, secret and optional session token of a signer.
    struct Credentials: Sendable {
        var accessKey: String
        var secretKey: String
        var sessionToken: String?
    }

    /// A request as it will be sent, before signing.
    struct Request: Sendable {
        var method: String
        /// Scheme, host and port (`https://bucket.s3.us-east-2.amazonaws.com`), without a path.
        var origin: String
        /// The host header's value: host, plus the port when it is not the scheme's default.
        var host: String
        /// The path, each segment already percent-encoded by ``SigV4Signer/encodePath(_:)``.
        var encodedPath: String
        /// Query parameters, not encoded.
        var query: [(name: String, value: String)]
        /// Headers to send and sign (any case); `host`, `x-amz-date`, `x-amz-content-sha256` and
        /// `x-amz-security-token` are added by signing.
        var headers: [(name: String, value: String)]
        /// Hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
        var payloadHash: String

        /// The URL to send: origin, path and the canonically encoded query.
        var url: String {
            let query = SigV4Signer.canonicalQuery(query)
            return origin + encodedPath + (query.isEmpty ? "" : "?" + query)
        }
    }

    static let algorithm = "AWS4-HMAC-SHA256"
    static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The hash of an empty body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    let credentials: Credentials
    let region: String
    let service: String
    private let keys = GQLLocked<(day: String, key: HMACSHA256.Key)?>(nil)

    init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to `request` so that it is signed at `date`: `Authorization`, `x-amz-date`,
    /// `x-amz-content-sha256`, and `x-amz-security-token` with a session token.
    func sign(_ request: Request, at date: Date) -> [(name: String, value: String)] {
        let (stamp, day) = Self.timestamps(date)
        var headers = request.headers
        headers.append(("host", request.host))
        headers.append(("x-amz-date", stamp))
        headers.append(("x-amz-content-sha256", request.payloadHash))
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(headers)
        let canonicalRequest = [
            request.method, request.encodedPath, Self.canonicalQuery(request.query), canonicalHeaders, signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let signature = signature(of: canonicalRequest, stamp: stamp, day: day, scope: scope)
        var added: [(name: String, value: String)] = [
            (
                "Authorization",
                "\(Self.algorithm) Credential=\(credentials.accessKey)/\(scope), SignedHeaders=\(signedHeaders), "
                    + "Signature=\(signature)"
            ),
            ("x-amz-date", stamp),
            ("x-amz-content-sha256", request.payloadHash),
        ]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        return added
    }

    /// A URL that performs `request` without further credentials until `expires` after `date` (query-string
    /// signing; the payload is unsigned).
    func presign(_ request: Request, at date: Date, expires: Int) -> String {
        let (stamp, day) = Self.timestamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var query = request.query
        query.append(("X-Amz-Algorithm", Self.algorithm))
        query.append(("X-Amz-Credential", "\(credentials.accessKey)/\(scope)"))
        query.append(("X-Amz-Date", stamp))
        query.append(("X-Amz-Expires", String(expires)))
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        var headers = request.headers
        headers.append(("host", request.host))
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(headers)
        query.append(("X-Amz-SignedHeaders", signedHeaders))
        let canonicalRequest = [
            request.method, request.encodedPath, Self.canonicalQuery(query), canonicalHeaders, signedHeaders,
            Self.unsignedPayload,
        ].joined(separator: "\n")
        // The signature goes last, after the parameters it signs, as AWS's examples put it.
        var signed = request
        signed.query = query
        return signed.url + "&X-Amz-Signature=" + signature(of: canonicalRequest, stamp: stamp, day: day, scope: scope)
    }

    private func signature(of canonicalRequest: String, stamp: String, day: String, scope: String) -> String {
        let stringToSign = [Self.algorithm, stamp, scope, Bytes.hex(SHA256.hash(Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        // An HMAC fails only when libcrypto is out of memory; the empty signature is then refused by the server.
        return Bytes.hex((try? signingKey(day: day)?.authenticate(Array(stringToSign.utf8))) ?? [])
    }

    /// HMAC("AWS4" + secret, day) → region → service → "aws4_request", keyed once and cached for the day.
    private func signingKey(day: String) -> HMACSHA256.Key? {
        if let cached = keys.withLock({ $0 }), cached.day == day { return cached.key }
        var key = HMACSHA256.authenticate(Array(day.utf8), key: Array(("AWS4" + credentials.secretKey).utf8))
        for part in [region, service, "aws4_request"] { key = HMACSHA256.authenticate(Array(part.utf8), key: key) }
        guard let keyed = try? HMACSHA256.Key(key) else { return nil }
        keys.withLock { $0 = (day, keyed) }
        return keyed
    }

    // MARK: - Canonical forms

    /// `20130524T000000Z` and `20130524`, in UTC.
    static func timestamps(_ date: Date) -> (stamp: String, day: String) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = GQLDate.civil(fromDays: days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let dayText = "\(year)\(two(month))\(two(day))"
        let time = two(secondOfDay / 3600) + two(secondOfDay / 60 % 60) + two(secondOfDay % 60)
        return ("\(dayText)T\(time)Z", dayText)
    }

    /// Lowercase names sorted, values trimmed with inner runs of spaces folded, repeated names joined by commas.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (text: String, signed: String) {
        var byName: [String: [String]] = [:]
        for (name, value) in headers {
            byName[name.lowercased(), default: []].append(
                value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " "))
        }
        let names = byName.keys.sorted()
        let text = names.map { "\($0):\(byName[$0, default: []].joined(separator: ","))\n" }.joined()
        return (text, names.joined(separator: ";"))
    }

    /// Names and values encoded, sorted by name then value, joined with `&`.
    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        let pairs: [(name: String, value: String)] = query.map { (encode($0.name), encode($0.value)) }
        let sorted = pairs.sorted { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// A path with each segment percent-encoded once; `/` separates segments and stays.
    static func encodePath(_ path: String) -> String { encode(path, keepingSlash: true) }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// RFC 3986 encoding as SigV4 wants it: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX` (uppercase hex).
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true  // A-Z a-z 0-9
        case 0x2D, 0x5F, 0x2E, 0x7E: true  // - _ . ~
        default: false
        }
    }
}

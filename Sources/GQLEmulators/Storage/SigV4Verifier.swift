import Foundation
import GQLCrypto

/// Checks AWS Signature Version 4 on S3 requests the way S3 does, from the request as it arrived: the
/// `Authorization` header form and the presigned query form, the credential scope, the clock skew, the expiry.
/// Written from AWS's specification, independently of GQLStorage's signer (which it must accept, as it must the
/// AWS SDKs').
struct SigV4Verifier: Sendable {
    let accessKey: String
    let secretKey: String
    let region: String
    let clock: @Sendable () -> Date

    /// How far a header-signed request's time may be from the emulator's clock (S3: 15 minutes).
    static let allowedSkew: TimeInterval = 15 * 60
    static let algorithm = "AWS4-HMAC-SHA256"
    static let emptyHash = Bytes.hex(SHA256.hash([UInt8]()))

    /// How a verified request's body is to be read and checked.
    enum Payload: Sendable, Equatable {
        /// `UNSIGNED-PAYLOAD` (and a presigned request whose query carries no `X-Amz-Content-Sha256` hash).
        case unsigned
        /// The body's SHA-256 (lowercase hex) must be this.
        case sha256(String)
        /// `aws-chunked` with a signature per chunk, chained from the seed signature, and with trailing headers
        /// signed too when `trailer`.
        case signedChunks(ChunkSigner, trailer: Bool)
        /// `aws-chunked` without signatures, with trailing headers (a checksum): `STREAMING-UNSIGNED-PAYLOAD-TRAILER`.
        case unsignedChunks
    }

    /// Verifies `request`'s signature; what the body must then match.
    func verify(_ request: S3Request) throws(S3Error) -> Payload {
        if let authorization = request.header("authorization") {
            return try verifyHeader(request, authorization)
        }
        if request.has("X-Amz-Signature") || request.has("X-Amz-Credential") {
            return try verifyQuery(request)
        }
        if request.has("Signature"), request.has("AWSAccessKeyId") {
            try verifyLegacyQuery(request)
            return .unsigned
        }
        throw S3Error(.accessDenied, "Access Denied", resource: request.resource)
    }

    // MARK: The header form

    private func verifyHeader(_ request: S3Request, _ authorization: String) throws(S3Error) -> Payload {
        guard authorization.hasPrefix(Self.algorithm + " ") else {
            throw S3Error(
                .invalidArgument, "Unsupported Authorization Type",
                details: [("ArgumentName", "Authorization"), ("ArgumentValue", "")])
        }
        var fields: [String: String] = [:]
        for part in authorization.dropFirst(Self.algorithm.count + 1).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { throw malformedHeader("the Authorization header is malformed") }
            fields[String(pair[0])] = String(pair[1])
        }
        guard let credential = fields["Credential"], let signedHeaders = fields["SignedHeaders"],
            let signature = fields["Signature"]
        else { throw malformedHeader("the Authorization header needs Credential, SignedHeaders and Signature") }
        guard let amzDate = request.header("x-amz-date") else {
            throw S3Error(.accessDenied, "AWS authentication requires a valid Date or x-amz-date header")
        }
        let scope = try checkScope(credential, amzDate: amzDate, query: false)
        guard let date = Self.parse(amzDate) else {
            throw S3Error(.accessDenied, "AWS authentication requires a valid Date or x-amz-date header")
        }
        if abs(date.timeIntervalSince(clock())) > Self.allowedSkew {
            throw S3Error(
                .requestTimeTooSkewed, "The difference between the request time and the current time is too large.",
                details: [("RequestTime", amzDate), ("ServerTime", Self.format(clock()))])
        }
        let signed = signedHeaders.split(separator: ";").map(String.init)
        guard signed.contains("host") else {
            throw malformedHeader("SignedHeaders must include host")
        }
        try refuseUnsignedHeaders(request, signed: signed)
        guard let payloadHash = request.header("x-amz-content-sha256") else {
            throw S3Error(.invalidRequest, "Missing required header for this request: x-amz-content-sha256")
        }
        let payload: Payload
        switch payloadHash {
        case "UNSIGNED-PAYLOAD": payload = .unsigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER":
            payload = .signedChunks(
                ChunkSigner(
                    key: signingKey(scope.day), amzDate: amzDate, scope: scope.text, previous: signature),
                trailer: payloadHash.hasSuffix("-TRAILER"))
        case "STREAMING-UNSIGNED-PAYLOAD-TRAILER": payload = .unsignedChunks
        default:
            guard payloadHash.utf8.count == 64, Bytes.unhex(payloadHash) != nil else {
                throw S3Error(
                    .invalidArgument, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-… or a SHA-256 hash",
                    details: [("ArgumentName", "x-amz-content-sha256"), ("ArgumentValue", payloadHash)])
            }
            payload = .sha256(payloadHash.lowercased())
        }
        let canonical = canonicalRequest(
            request, query: request.query, signedHeaders: signed, payloadHash: payloadHash)
        try check(signature, canonical: canonical, amzDate: amzDate, scope: scope)
        return payload
    }

    private func malformedHeader(_ message: String) -> S3Error {
        S3Error(.authorizationHeaderMalformed, "The authorization header is malformed; \(message).")
    }

    // MARK: The query (presigned) form

    /// A presigned request's body is checked against `X-Amz-Content-Sha256` when the signed query carries a hash.
    private func verifyQuery(_ request: S3Request) throws(S3Error) -> Payload {
        func required(_ name: String) throws(S3Error) -> String {
            guard let value = request.parameter(name) else {
                throw S3Error(
                    .authorizationQueryParametersError,
                    "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
                        + "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
            }
            return value
        }
        let algorithm = try required("X-Amz-Algorithm")
        let credential = try required("X-Amz-Credential")
        let amzDate = try required("X-Amz-Date")
        let expiresText = try required("X-Amz-Expires")
        let signedHeaders = try required("X-Amz-SignedHeaders")
        let signature = try required("X-Amz-Signature")
        guard algorithm == Self.algorithm else {
            throw S3Error(
                .authorizationQueryParametersError, "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
        }
        guard let expires = Int(expiresText), expires >= 1, expires <= 604_800 else {
            throw S3Error(
                .authorizationQueryParametersError,
                "X-Amz-Expires must be a number of seconds from 1 to 604800 (seven days)")
        }
        let scope = try checkScope(credential, amzDate: amzDate, query: true)
        guard let date = Self.parse(amzDate) else {
            throw S3Error(
                .authorizationQueryParametersError,
                "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
        }
        let now = clock()
        if now.timeIntervalSince(date) > TimeInterval(expires) {
            throw S3Error(
                .accessDenied, "Request has expired",
                details: [
                    ("X-Amz-Expires", expiresText),
                    ("Expires", Self.iso(date.addingTimeInterval(TimeInterval(expires)))),
                    ("ServerTime", Self.iso(now)),
                ])
        }
        if date.timeIntervalSince(now) > Self.allowedSkew {
            throw S3Error(.accessDenied, "Request is not valid yet")
        }
        let signed = signedHeaders.split(separator: ";").map(String.init)
        guard signed.contains("host") else {
            throw S3Error(.authorizationQueryParametersError, "X-Amz-SignedHeaders must include host")
        }
        try refuseUnsignedHeaders(request, signed: signed)
        let query = request.query.filter { $0.name != "X-Amz-Signature" }
        let payloadHash = request.parameter("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD"
        let canonical = canonicalRequest(request, query: query, signedHeaders: signed, payloadHash: payloadHash)
        try check(signature, canonical: canonical, amzDate: amzDate, scope: scope)
        if payloadHash.utf8.count == 64, Bytes.unhex(payloadHash) != nil { return .sha256(payloadHash.lowercased()) }
        return .unsigned
    }

    // MARK: The legacy presigned form (Signature Version 2)

    /// Sub-resources a Signature Version 2 string to sign names, with their values, sorted.
    private static let legacySubresources: Set<String> = [
        "acl", "cors", "delete", "lifecycle", "location", "logging", "notification", "partNumber", "policy",
        "requestPayment", "response-cache-control", "response-content-disposition", "response-content-encoding",
        "response-content-language", "response-content-type", "response-expires", "tagging", "torrent", "uploadId",
        "uploads", "versionId", "versioning", "versions", "website",
    ]

    /// `?AWSAccessKeyId=…&Expires=…&Signature=…`: what botocore's `generate_presigned_url` makes by default, and
    /// S3 still accepts. HMAC-SHA1 over the method, `Content-MD5`, `Content-Type`, the expiry, the `x-amz-`
    /// headers and the resource.
    private func verifyLegacyQuery(_ request: S3Request) throws(S3Error) {
        guard let key = request.parameter("AWSAccessKeyId"), let signature = request.parameter("Signature"),
            let expiresText = request.parameter("Expires"), let expires = Int64(expiresText)
        else {
            throw S3Error(
                .accessDenied,
                "Query-string authentication requires the Signature, Expires and AWSAccessKeyId "
                    + "parameters")
        }
        guard GQLEmulatorCredentials.same(key, accessKey) else {
            throw S3Error(
                .invalidAccessKeyId, "The AWS Access Key Id you provided does not exist in our records.",
                details: [("AWSAccessKeyId", key)])
        }
        guard Int64(clock().timeIntervalSince1970) <= expires else {
            throw S3Error(.accessDenied, "Request has expired", details: [("Expires", expiresText)])
        }
        var amzHeaders: [String: [String]] = [:]
        for (name, value) in request.headers where name.hasPrefix("x-amz-") {
            amzHeaders[name, default: []].append(Self.trim(value))
        }
        var resource = request.rawPath
        if let bucket = request.bucket, SigV4Verifier.isVirtualHosted(request) { resource = "/" + bucket + resource }
        let subresources = request.query.filter { Self.legacySubresources.contains($0.name) }
            .sorted { $0.name < $1.name }
            .map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }
        if !subresources.isEmpty { resource += "?" + subresources.joined(separator: "&") }
        var text = "\(request.method.rawValue)\n\(request.header("content-md5") ?? "")\n"
        text += "\(request.header("content-type") ?? "")\n\(expiresText)\n"
        for name in amzHeaders.keys.sorted() {
            text += "\(name):\(amzHeaders[name, default: []].joined(separator: ","))\n"
        }
        text += resource
        let expected = Data(HMACSHA1.authenticate(Array(text.utf8), key: Array(secretKey.utf8))).base64EncodedString()
        guard Bytes.constantTimeEquals(Array(signature.utf8), Array(expected.utf8)) else {
            throw S3Error(
                .signatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided. Check your key "
                    + "and signing method.",
                details: [("AWSAccessKeyId", accessKey)])
        }
    }

    /// Whether the request named its bucket in the host (`bucket.localhost`).
    static func isVirtualHosted(_ request: S3Request) -> Bool {
        let host = S3Request.hostName(request.header("host") ?? "")
        return host.hasSuffix(".localhost") && host.count > ".localhost".count
    }

    // MARK: The pieces

    /// S3 refuses x-amz-* headers that the signature does not cover (in both forms: a presigned URL's holder
    /// must not add `x-amz-copy-source` or the like).
    private func refuseUnsignedHeaders(_ request: S3Request, signed: [String]) throws(S3Error) {
        for (name, _) in request.headers where name.hasPrefix("x-amz-") && !signed.contains(name) {
            throw S3Error(.accessDenied, "There were headers present in the request which were not signed")
        }
    }

    /// A credential's scope: `AKID/20130524/us-east-1/s3/aws4_request`, checked against the key, the date and
    /// the region.
    struct Scope {
        var day: String
        var text: String
    }

    private func checkScope(_ credential: String, amzDate: String, query: Bool) throws(S3Error) -> Scope {
        let parts = credential.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let malformed: (String) -> S3Error = { message in
            query
                ? S3Error(
                    .authorizationQueryParametersError, "Error parsing the X-Amz-Credential parameter; \(message)")
                : S3Error(.authorizationHeaderMalformed, "The authorization header is malformed; \(message)")
        }
        guard parts.count == 5 else {
            throw malformed(
                "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".")
        }
        guard GQLEmulatorCredentials.same(parts[0], accessKey) else {
            throw S3Error(
                .invalidAccessKeyId, "The AWS Access Key Id you provided does not exist in our records.",
                details: [("AWSAccessKeyId", parts[0])])
        }
        guard parts[1].count == 8, amzDate.hasPrefix(parts[1]) else {
            throw malformed(
                "incorrect date format \"\(parts[1])\". This date in the credential must be in the format \"yyyyMMdd\"."
            )
        }
        guard parts[2] == region else {
            throw malformed("the region '\(parts[2])' is wrong; expecting '\(region)'")
        }
        guard parts[3] == "s3" else {
            throw malformed("incorrect service \"\(parts[3])\". This endpoint belongs to \"s3\".")
        }
        guard parts[4] == "aws4_request" else {
            throw malformed("incorrect terminal \"\(parts[4])\". This endpoint uses \"aws4_request\".")
        }
        return Scope(day: parts[1], text: parts[1...4].joined(separator: "/"))
    }

    /// The canonical request: method, path, query, headers, signed header names, payload hash, one a line.
    private func canonicalRequest(
        _ request: S3Request, query: [(name: String, value: String)], signedHeaders: [String], payloadHash: String
    ) -> String {
        var lines = [request.method.rawValue, Self.canonicalPath(request.rawPath)]
        let encoded: [(name: String, value: String)] = query.map { pair in
            (Self.encode(pair.name), Self.encode(pair.value))
        }
        let sorted = encoded.sorted { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name == b.name ? a.value < b.value : a.name < b.name
        }
        lines.append(sorted.map { pair in pair.name + "=" + pair.value }.joined(separator: "&"))
        var headerBlock = ""
        for name in signedHeaders {
            let values = request.headers.filter { $0.name == name }.map { Self.trim($0.value) }
            headerBlock += "\(name):\(values.joined(separator: ","))\n"
        }
        lines.append(headerBlock)
        lines.append(signedHeaders.joined(separator: ";"))
        lines.append(payloadHash)
        return lines.joined(separator: "\n")
    }

    private func check(_ signature: String, canonical: String, amzDate: String, scope: Scope) throws(S3Error) {
        let stringToSign = [
            Self.algorithm, amzDate, scope.text, Bytes.hex(SHA256.hash(Array(canonical.utf8))),
        ].joined(separator: "\n")
        let expected = Bytes.hex(HMACSHA256.authenticate(Array(stringToSign.utf8), key: signingKey(scope.day)))
        guard Bytes.constantTimeEquals(Array(signature.lowercased().utf8), Array(expected.utf8)) else {
            throw S3Error(
                .signatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided. Check your key "
                    + "and signing method.",
                details: [("AWSAccessKeyId", accessKey)])
        }
    }

    /// The key of `day` (`yyyyMMdd`): HMAC chained over the day, the region, `s3` and `aws4_request`.
    func signingKey(_ day: String) -> [UInt8] {
        var key = Array(("AWS4" + secretKey).utf8)
        for part in [day, region, "s3", "aws4_request"] {
            key = HMACSHA256.authenticate(Array(part.utf8), key: key)
        }
        return key
    }

    /// The path as S3's canonical request has it: decoded, then every byte but the unreserved ones and `/`
    /// percent-encoded once (S3 does not normalise `.` or `//`).
    static func canonicalPath(_ raw: String) -> String {
        let decoded = raw.removingPercentEncoding ?? raw
        return encode(decoded, keepSlash: true)
    }

    /// RFC 3986 encoding as SigV4 has it: `A-Z a-z 0-9 - _ . ~` kept, every other byte `%XX` in uppercase hex.
    static func encode(_ text: String, keepSlash: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out += "/"
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded2
            }
        }
        return out
    }

    /// A header value as canonical headers carry it: outer spaces trimmed, inner runs of spaces made one.
    static func trim(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }

    /// `yyyyMMdd'T'HHmmss'Z'` as a date; `nil` when malformed.
    static func parse(_ stamp: String) -> Date? {
        let digits = Array(stamp.utf8)
        guard digits.count == 16, digits[8] == UInt8(ascii: "T"), digits[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digits[index]) else { return nil }
                value = value * 10 + Int(digits[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86400 + hour * 3600 + minute * 60 + second))
    }

    /// `date` as `yyyyMMdd'T'HHmmss'Z'`.
    static func format(_ date: Date) -> String {
        let c = Calendar.gmt.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
    }

    /// `date` as ISO 8601 with a `Z`, as S3's error details have it.
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// The signatures of `aws-chunked` uploads: each chunk's signature chains from the one before, the first from the
/// request's own (the seed).
struct ChunkSigner: Sendable, Equatable {
    let key: [UInt8]
    let amzDate: String
    let scope: String
    /// The signature of the request or of the last chunk.
    var previous: String

    /// The signature the next chunk with this SHA-256 must carry.
    func chunkSignature(dataHash: [UInt8]) -> String {
        let text = [
            "AWS4-HMAC-SHA256-PAYLOAD", amzDate, scope, previous, SigV4Verifier.emptyHash, Bytes.hex(dataHash),
        ].joined(separator: "\n")
        return Bytes.hex(HMACSHA256.authenticate(Array(text.utf8), key: key))
    }

    /// The signature the trailing headers (`name:value\n` each, as sent) must carry.
    func trailerSignature(trailer: String) -> String {
        let text = [
            "AWS4-HMAC-SHA256-TRAILER", amzDate, scope, previous, Bytes.hex(SHA256.hash(Array(trailer.utf8))),
        ].joined(separator: "\n")
        return Bytes.hex(HMACSHA256.authenticate(Array(text.utf8), key: key))
    }
}

extension String {
    /// A one-digit hex byte with its leading zero.
    fileprivate var leftPadded2: String { count == 1 ? "0" + self : self }
}

extension Calendar {
    fileprivate static let gmt: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()
}

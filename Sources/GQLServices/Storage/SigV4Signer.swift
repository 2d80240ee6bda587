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
    /// The signing key of the current day, and the last second's timestamps (signatures made in the same second
    /// share them).
    private let cache = GQLLocked<Cache?>(nil)
    /// The session token as a presigned URL's query carries it.
    private let encodedSessionToken: [UInt8]?

    private struct Cache {
        var second: Int64
        var day: String
        var moment: Moment
    }

    init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
        encodedSessionToken = credentials.sessionToken.map { token in
            var bytes = [UInt8]()
            Self.encode(token, into: &bytes)
            return bytes
        }
    }

    /// The headers to add to `request` so that it is signed at `date`: `Authorization`, `x-amz-date`,
    /// `x-amz-content-sha256`, and `x-amz-security-token` with a session token.
    func sign(_ request: Request, at date: Date) -> [(name: String, value: String)] {
        guard let moment = moment(date) else { return [] }
        var headers = request.headers
        headers.append(("host", request.host))
        headers.append(("x-amz-date", moment.stamp))
        headers.append(("x-amz-content-sha256", request.payloadHash))
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(headers)
        var canonical = CanonicalRequest(method: request.method, path: request.encodedPath)
        canonical.bytes += Self.canonicalQueryBytes(request.query)
        canonical.finish(headers: canonicalHeaders, signed: signedHeaders, payloadHash: request.payloadHash)
        let signature = signature(of: canonical.bytes, at: moment)
        var added: [(name: String, value: String)] = [
            (
                "Authorization",
                "\(Self.algorithm) Credential=\(credentials.accessKey)/\(moment.scope), SignedHeaders=\(signedHeaders), "
                    + "Signature=\(String(decoding: signature, as: UTF8.self))"
            ),
            ("x-amz-date", moment.stamp),
            ("x-amz-content-sha256", request.payloadHash),
        ]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        return added
    }

    /// A URL that performs `request` without further credentials until `expires` after `date` (query-string
    /// signing; the payload is unsigned). Empty only if libcrypto fails (out of memory).
    func presign(_ request: Request, at date: Date, expires: Int) -> String {
        guard let moment = moment(date) else { return "" }
        let (canonicalHeaders, signedHeaders) =
            request.headers.isEmpty
            ? ("host:" + request.host + "\n", "host")
            : Self.canonicalHeaders(request.headers + [("host", request.host)])
        let canonicalQuery: [UInt8]
        if request.query.isEmpty {
            // The usual case, built in order (the X-Amz- names below are already sorted).
            var query = [UInt8]()
            query.reserveCapacity(256)
            query += "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=".utf8
            query += moment.encodedCredential
            query += "&X-Amz-Date=".utf8
            query += moment.stamp.utf8
            query += "&X-Amz-Expires=".utf8
            query += String(expires).utf8
            if let token = encodedSessionToken {
                query += "&X-Amz-Security-Token=".utf8
                query += token
            }
            query += "&X-Amz-SignedHeaders=".utf8
            Self.encode(signedHeaders, into: &query)
            canonicalQuery = query
        } else {
            var query = request.query
            query.append(("X-Amz-Algorithm", Self.algorithm))
            query.append(("X-Amz-Credential", "\(credentials.accessKey)/\(moment.scope)"))
            query.append(("X-Amz-Date", moment.stamp))
            query.append(("X-Amz-Expires", String(expires)))
            if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
            query.append(("X-Amz-SignedHeaders", signedHeaders))
            canonicalQuery = Self.canonicalQueryBytes(query)
        }
        var canonical = CanonicalRequest(method: request.method, path: request.encodedPath)
        canonical.bytes += canonicalQuery
        canonical.finish(headers: canonicalHeaders, signed: signedHeaders, payloadHash: Self.unsignedPayload)
        // The URL is the canonical query as sent, with the signature last, as AWS's examples put it.
        var url = [UInt8]()
        url.reserveCapacity(request.origin.utf8.count + request.encodedPath.utf8.count + canonicalQuery.count + 82)
        url += request.origin.utf8
        url += request.encodedPath.utf8
        url.append(UInt8(ascii: "?"))
        url += canonicalQuery
        url += "&X-Amz-Signature=".utf8
        url += signature(of: canonical.bytes, at: moment)
        return String(decoding: url, as: UTF8.self)
    }

    /// The six lines of a canonical request, built in one buffer.
    private struct CanonicalRequest {
        var bytes: [UInt8] = []

        /// Starts with the method and path lines; the canonical query follows.
        init(method: String, path: String) {
            bytes.reserveCapacity(512)
            bytes += method.utf8
            bytes.append(0x0A)
            bytes += path.utf8
            bytes.append(0x0A)
        }

        mutating func finish(headers: String, signed: String, payloadHash: String) {
            bytes.append(0x0A)
            bytes += headers.utf8
            bytes.append(0x0A)
            bytes += signed.utf8
            bytes.append(0x0A)
            bytes += payloadHash.utf8
        }
    }

    /// The date's timestamps, scope and signing key.
    private struct Moment {
        var stamp: String
        var scope: String
        var key: HMACSHA256.Key
        /// `<access key>/<scope>`, encoded for a presigned URL's query.
        var encodedCredential: [UInt8]
    }

    /// The hex signature of a canonical request: HMAC of the string to sign under the day's key. Empty only if
    /// libcrypto fails (out of memory); the server then refuses the request.
    private func signature(of canonicalRequest: [UInt8], at moment: Moment) -> [UInt8] {
        var stringToSign = [UInt8]()
        stringToSign.reserveCapacity(160)
        stringToSign += Self.algorithm.utf8
        stringToSign.append(0x0A)
        stringToSign += moment.stamp.utf8
        stringToSign.append(0x0A)
        stringToSign += moment.scope.utf8
        stringToSign.append(0x0A)
        Self.appendHex(SHA256.hash(canonicalRequest), to: &stringToSign)
        var signature = [UInt8]()
        signature.reserveCapacity(64)
        Self.appendHex((try? moment.key.authenticate(stringToSign)) ?? [], to: &signature)
        return signature
    }

    /// The timestamps and key for `date`: reused within the same second, the key within the same day.
    /// `nil` only if libcrypto cannot set up an HMAC key.
    private func moment(_ date: Date) -> Moment? {
        let second = Int64(date.timeIntervalSince1970.rounded(.down))
        let cached = cache.withLock { $0 }
        if let cached, cached.second == second { return cached.moment }
        let (stamp, day) = Self.timestamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let key: HMACSHA256.Key
        if let cached, cached.day == day {
            key = cached.moment.key
        } else {
            // HMAC("AWS4" + secret, day) → region → service → "aws4_request".
            var derived = HMACSHA256.authenticate(Array(day.utf8), key: Array(("AWS4" + credentials.secretKey).utf8))
            for part in [region, service, "aws4_request"] {
                derived = HMACSHA256.authenticate(Array(part.utf8), key: derived)
            }
            guard let keyed = try? HMACSHA256.Key(derived) else { return nil }
            key = keyed
        }
        var credential = [UInt8]()
        Self.encode(credentials.accessKey + "/" + scope, into: &credential)
        let moment = Moment(stamp: stamp, scope: scope, key: key, encodedCredential: credential)
        cache.withLock { $0 = Cache(second: second, day: day, moment: moment) }
        return moment
    }

    private static let lowerHexDigits = Array("0123456789abcdef".utf8)

    private static func appendHex(_ bytes: [UInt8], to out: inout [UInt8]) {
        for byte in bytes {
            out.append(lowerHexDigits[Int(byte >> 4)])
            out.append(lowerHexDigits[Int(byte & 0x0f)])
        }
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
        // The position breaks ties, so a repeated name keeps its values in the order they were given.
        var lines: [(name: String, value: String, index: Int)] = []
        lines.reserveCapacity(headers.count)
        for (index, header) in headers.enumerated() {
            lines.append((header.name.lowercased(), foldSpaces(header.value), index))
        }
        lines.sort { a, b in a.name == b.name ? a.index < b.index : a.name < b.name }
        var text = ""
        var signed = ""
        for (position, line) in lines.enumerated() {
            if position > 0 && lines[position - 1].name == line.name {
                text.removeLast()  // the newline: the value joins the line before
                text += "," + line.value + "\n"
                continue
            }
            if !signed.isEmpty { signed += ";" }
            signed += line.name
            text += line.name + ":" + line.value + "\n"
        }
        return (text, signed)
    }

    /// `value` trimmed, inner runs of spaces and tabs folded into one space.
    private static func foldSpaces(_ value: String) -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard value.utf8.contains(where: isSpace) else { return value }
        return value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// Names and values encoded, sorted by name then value, joined with `&`.
    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        String(decoding: canonicalQueryBytes(query), as: UTF8.self)
    }

    /// ``canonicalQuery(_:)`` as bytes. The encoded forms are ASCII, so byte order is the order SigV4 sorts by.
    static func canonicalQueryBytes(_ query: [(name: String, value: String)]) -> [UInt8] {
        var pairs: [(name: [UInt8], value: [UInt8])] = []
        pairs.reserveCapacity(query.count)
        var length = 0
        for (name, value) in query {
            var encodedName: [UInt8] = []
            var encodedValue: [UInt8] = []
            encode(name, into: &encodedName)
            encode(value, into: &encodedValue)
            length += encodedName.count + encodedValue.count + 2
            pairs.append((encodedName, encodedValue))
        }
        pairs.sort { a, b in
            a.name == b.name ? a.value.lexicographicallyPrecedes(b.value) : a.name.lexicographicallyPrecedes(b.name)
        }
        var out = [UInt8]()
        out.reserveCapacity(length)
        for (index, pair) in pairs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            out += pair.name
            out.append(UInt8(ascii: "="))
            out += pair.value
        }
        return out
    }

    /// A path with each segment percent-encoded once; `/` separates segments and stays.
    static func encodePath(_ path: String) -> String { encode(path, keepingSlash: true) }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// RFC 3986 encoding as SigV4 wants it: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX` (uppercase hex).
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var out = [UInt8]()
        encode(text, keepingSlash: keepingSlash, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func encode(_ text: String, keepingSlash: Bool = false, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true  // A-Z a-z 0-9
        case 0x2D, 0x5F, 0x2E, 0x7E: true  // - _ . ~
        default: false
        }
    }
}

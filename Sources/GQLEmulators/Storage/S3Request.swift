import Foundation
import HTTPTypes
import Hummingbird

/// An S3 request as the emulator reads it: the bucket and key (path style or virtual-hosted), the decoded query,
/// and the headers (`host` included, from the request's authority), before any check.
struct S3Request: Sendable {
    var method: HTTPRequest.Method
    /// The bucket the request names, if any.
    var bucket: String?
    /// The object key, if any (never empty).
    var key: String?
    /// The path as sent, undecoded (for the canonical request).
    var rawPath: String
    /// The query's parameters, decoded, in the order sent.
    var query: [(name: String, value: String)]
    /// Every header, names lowercased, in the order sent; `host` first.
    var headers: [(name: String, value: String)]

    /// The longest key S3 accepts, in UTF-8 bytes.
    static let maxKeyBytes = 1024

    init(_ request: Request) throws(S3Error) {
        method = request.method
        let target = request.head.path ?? "/"
        let (path, rawQuery) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        rawPath = path
        query = try Self.parseQuery(rawQuery)
        let host = request.head.authority ?? ""
        headers = [("host", host)]
        for field in request.headers { headers.append((field.name.canonicalName, field.value)) }
        guard let decodedPath = path.removingPercentEncoding, decodedPath.hasPrefix("/") else {
            throw S3Error(.invalidURI, "Couldn't parse the specified URI.")
        }
        let hostName = Self.hostName(host)
        if hostName.hasSuffix(".localhost"), hostName.count > ".localhost".count {
            bucket = String(hostName.dropLast(".localhost".count))
            let key = String(decodedPath.dropFirst())
            self.key = key.isEmpty ? nil : key
        } else {
            let rest = decodedPath.dropFirst()
            if let slash = rest.firstIndex(of: "/") {
                bucket = String(rest[..<slash])
                let key = String(rest[rest.index(after: slash)...])
                self.key = key.isEmpty ? nil : key
            } else {
                bucket = rest.isEmpty ? nil : String(rest)
                key = nil
            }
        }
        if let key, key.utf8.count > Self.maxKeyBytes {
            throw S3Error(.keyTooLong, "Your key is too long.", details: [("Size", String(key.utf8.count))])
        }
    }

    /// The host without its port (`bucket.localhost` of `bucket.localhost:4001`, `::1` of `[::1]:4001`).
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<end])
        }
        return String(authority.split(separator: ":", maxSplits: 1).first ?? "").lowercased()
    }

    /// The query's name-value pairs, percent-decoded (`+` stays a plus, as the AWS signers send it).
    static func parseQuery(_ raw: String) throws(S3Error) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for item in raw.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts[0].removingPercentEncoding,
                let value = (parts.count > 1 ? parts[1] : "").removingPercentEncoding
            else { throw S3Error(.invalidArgument, "A query parameter is not valid percent-encoding.") }
            pairs.append((name, value))
        }
        return pairs
    }

    /// The value of query parameter `name` (the first, if repeated).
    func parameter(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Whether the query names `name`, with or without a value (`?uploads`, `?delete`).
    func has(_ name: String) -> Bool { query.contains { $0.name == name } }

    /// The value of header `name` (lowercase); repeated headers joined with `,`.
    func header(_ name: String) -> String? {
        let values = headers.filter { $0.name == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    /// `/bucket/key`, `/bucket`, or `/`, for error bodies.
    var resource: String {
        guard let bucket else { return "/" }
        return key.map { "/\(bucket)/\($0)" } ?? "/\(bucket)"
    }
}

extension S3Error.Code {
    static let invalidURI = S3Error.Code(name: "InvalidURI", status: .badRequest)
}

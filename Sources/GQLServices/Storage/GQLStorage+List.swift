import Foundation
import GQLCore
import GQLCrypto
import GQLHTTP

extension GQLStorage {
    /// An object as a listing describes it.
    public struct Object: Sendable, Hashable {
        /// The object's key.
        public var key: String
        /// Its size in bytes.
        public var size: Int
        /// Its ETag, without quotes.
        public var etag: String
        /// When it was last written, when the store says.
        public var lastModified: Date?
    }

    /// The objects of `bucket` whose keys start with `prefix`, in key order, fetched a page at a time
    /// (ListObjectsV2) as the loop asks for more.
    ///
    /// ```swift
    /// for try await object in storage.list("bucket", prefix: "folder/") {
    ///     print(object.key, object.size)
    /// }
    /// ```
    /// A listing that does not end is stopped with `.invalidResponse`: when a continuation token comes back a
    /// second time, and after ``Configuration/maximumListingPages`` pages. Each page is read up to
    /// ``Configuration/maximumXMLResponseSize`` bytes.
    /// - Parameter pageSize: keys per request, 1 to 1,000.
    public func list(_ bucket: String, prefix: String = "", pageSize: Int = 1000) -> Listing {
        Listing(storage: self, bucket: bucket, prefix: prefix, pageSize: min(max(pageSize, 1), 1000))
    }

    /// The objects of a bucket, as an `AsyncSequence`; see ``GQLStorage/list(_:prefix:pageSize:)``.
    public struct Listing: AsyncSequence, Sendable {
        public typealias Element = Object
        let storage: GQLStorage
        let bucket: String
        let prefix: String
        let pageSize: Int

        public func makeAsyncIterator() -> Iterator { Iterator(listing: self) }

        /// Fetches the next page when the current one is used up.
        public struct Iterator: AsyncIteratorProtocol {
            let listing: Listing
            var page: [Object] = []
            var token: String?
            var finished = false
            /// Pages fetched so far.
            var pages = 0
            /// The SHA-256 of each continuation token received, with the number of the page that sent it.
            var tokens: [[UInt8]: Int] = [:]

            public mutating func next() async throws -> Object? {
                while page.isEmpty {
                    guard !finished else { return nil }
                    let storage = listing.storage
                    guard pages < Swift.max(storage.configuration.maximumListingPages, 1) else {
                        throw GQLError(
                            .invalidResponse,
                            "the listing of \(listing.bucket) did not end after \(pages) pages "
                                + "(Configuration.maximumListingPages)", operation: "list")
                    }
                    let (objects, next) = try await storage.listPage(
                        listing.bucket, prefix: listing.prefix, pageSize: listing.pageSize, token: token)
                    pages += 1
                    page = objects.reversed()
                    token = next
                    finished = next == nil
                    if let next {
                        let digest = SHA256.hash(Data(next.utf8))
                        if let earlier = tokens[digest] {
                            throw GQLError(
                                .invalidResponse,
                                "page \(pages) of the listing of \(listing.bucket) repeats the continuation token of "
                                    + "page \(earlier): the listing would never end", operation: "list")
                        }
                        tokens[digest] = pages
                    }
                }
                return page.popLast()
            }
        }
    }

    /// One page of ListObjectsV2 and the token of the next, nil after the last.
    func listPage(_ bucket: String, prefix: String, pageSize: Int, token: String?) async throws -> (
        [Object], String?
    ) {
        var call = Call(method: "GET", bucket: bucket, key: nil, operation: "list")
        call.query = [("list-type", "2"), ("max-keys", String(pageSize)), ("encoding-type", "url")]
        call.maximumResponseSize = configuration.maximumXMLResponseSize
        if !prefix.isEmpty { call.query.append(("prefix", prefix)) }
        if let token { call.query.append(("continuation-token", token)) }
        let response: HTTPExchange.Response
        do {
            response = try await send(call)
        } catch let error as GQLError where error.code == .responseTooLarge {
            throw GQLError(
                .responseTooLarge,
                "a page of the listing of \(bucket) is larger than \(configuration.maximumXMLResponseSize) bytes "
                    + "(Configuration.maximumXMLResponseSize)", operation: "list", httpStatus: error.httpStatus)
        }
        guard let xml = try parseXML(response, call: call), xml.name == "ListBucketResult" else {
            throw GQLError(
                .invalidResponse, "the listing of \(bucket) is not a ListBucketResult document", operation: "list")
        }
        // With encoding-type=url, keys come percent-encoded so that any key survives XML (control characters too).
        let urlEncoded = xml["EncodingType"] == "url"
        let objects = try xml.children("Contents").map { contents -> Object in
            guard let raw = contents["Key"] else {
                throw GQLError(.invalidResponse, "a listing of \(bucket) has an entry without a key", operation: "list")
            }
            // S3 encodes as a form does: a space is `+`, a `+` is `%2B`.
            let decoded = urlEncoded ? raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding : raw
            guard let key = decoded else {
                throw GQLError(
                    .invalidResponse,
                    "a listing of \(bucket) has a key that is not valid percent-encoded UTF-8 (encoding-type=url): "
                        + "'\(Self.excerpt(raw))'", operation: "list")
            }
            return Object(
                key: key, size: contents["Size"].flatMap(Int.init) ?? 0, etag: Self.unquoted(contents["ETag"] ?? ""),
                lastModified: contents["LastModified"].flatMap(Self.isoDate))
        }
        let truncated = xml["IsTruncated"] == "true"
        guard truncated else { return (objects, nil) }
        guard let next = xml["NextContinuationToken"], !next.isEmpty else {
            throw GQLError(
                .invalidResponse, "a truncated listing of \(bucket) has no continuation token", operation: "list")
        }
        return (objects, next)
    }

    /// The start of a text from the server, as an error quotes it.
    static func excerpt(_ text: String) -> String {
        text.count > 200 ? text.prefix(200) + "…" : text
    }

    /// S3's `2009-10-12T17:50:30.000Z` (milliseconds optional).
    static func isoDate(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }
}

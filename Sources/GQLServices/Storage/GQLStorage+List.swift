import Foundation
import GQLCore

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

            public mutating func next() async throws -> Object? {
                while page.isEmpty {
                    guard !finished else { return nil }
                    let (objects, next) = try await listing.storage.listPage(
                        listing.bucket, prefix: listing.prefix, pageSize: listing.pageSize, token: token)
                    page = objects.reversed()
                    token = next
                    finished = next == nil
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
        if !prefix.isEmpty { call.query.append(("prefix", prefix)) }
        if let token { call.query.append(("continuation-token", token)) }
        let response = try await send(call)
        guard let xml = S3XML.parse(response.body), xml.name == "ListBucketResult" else {
            throw GQLError(
                .invalidResponse, "the listing of \(bucket) is not a ListBucketResult document", operation: "list")
        }
        // With encoding-type=url, keys come percent-encoded so that any key survives XML.
        let urlEncoded = xml["EncodingType"] == "url"
        let objects = try xml.children("Contents").map { contents -> Object in
            guard let raw = contents["Key"], let key = urlEncoded ? raw.removingPercentEncoding : raw else {
                throw GQLError(.invalidResponse, "a listing of \(bucket) has an entry without a key", operation: "list")
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

    /// S3's `2009-10-12T17:50:30.000Z` (milliseconds optional).
    static func isoDate(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }
}

import Foundation
import GQLCore

extension GQLStorage {
    /// What a presigned URL lets its holder do.
    public enum PresignedMethod: String, Sendable {
        /// Download the object.
        case get = "GET"
        /// Upload the object (the holder sends a PUT with the body).
        case put = "PUT"
    }

    /// A URL that downloads (`.get`) or uploads (`.put`) one object without credentials, until it expires.
    ///
    /// ```swift
    /// let url = try storage.presignedURL(.get, "bucket", "key", expires: .seconds(900))
    /// // curl "$url"   or   curl -X PUT --data-binary @file "$url"
    /// ```
    /// - Parameter expires: from 1 second to 7 days (SigV4's limit).
    /// - Throws: ``GQLError`` `.invalidArgument` for an expiry out of range, an empty bucket or key, or an unusable
    ///   endpoint.
    public func presignedURL(_ method: PresignedMethod, _ bucket: String, _ key: String, expires: Duration) throws
        -> URL
    {
        let seconds = expires.components.seconds
        guard (1...604_800).contains(seconds) else {
            throw GQLError(
                .invalidArgument, "a presigned URL expires after 1 second to 7 days, not \(expires)",
                operation: "presign")
        }
        let (origin, host, path) = try address(bucket, key, operation: "presign")
        let request = SigV4Signer.Request(
            method: method.rawValue, origin: origin, host: host, encodedPath: path, query: [],
            headers: [], payloadHash: SigV4Signer.unsignedPayload)
        let text = signer.presign(request, at: configuration.now(), expires: Int(seconds))
        guard let url = URL(string: text) else {
            throw GQLError(.invalidArgument, "the presigned URL for \(bucket)/\(key) is not a valid URL")
        }
        return url
    }
}

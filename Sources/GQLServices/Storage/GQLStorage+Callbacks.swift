import Foundation
import GQLCore

/// The original library's completion-handler forms, as thin adapters over the async methods. The handler runs on
/// a task of the cooperative pool, not on the main thread.
extension GQLStorage {
    /// Uploads `data`; `completion` gets nil or the error.
    ///
    /// ```swift
    /// storage.upload("bucket", "key", data) { error in if let error { print(error) } }
    /// ```
    public func upload(
        _ bucket: String, _ key: String, _ data: Data, completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Task {
            do {
                try await upload(bucket, key, data)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// Downloads an object; `completion` gets its data or the error.
    ///
    /// ```swift
    /// storage.download("bucket", "key") { data, error in … }
    /// ```
    public func download(
        _ bucket: String, _ key: String, completion: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) {
        Task {
            do {
                completion(try await download(bucket, key), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Deletes an object; `completion` gets nil or the error.
    public func delete(_ bucket: String, _ key: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do {
                try await delete(bucket, key)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }
}

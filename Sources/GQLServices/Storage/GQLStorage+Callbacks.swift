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
        CompletionBridge.start(completion) { try await self.upload(bucket, key, data) }
    }

    /// Downloads an object; `completion` gets its data or the error.
    ///
    /// ```swift
    /// storage.download("bucket", "key") { data, error in … }
    /// ```
    public func download(
        _ bucket: String, _ key: String, completion: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) {
        CompletionBridge.start(completion) { try await self.download(bucket, key) }
    }

    /// Deletes an object; `completion` gets nil or the error.
    public func delete(_ bucket: String, _ key: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await self.delete(bucket, key) }
    }
}

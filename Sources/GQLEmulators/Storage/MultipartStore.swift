import Foundation
import GQLCore
import GQLCrypto

/// A multipart upload in progress: what its object will carry, and the parts uploaded so far.
struct StoredUpload: Codable, Sendable {
    struct Part: Codable, Sendable {
        var number: Int
        var size: Int64
        /// The part's MD5 in hex (its ETag without quotes).
        var etag: String
        /// The part's CRC-32 in base64, when the upload declared CRC32 or the part sent one.
        var checksumCRC32: String?
        /// The part's CRC-64/NVME in base64 (always computed; the object's default checksum combines them).
        var checksumCRC64NVME: String?
        var lastModified: Date
        /// The part's file in the upload's folder.
        var file: String
    }

    var id: String
    var bucket: String
    var key: String
    var initiated: Date
    var headers: [String: String]
    var metadata: [String: String]
    /// The `x-amz-checksum-algorithm` the upload was started with (`CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`,
    /// `SHA256`); `nil` for one started without, whose object gets S3's default CRC-64/NVME.
    var checksumAlgorithm: String?
    /// Its `x-amz-checksum-type`, `COMPOSITE` or `FULL_OBJECT`, with ``checksumAlgorithm``; `nil` in records written
    /// before it was kept (CRC-32 uploads then, all composite). ``checksumMode`` reads it.
    var checksumType: String?
    var parts: [Int: Part] = [:]
}

/// The multipart uploads of a storage emulator: `uploads/ID/upload.json` for each, with a file and a record per
/// part; kept in memory too. A part replaced by a later upload of the same number is removed once the new one is
/// in place; what a killed process left half done (part files no record names, an upload folder without its
/// record) is removed when the store opens.
///
/// A completion is atomic to every other request: while it joins the parts its upload stays listed and its parts
/// readable, unchanged, and what would change them (a part stored, an abort, another completion) waits for the
/// completion's outcome: the upload gone once it succeeded, or exactly as it was when it failed.
final class MultipartStore: Sendable {
    let folder: GQLDataFolder
    private let state: GQLLocked<State>
    /// Called with the upload's id when a request starts waiting for a completion of it to end, once per request
    /// however often it waits (for tests).
    private let whenWaiting: (@Sendable (_ uploadId: String) -> Void)?

    private struct State {
        var uploads: [String: StoredUpload] = [:]
        /// The uploads whose completion is joining their parts.
        var completing: Set<String> = []
        /// Requests waiting for a completion to end (each checks again whether its upload's has)...
        var settled = GQLWaiters<Void, Never>()
        /// ...and their tickets by upload: the end of an upload's completion wakes only the requests of that upload.
        var waiting: [String: [GQLWaiters<Void, Never>.Ticket]] = [:]
    }

    init(folder: GQLDataFolder, whenWaiting: (@Sendable (_ uploadId: String) -> Void)? = nil) throws {
        self.folder = folder
        self.whenWaiting = whenWaiting
        var uploads: [String: StoredUpload] = [:]
        let root = try folder.subfolder("uploads")
        let decoder = JSONDecoder()
        let fileManager = FileManager.default
        for id in (try? fileManager.contentsOfDirectory(atPath: root.url.path)) ?? [] where Self.isUploadId(id) {
            let partsFolder = root.url.appendingPathComponent(id)
            guard fileManager.fileExists(atPath: partsFolder.appendingPathComponent("upload.json").path) else {
                // Killed while the upload was created, completed or aborted: no record, so nothing can use its parts.
                try? fileManager.removeItem(at: partsFolder)
                continue
            }
            guard let data = try? folder.read("uploads/\(id)/upload.json"),
                var upload = try? decoder.decode(StoredUpload.self, from: data)
            else { continue }
            let files = (try? fileManager.contentsOfDirectory(atPath: partsFolder.path)) ?? []
            for file in files where file.hasPrefix("part-") && file.hasSuffix(".json") {
                guard let data = try? Data(contentsOf: partsFolder.appendingPathComponent(file)),
                    let part = try? decoder.decode(StoredUpload.Part.self, from: data)
                else { continue }
                upload.parts[part.number] = part
            }
            // A part's bytes whose record never replaced the old one (killed between the two renames), or that a
            // newer part replaced (killed before its removal): no record names them.
            let named = Set(upload.parts.values.map(\.file))
            for file in files where file.hasPrefix("part-") && !file.hasSuffix(".json") && !named.contains(file) {
                try? fileManager.removeItem(at: partsFolder.appendingPathComponent(file))
            }
            uploads[id] = upload
        }
        state = GQLLocked(State(uploads: uploads))
    }

    /// Upload ids are 32 lowercase hex digits, so one is always a safe folder name.
    static func isUploadId(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func noSuchUpload(_ id: String) -> S3Error {
        S3Error(
            .noSuchUpload,
            "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted "
                + "or completed.", details: [("UploadId", id)])
    }

    func create(_ upload: StoredUpload) throws(S3Error) -> StoredUpload {
        var upload = upload
        upload.id = Bytes.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        do {
            try folder.write(JSONEncoder().encode(upload), to: "uploads/\(upload.id)/upload.json")
        } catch {
            throw S3Error(.internalError, "The upload could not be started: \(error)")
        }
        state.withLock { $0.uploads[upload.id] = upload }
        return upload
    }

    /// The upload `id` of `bucket`/`key`.
    func upload(_ id: String, bucket: String, key: String) throws(S3Error) -> StoredUpload {
        guard let upload = state.withLock({ $0.uploads[id] }), upload.bucket == bucket, upload.key == key else {
            throw Self.noSuchUpload(id)
        }
        return upload
    }

    /// Every upload of `bucket`, oldest first.
    func uploads(in bucket: String) -> [StoredUpload] {
        state.withLock { $0.uploads.values.filter { $0.bucket == bucket } }.sorted {
            ($0.key, $0.initiated) < ($1.key, $1.initiated)
        }
    }

    /// Makes the bytes in `temporary` part `part.number` of upload `id`, replacing an earlier part of that number;
    /// once a completion of the upload running meanwhile has ended (`NoSuchUpload` when it completed the upload).
    func addPart(_ id: String, temporary: URL, _ part: StoredUpload.Part) async throws(S3Error) {
        var part = part
        part.file = "part-\(part.number)-\(UUID().uuidString)"
        let replaced: StoredUpload.Part?
        do throws(S3Error) {
            let (record, fileURL, recordURL): (URL, URL, URL)
            do {
                record = try folder.temporaryFileURL()
                try GQLDataFolder.writeSynced(JSONEncoder().encode(part), to: record)
                fileURL = try folder.resolve("uploads/\(id)/\(part.file)")
                recordURL = try folder.resolve("uploads/\(id)/part-\(part.number).json")
            } catch {
                throw Self.partNotStored(error)
            }
            do throws(S3Error) {
                replaced = try await whenSettled(id) { state throws(S3Error) in
                    guard state.uploads[id] != nil else { throw Self.noSuchUpload(id) }
                    do {
                        try folder.moveIntoPlace(temporary, fileURL)
                        try folder.moveIntoPlace(record, recordURL)
                    } catch {
                        throw Self.partNotStored(error)
                    }
                    return state.uploads[id]?.parts.updateValue(part, forKey: part.number)
                }
            } catch {
                try? FileManager.default.removeItem(at: record)
                throw error
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if let replaced, let url = try? folder.resolve("uploads/\(id)/\(replaced.file)") {
            try? FileManager.default.removeItem(at: url)
        }
    }

    private static func partNotStored(_ error: any Error) -> S3Error {
        S3Error(.internalError, "The part could not be stored: \(error)")
    }

    /// Starts the completion of upload `id` once `check` accepts it (after a completion of it running meanwhile
    /// has ended): the upload stays listed, unchanged, until ``endCompletion(_:completed:)``, which must follow.
    func beginCompletion(
        _ id: String, bucket: String, key: String, check: (StoredUpload) throws(S3Error) -> Void
    ) async throws(S3Error) -> StoredUpload {
        try await whenSettled(id) { state throws(S3Error) in
            guard let upload = state.uploads[id], upload.bucket == bucket, upload.key == key else {
                throw Self.noSuchUpload(id)
            }
            try check(upload)
            state.completing.insert(id)
            return upload
        }
    }

    /// Ends the completion of upload `id`: the upload is gone when it `completed`, else left as it was; the
    /// requests that waited for it go on.
    func endCompletion(_ id: String, completed: Bool) {
        state.withLock { state in
            if completed { state.uploads[id] = nil }
            state.completing.remove(id)
            return (state.waiting.removeValue(forKey: id) ?? []).compactMap {
                state.settled.resume($0, with: .success(()))
            }
        }.forEach { $0.run() }
    }

    /// Runs `body` under the lock once no completion of upload `id` is running.
    private func whenSettled<T>(_ id: String, _ body: (inout State) throws(S3Error) -> T) async throws(S3Error) -> T {
        var waited = false
        while true {
            var ticket: GQLWaiters<Void, Never>.Ticket?
            let outcome = state.withLock { state -> Result<T, S3Error>? in
                guard !state.completing.contains(id) else {
                    let added = state.settled.add()
                    state.waiting[id, default: []].append(added)
                    ticket = added
                    return nil
                }
                do throws(S3Error) {
                    return .success(try body(&state))
                } catch {
                    return .failure(error)
                }
            }
            if let outcome { return try outcome.get() }
            guard let ticket else { continue }
            if !waited { whenWaiting?(id) }
            waited = true
            // A cancelled wait's ticket stays listed until the completion ends, which resumes nothing for it.
            await state.wait(for: ticket, in: \.settled, whenCancelled: { _ in .success(()) })
            if Task.isCancelled {
                throw S3Error(.internalError, "The request ended while a completion of its upload was running.")
            }
        }
    }

    /// The URL of a part's file.
    func partURL(_ id: String, _ part: StoredUpload.Part) throws -> URL {
        try folder.resolve("uploads/\(id)/\(part.file)")
    }

    /// Removes upload `id`'s folder (after its completion or abort).
    func removeFiles(_ id: String) {
        if let url = try? folder.resolve("uploads/\(id)") { try? FileManager.default.removeItem(at: url) }
    }

    /// Aborts upload `id`: its parts are removed (once a completion of it running meanwhile has ended:
    /// `NoSuchUpload` when that completed it).
    func abort(_ id: String, bucket: String, key: String) async throws(S3Error) {
        try await whenSettled(id) { state throws(S3Error) in
            guard let upload = state.uploads[id], upload.bucket == bucket, upload.key == key else {
                throw Self.noSuchUpload(id)
            }
            state.uploads[id] = nil
        }
        removeFiles(id)
    }
}

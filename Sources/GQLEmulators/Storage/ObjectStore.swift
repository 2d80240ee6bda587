import Foundation
import GQLCore
import GQLCrypto

/// The buckets and objects of a storage emulator, on disk in its data folder, with an index in memory.
///
/// Layout: `buckets/NAME/bucket.json`; `buckets/NAME/meta/H.json` for the object whose key hashes (SHA-256, hex)
/// to `H` — a key never becomes a path —; `buckets/NAME/data/ID` for its bytes, a fresh name per upload.
/// An upload streams into the folder's `.tmp`, is renamed to its data file, then its record is renamed into
/// place, and only then is the old data file removed: a reader sees the old object or the new one, and a killed
/// upload leaves at most an unreferenced data file, removed at the next start.
final class ObjectStore: Sendable {
    let folder: GQLDataFolder

    private struct Bucket {
        var record: StoredBucket
        /// Every key, sorted by UTF-8 bytes (S3's order).
        var keys: [String] = []
        var objects: [String: StoredObject] = [:]
    }

    private let state: GQLLocked<[String: Bucket]>

    /// Opens the store in `folder`, reading every bucket and object record, and removes what a killed upload
    /// left behind.
    init(folder: GQLDataFolder) throws {
        self.folder = folder
        var buckets: [String: Bucket] = [:]
        let fileManager = FileManager.default
        let root = try folder.subfolder("buckets")
        let decoder = JSONDecoder()
        for name in (try? fileManager.contentsOfDirectory(atPath: root.url.path)) ?? [] {
            guard Self.isValidBucketName(name),
                let data = try folder.read("buckets/\(name)/bucket.json"),
                let record = try? decoder.decode(StoredBucket.self, from: data)
            else { continue }
            var bucket = Bucket(record: record)
            let metaFolder = try folder.resolve("buckets/\(name)/meta")
            var referenced = Set<String>()
            for file in (try? fileManager.contentsOfDirectory(atPath: metaFolder.path)) ?? []
            where file.hasSuffix(".json") {
                guard let data = try? Data(contentsOf: metaFolder.appendingPathComponent(file)),
                    let object = try? decoder.decode(StoredObject.self, from: data)
                else { continue }
                bucket.objects[object.key] = object
                referenced.insert(object.dataFile)
            }
            bucket.keys = bucket.objects.keys.sorted(by: Self.precedes)
            let dataFolder = try folder.resolve("buckets/\(name)/data")
            for file in (try? fileManager.contentsOfDirectory(atPath: dataFolder.path)) ?? []
            where !referenced.contains(file) {
                try? fileManager.removeItem(at: dataFolder.appendingPathComponent(file))
            }
            buckets[name] = bucket
        }
        folder.removeStaleTemporaries()
        state = GQLLocked(buckets)
    }

    /// S3's key order: by UTF-8 bytes.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// S3's rules for bucket names: 3 to 63 lowercase letters, digits, `.` and `-`, starting and ending with a
    /// letter or digit, no `..`.
    static func isValidBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard let first = bytes.first, let last = bytes.last, alphanumeric(first), alphanumeric(last) else {
            return false
        }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
            && !name.contains("..")
    }

    // MARK: Buckets

    func createBucket(_ name: String, at date: Date) throws(S3Error) {
        guard Self.isValidBucketName(name) else {
            throw S3Error(.invalidBucketName, "The specified bucket is not valid.", details: [("BucketName", name)])
        }
        let record = StoredBucket(name: name, created: date)
        do {
            let data = try JSONEncoder().encode(record)
            _ = try folder.subfolder("buckets").subfolder(name)
            try state.withLock { buckets in
                guard buckets[name] == nil else {
                    throw S3Error(
                        .bucketAlreadyOwnedByYou,
                        "Your previous request to create the named bucket succeeded and you already own it.",
                        details: [("BucketName", name)])
                }
                try folder.write(data, to: "buckets/\(name)/bucket.json")
                buckets[name] = Bucket(record: record)
            }
        } catch let error as S3Error {
            throw error
        } catch {
            throw S3Error(.internalError, "The bucket could not be created: \(error)")
        }
    }

    func deleteBucket(_ name: String) throws(S3Error) {
        do {
            try state.withLock { buckets in
                guard let bucket = buckets[name] else { throw Self.noSuchBucket(name) }
                guard bucket.keys.isEmpty else {
                    throw S3Error(
                        .bucketNotEmpty, "The bucket you tried to delete is not empty", details: [("BucketName", name)])
                }
                buckets[name] = nil
                try FileManager.default.removeItem(at: folder.resolve("buckets/\(name)"))
            }
        } catch let error as S3Error {
            throw error
        } catch {
            throw S3Error(.internalError, "The bucket could not be deleted: \(error)")
        }
    }

    /// Every bucket, by name.
    func buckets() -> [StoredBucket] {
        state.withLock { $0.values.map(\.record) }.sorted { $0.name < $1.name }
    }

    func bucketExists(_ name: String) -> Bool { state.withLock { $0[name] != nil } }

    static func noSuchBucket(_ name: String) -> S3Error {
        S3Error(.noSuchBucket, "The specified bucket does not exist", details: [("BucketName", name)])
    }

    // MARK: Objects

    /// The record of `key`.
    func object(_ bucket: String, _ key: String) throws(S3Error) -> StoredObject {
        let found: StoredObject?? = state.withLock { buckets in buckets[bucket].map { $0.objects[key] } }
        guard let inBucket = found else { throw Self.noSuchBucket(bucket) }
        guard let object = inBucket else {
            throw S3Error(.noSuchKey, "The specified key does not exist.", details: [("Key", key)])
        }
        return object
    }

    /// The URL of an object's bytes.
    func dataURL(_ bucket: String, _ object: StoredObject) throws -> URL {
        try folder.resolve("buckets/\(bucket)/data/\(object.dataFile)")
    }

    /// Opens an object's bytes for reading, with the record they belong to (an object replaced between reading
    /// its record and opening its file is read again).
    func open(_ bucket: String, _ key: String) throws(S3Error) -> (StoredObject, OpenFile) {
        for _ in 0..<3 {
            let object = try object(bucket, key)
            do {
                if let file = try OpenFile.reading(dataURL(bucket, object)) { return (object, file) }
            } catch {
                throw S3Error(.internalError, "The object could not be read: \(error)")
            }
        }
        throw S3Error(.internalError, "The object changed while it was read; try again.")
    }

    /// Makes the bytes in `temporary` the object `object.key` of `bucket`, replacing any object of that key.
    func commit(_ bucket: String, temporary: URL, _ object: StoredObject) throws(S3Error) {
        var object = object
        object.dataFile = UUID().uuidString
        let removed: StoredObject?
        do {
            let record = try JSONEncoder().encode(object)
            let recordTemporary = try folder.temporaryFileURL()
            try GQLDataFolder.writeSynced(record, to: recordTemporary)
            let dataURL = try dataURL(bucket, object)
            let recordURL = try folder.resolve("buckets/\(bucket)/meta/\(Self.hashName(object.key)).json")
            removed = try state.withLock { buckets -> StoredObject? in
                guard var entry = buckets[bucket] else {
                    try? FileManager.default.removeItem(at: recordTemporary)
                    throw Self.noSuchBucket(bucket)
                }
                try folder.moveIntoPlace(temporary, dataURL)
                try folder.moveIntoPlace(recordTemporary, recordURL)
                let previous = entry.objects.updateValue(object, forKey: object.key)
                if previous == nil { Self.insert(object.key, into: &entry.keys) }
                buckets[bucket] = entry
                return previous
            }
        } catch let error as S3Error {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw S3Error(.internalError, "The object could not be stored: \(error)")
        }
        if let removed, let url = try? dataURL(bucket, removed) { try? FileManager.default.removeItem(at: url) }
    }

    /// Deletes `key` (nothing happens when there is no such object, as S3).
    func delete(_ bucket: String, _ key: String) throws(S3Error) {
        let removed: StoredObject?
        do {
            let recordURL = try folder.resolve("buckets/\(bucket)/meta/\(Self.hashName(key)).json")
            removed = try state.withLock { buckets -> StoredObject? in
                guard var entry = buckets[bucket] else { throw Self.noSuchBucket(bucket) }
                guard let object = entry.objects.removeValue(forKey: key) else { return nil }
                try? FileManager.default.removeItem(at: recordURL)
                if let index = Self.index(of: key, in: entry.keys) { entry.keys.remove(at: index) }
                buckets[bucket] = entry
                return object
            }
        } catch let error as S3Error {
            throw error
        } catch {
            throw S3Error(.internalError, "The object could not be deleted: \(error)")
        }
        if let removed, let url = try? dataURL(bucket, removed) { try? FileManager.default.removeItem(at: url) }
    }

    /// One page of a listing: the keys of `bucket` that begin with `prefix`, after `after` (exclusive), those
    /// with `delimiter` after the prefix rolled up into common prefixes; at most `maxKeys` entries (keys and
    /// common prefixes together). `nil` when there is no such bucket.
    func list(_ bucket: String, _ query: ListQuery) -> ListPage? {
        state.withLock { buckets -> ListPage? in
            guard let entry = buckets[bucket] else { return nil }
            let keys = entry.keys
            var index = Self.firstIndex(after: query.prefix, inclusive: true, in: keys)
            if let after = query.after {
                index = Swift.max(index, Self.firstIndex(after: after.value, inclusive: false, in: keys))
                if after.isCommonPrefix {
                    while index < keys.count, keys[index].utf8.starts(with: after.value.utf8) { index += 1 }
                }
            }
            var page = ListPage()
            let prefixCount = query.prefix.utf8.count
            while index < keys.count {
                let key = keys[index]
                guard key.utf8.starts(with: query.prefix.utf8) else { break }
                let rest = key.utf8.dropFirst(prefixCount)
                if let delimiter = query.delimiter, !delimiter.isEmpty,
                    let range = Self.range(of: Array(delimiter.utf8), in: Array(rest))
                {
                    let common = query.prefix + String(decoding: rest.prefix(range.upperBound), as: UTF8.self)
                    guard page.count < query.maxKeys else {
                        page.isTruncated = true
                        break
                    }
                    page.commonPrefixes.append(common)
                    page.last = ListPage.Position(value: common, isCommonPrefix: true)
                    while index < keys.count, keys[index].utf8.starts(with: common.utf8) { index += 1 }
                    continue
                }
                guard page.count < query.maxKeys else {
                    page.isTruncated = true
                    break
                }
                if let object = entry.objects[key] { page.objects.append(object) }
                page.last = ListPage.Position(value: key, isCommonPrefix: false)
                index += 1
            }
            return page
        }
    }

    /// The range of `needle` in `haystack`, bytewise.
    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start..<start + needle.count
        }
        return nil
    }

    /// The file name of a key's record: its SHA-256 in hex.
    static func hashName(_ key: String) -> String { Bytes.hex(SHA256.hash(Array(key.utf8))) }

    private static func insert(_ key: String, into keys: inout [String]) {
        keys.insert(key, at: firstIndex(after: key, inclusive: true, in: keys))
    }

    private static func index(of key: String, in keys: [String]) -> Int? {
        let index = firstIndex(after: key, inclusive: true, in: keys)
        return index < keys.count && keys[index] == key ? index : nil
    }

    /// The index of the first key after `key` (or at it, when `inclusive`).
    private static func firstIndex(after key: String, inclusive: Bool, in keys: [String]) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            let before = inclusive ? precedes(keys[middle], key) : !precedes(key, keys[middle])
            if before { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// What a listing asks for.
struct ListQuery: Sendable {
    var prefix = ""
    var delimiter: String?
    /// Where the page starts (exclusive): a key, or a common prefix whose keys are all skipped.
    var after: ListPage.Position?
    var maxKeys = 1000
}

/// One page of a listing.
struct ListPage: Sendable {
    /// A place in a listing: the last key or common prefix a page holds.
    struct Position: Sendable, Equatable {
        var value: String
        var isCommonPrefix: Bool
    }

    var objects: [StoredObject] = []
    var commonPrefixes: [String] = []
    var isTruncated = false
    var last: Position?
    var count: Int { objects.count + commonPrefixes.count }
}

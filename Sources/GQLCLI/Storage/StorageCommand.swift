import ArgumentParser
import Foundation
import GQLServices

/// `gql-cli storage upload|download|delete|ls|presign`: Amazon S3 or any S3-compatible store through GQLStorage.
struct StorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Upload, download, list, delete and presign objects in Amazon S3 or an S3-compatible store.",
        discussion: """
            Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (or the flags); \
            the region from AWS_REGION; an S3-compatible endpoint from --endpoint or AWS_ENDPOINT_URL. \
            Transfers show a progress bar when standard error is a terminal.
            Example: gql-cli storage upload --endpoint http://127.0.0.1:9000 photo.png uploads/2026/photo.png
            """,
        subcommands: [Upload.self, Download.self, Delete.self, List.self, Presign.self, MakeBucket.self]
    )

    /// Runs `body` with the storage of `options`, shut down afterwards; errors become one readable line.
    static func with<T>(_ options: StorageOptions, _ action: String, _ body: (GQLStorage) async throws -> T)
        async throws -> T
    {
        let storage = try options.storage()
        do {
            let result = try await body(storage)
            try? await storage.shutdown()
            return result
        } catch {
            try? await storage.shutdown()
            throw CLIError(action, error)
        }
    }

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload a file (in parts when large) as BUCKET/KEY.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "The file to upload.") var file: String
        @Argument(help: "BUCKET/KEY (or s3://BUCKET/KEY).") var object: ObjectPath
        @Option(help: "The object's Content-Type.") var contentType: String?

        func run() async throws {
            let bar = ProgressBar(label: "upload \(object.key)")
            let etag = try await StorageCommand.with(storage, "cannot upload \(file)") { storage in
                try await storage.upload(
                    object.bucket, object.key, file: URL(fileURLWithPath: file), contentType: contentType
                ) { sent, total in bar.update(done: sent, total: total) }
            }
            bar.finish()
            print(
                "uploaded \(file) to \(object.bucket)/\(TerminalText.escaped(object.key)) "
                    + "(ETag \(TerminalText.escaped(etag, limit: 200)))")
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Download BUCKET/KEY into a file, streamed.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "BUCKET/KEY (or s3://BUCKET/KEY).") var object: ObjectPath
        @Argument(help: "The file to write (replaced once the download is complete).") var file: String

        func run() async throws {
            let bar = ProgressBar(label: "download \(object.key)")
            try await StorageCommand.with(storage, "cannot download \(object.bucket)/\(object.key)") { storage in
                try await storage.download(object.bucket, object.key, to: URL(fileURLWithPath: file)) {
                    received, total in bar.update(done: received, total: total)
                }
            }
            bar.finish()
            print("downloaded \(object.bucket)/\(object.key) to \(file)")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete BUCKET/KEY.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "BUCKET/KEY (or s3://BUCKET/KEY).") var object: ObjectPath

        func run() async throws {
            try await StorageCommand.with(storage, "cannot delete \(object.bucket)/\(object.key)") { storage in
                try await storage.delete(object.bucket, object.key)
            }
            print("deleted \(object.bucket)/\(object.key)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls", abstract: "List the objects of BUCKET (under a prefix): size, date and key.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "BUCKET, or BUCKET/PREFIX.") var location: String
        @Flag(help: "Print JSON lines instead of text.") var json = false

        func run() async throws {
            let path = ObjectPath(argument: location.contains("/") ? location : location + "/")
            guard let path else { throw ValidationError("'\(location)' is not BUCKET or BUCKET/PREFIX") }
            try await StorageCommand.with(storage, "cannot list \(location)") { storage in
                for try await object in storage.list(path.bucket, prefix: path.key) {
                    let date = object.lastModified.map(GQLDate.string(from:)) ?? "-"
                    if json {
                        let line: GQLValue = [
                            "key": .string(object.key), "size": .int(Int64(object.size)), "etag": .string(object.etag),
                            "lastModified": object.lastModified.map { .string(GQLDate.string(from: $0)) } ?? .null,
                        ]
                        print(try TerminalText.json(line))
                    } else {
                        print("\(date)  \(String(object.size).leftPadded(12))  \(TerminalText.escaped(object.key))")
                    }
                }
            }
        }
    }

    struct Presign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a URL that downloads (or, with --put, uploads) BUCKET/KEY without credentials.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "BUCKET/KEY (or s3://BUCKET/KEY).") var object: ObjectPath
        @Flag(help: "A URL for uploading with PUT instead of downloading.") var put = false
        @Option(help: "Seconds until the URL expires, 1 to 604800.") var expires = 900

        func run() async throws {
            let url = try await StorageCommand.with(storage, "cannot presign \(object.bucket)/\(object.key)") {
                storage in
                try storage.presignedURL(
                    put ? .put : .get, object.bucket, object.key, expires: .seconds(expires))
            }
            print(url.absoluteString)
        }
    }

    struct MakeBucket: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "mb", abstract: "Create a bucket.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "The bucket's name.") var bucket: String

        func run() async throws {
            try await StorageCommand.with(storage, "cannot create bucket \(bucket)") { storage in
                try await storage.createBucket(bucket)
            }
            print("created bucket \(bucket)")
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

import Foundation
import GQLCore
import GQLTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// "A killed upload leaves no partial object", for the process itself: `gql-cli serve --storage` killed with SIGKILL
/// while two uploads stream into it — one of a new key, one over an object that exists — and started again on the
/// same data folder has no new object, the old one whole, and none of the temporary files the kill left (removed at
/// start; a file of another name in the temporary folder is not the emulator's and stays).
@Suite("gql-cli serve storage killed mid-upload")
struct ServeStorageKillTests {
    @Test func aKilledEmulatorRestartsWithNoPartialObjectAndNoTemporaryFile() async throws {
        let scratch = try TemporaryDirectory()
        let data = scratch.path("data")
        let arguments = [
            "--port", "0", "--storage", "--storage-port", "0", "--storage-bucket", "kill", "--data", data,
        ]
        var server = try await ServeProcess.start(arguments + ["--endpoints-file", scratch.path("first.json")])
        var flags = try Self.flags(scratch.path("first.json"))
        let old = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try old.write(to: URL(fileURLWithPath: scratch.path("old.bin")))
        _ = try await CLIProcess.succeed(["storage", "upload", scratch.path("old.bin"), "s3://kill/kept.bin"] + flags)
        let temporaryFolder = URL(fileURLWithPath: data).appendingPathComponent("storage/.tmp")
        let notOurs = temporaryFolder.appendingPathComponent("notes.txt")
        try Data("not the emulator's".utf8).write(to: notOurs)

        // Two uploads declare 8 MiB each and send 3; the test waits until both temporary files have grown (the
        // emulator writes a MiB at a time), then kills the emulator mid-body.
        var connections: [Int32] = []
        defer { connections.forEach { _ = close($0) } }
        let body = [UInt8](repeating: 0x5A, count: 3 << 20)
        for key in ["kill/new.bin", "kill/kept.bin"] {
            let presigned = try await CLIProcess.succeed(["storage", "presign", key, "--put"] + flags)
            let url = try #require(URLComponents(string: presigned.trimmingCharacters(in: .whitespacesAndNewlines)))
            let (host, port) = (try #require(url.host), try #require(url.port))
            let head =
                "PUT \(url.percentEncodedPath)?\(url.percentEncodedQuery ?? "") HTTP/1.1\r\nHost: \(host):\(port)\r\n"
                + "Content-Length: \(8 << 20)\r\n\r\n"
            let descriptor = try RawConnection.connect(port: port)
            connections.append(descriptor)
            let bytes = Array(head.utf8) + body
            let sent = await onThread { RawConnection.send(descriptor, bytes, timeout: 10) }
            try #require(sent == bytes.count, "sent \(sent) of \(bytes.count) bytes")
        }
        // Decided by outcome, bounded at 10 s for a loaded machine.
        let grew = await pollUntil { Self.temporaries(temporaryFolder).filter { $0.size >= 1 << 20 }.count == 2 }
        try #require(grew, "the uploads' temporary files did not grow: \(Self.temporaries(temporaryFolder))")
        let termination = await server.kill()
        #expect(termination == .signalled(SIGKILL), "\(termination)")
        // What the kill left: the two temporary files, still there (no handler ran).
        #expect(Self.temporaries(temporaryFolder).count == 2)

        server = try await ServeProcess.start(arguments + ["--endpoints-file", scratch.path("second.json")])
        flags = try Self.flags(scratch.path("second.json"))
        #expect(Self.temporaries(temporaryFolder).isEmpty, "\(Self.temporaries(temporaryFolder))")
        #expect(FileManager.default.fileExists(atPath: notOurs.path))
        _ = try await CLIProcess.succeed(["storage", "download", "kill/kept.bin", scratch.path("back.bin")] + flags)
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path("back.bin"))) == old)
        let listing = try await CLIProcess.succeed(["storage", "ls", "kill", "--json"] + flags)
        let keys = listing.split(separator: "\n").compactMap { try? GQLValue(json: String($0))["key"]?.stringValue }
        #expect(keys == ["kept.bin"], "\(listing)")
        let missing = try await CLIProcess.fail(
            ["storage", "download", "kill/new.bin", scratch.path("new.bin")] + flags)
        #expect(missing.contains("NoSuchKey") || missing.contains("not found"), "\(missing)")
        // One object, one data file: no partial object's bytes anywhere in the bucket.
        let dataFiles = try FileManager.default.contentsOfDirectory(atPath: data + "/storage/buckets/kill/data")
        #expect(dataFiles.count == 1, "\(dataFiles)")
        #expect(try await server.stop(with: SIGTERM) == 0)
    }

    /// `--endpoint`, `--access-key` and `--secret-key` of the storage emulator, from an endpoints file.
    static func flags(_ path: String) throws -> [String] {
        let endpoints = try GQLValue(json: Data(contentsOf: URL(fileURLWithPath: path)))
        return [
            "--endpoint", try #require(endpoints["storage"]?.stringValue),
            "--access-key", try #require(endpoints["storageAccessKey"]?.stringValue),
            "--secret-key", try #require(endpoints["storageSecretKey"]?.stringValue),
        ]
    }

    /// The emulator's temporary files (named by a UUID) in `folder`, with their sizes.
    static func temporaries(_ folder: URL) -> [(name: String, size: Int)] {
        fileSizes(in: folder) { UUID(uuidString: $0) != nil }
    }
}

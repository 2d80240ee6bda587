import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLEmulators
@testable import GQLServices

/// A CompleteMultipartUpload is one step to every other request of its upload (review L9): while it joins the
/// parts the upload is listed and its parts answered as before, and a request that would change it (UploadPart,
/// AbortMultipartUpload) goes on once the completion ended: against the upload as it was when the completion
/// failed, or `NoSuchUpload` when it succeeded. The completion is held at the emulator (`whileCompleting`) while
/// the other requests are sent; the test goes on once the emulator says they wait (`whenWaitingForCompletion`).
@Suite(.timeLimit(.minutes(1))) struct StorageCompletionWindowTests {
    typealias Upload = StorageMultipartChecksumTests.Upload

    /// The requests the emulator holds behind a running completion.
    final class Waits: Sendable {
        private struct State {
            var count = 0
            var waiters = GQLWaiters<Void, Never>()
        }
        private let state = GQLLocked(State())

        func add() {
            state.withLock { state in
                state.count += 1
                return state.waiters.resumeAll(with: .success(()))
            }.run()
        }

        /// How many requests have waited so far.
        var count: Int { state.withLock { $0.count } }

        /// Returns once `count` requests have waited.
        func reached(_ count: Int) async {
            while state.withLock({ $0.count }) < count {
                await state.wait(
                    in: \.waiters, unlessReady: { $0.count >= count ? .success(()) : nil },
                    whenCancelled: { _ in .success(()) })
                if Task.isCancelled { return }
            }
        }
    }

    /// An emulator (parts of 1 KiB or more) whose first completion waits at a gate, and the requests held behind it.
    static func withHeldCompletion(_ body: (StorageFixture, HeldGate, Waits) async throws -> Void) async throws {
        let gate = HeldGate(holdingCall: 1)
        let waits = Waits()
        try await StorageFixture.with(
            configure: {
                $0.minimumPartSize = 1024
                $0.whileCompleting = { _ in await gate.pass(nil) }
                $0.whenWaitingForCompletion = { _ in waits.add() }
            }, client: { $0.sendsChecksums = false }
        ) { fixture in
            try await body(fixture, gate, waits)
        }
    }

    static let parts = StorageMultipartChecksumTests.parts
    static let whole = StorageMultipartChecksumTests.whole
    static let fourth = StorageFixture.bytes(4_096, seed: 310)

    static func listedUploads(_ storage: GQLStorage) async throws -> [String?] {
        let list = GQLStorage.Call(method: "GET", bucket: "bucket", query: [("uploads", "")], operation: "list")
        let uploads = try #require(try storage.parseXML(try await storage.send(list), call: list))
        return uploads.children("Upload").map { $0["UploadId"] }
    }

    static func started(_ storage: GQLStorage, _ key: String) async throws -> (Upload, [String]) {
        var upload = Upload(storage: storage, key: key)
        _ = try await upload.create()
        var etags: [String] = []
        for (index, body) in parts.enumerated() { etags.append(try await upload.send(index + 1, body).etag) }
        return (upload, etags)
    }

    /// A completion refused once it joins (`BadDigest`: the CRC-64/NVME it sends is not the object's) leaves the
    /// upload as it was all along: listed, its parts answered, a part sent meanwhile stored after it, and a
    /// right completion then makes the object.
    @Test func aCompletionThatFailsLeavesTheUploadAsItWasToEveryRequestMeanwhile() async throws {
        try await Self.withHeldCompletion { fixture, gate, waits in
            let storage = fixture.storage
            let (upload, etags) = try await Self.started(storage, "failing.bin")
            let wrong = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", CRC64NVME(Self.parts[0]).base64)])
            let completing = Task { try await StorageMultipartChecksumTests.refusal(storage, wrong) }
            await gate.held()

            #expect(try await Self.listedUploads(storage) == [upload.id])
            #expect(try await upload.listParts().children("Part").map { $0["ETag"] } == etags)
            let fourth = Task { try await upload.send(4, Self.fourth).etag }
            await waits.reached(1)
            gate.open()

            #expect(try await completing.value == "BadDigest 400")
            #expect(try await fourth.value == "\"\(Bytes.hex(MD5.hash(Array(Self.fourth))))\"")
            #expect(try await Self.listedUploads(storage) == [upload.id])
            #expect(try await upload.listParts().children("Part").count == 4)
            #expect(try await storage.info("bucket", "failing.bin") == nil)

            let right = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", CRC64NVME(Self.whole).base64)])
            #expect(try await StorageMultipartChecksumTests.refusal(storage, right) == nil)
            #expect(try await storage.download("bucket", "failing.bin") == Self.whole)
            #expect(try await Self.listedUploads(storage) == [])
        }
    }

    /// A completion that succeeds is the upload's end for every request held behind it: a part and an abort sent
    /// meanwhile are `NoSuchUpload` once it made the object, which holds the parts it listed; the upload's files
    /// are gone.
    @Test func aCompletionThatSucceedsEndsTheUploadForEveryRequestMeanwhile() async throws {
        try await Self.withHeldCompletion { fixture, gate, waits in
            let storage = fixture.storage
            let (upload, etags) = try await Self.started(storage, "done.bin")
            let right = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", CRC64NVME(Self.whole).base64)])
            let completing = Task { try await StorageMultipartChecksumTests.refusal(storage, right) }
            await gate.held()

            #expect(try await Self.listedUploads(storage) == [upload.id])
            #expect(try await upload.listParts().children("Part").count == 3)
            #expect(try await storage.info("bucket", "done.bin") == nil, "no object before the completion ends")
            let fourth = Task { try await StorageMultipartChecksumTests.refusal(storage, upload.part(2, Self.fourth)) }
            let abort = Task {
                let abort = upload.call("DELETE", [("uploadId", upload.id)])
                return try await StorageMultipartChecksumTests.refusal(storage, abort)
            }
            await waits.reached(2)
            gate.open()

            #expect(try await completing.value == nil)
            #expect(try await fourth.value == "NoSuchUpload 404")
            #expect(try await abort.value == "NoSuchUpload 404")
            #expect(try await storage.download("bucket", "done.bin") == Self.whole)
            #expect(try await Self.listedUploads(storage) == [])
            let folder = fixture.directory.url.appendingPathComponent("data/uploads/\(upload.id)")
            #expect(!FileManager.default.fileExists(atPath: folder.path))
        }
    }

    /// The end of one upload's completion goes on with the requests of that upload only, and a request counts as
    /// waiting once: with two completions held, a part sent to each waits, and when the first completion ends the
    /// second upload's part goes on waiting without being woken (review L9: it used to wake, check and wait again,
    /// and the emulator reported a third wait).
    @Test func theEndOfACompletionWakesOnlyItsOwnUploadsRequests() async throws {
        let first = HeldGate(holdingCall: 1)
        let second = HeldGate(holdingCall: 1)
        let completionsSeen = GQLLocked(0)
        let waits = Waits()
        try await StorageFixture.with(
            configure: {
                $0.minimumPartSize = 1024
                $0.whileCompleting = { _ in
                    // The first completion is held at the first gate, the second at the second.
                    let number = completionsSeen.withLock { count in
                        count += 1
                        return count
                    }
                    await (number == 1 ? first : second).pass(nil)
                }
                $0.whenWaitingForCompletion = { _ in waits.add() }
            }, client: { $0.sendsChecksums = false }
        ) { fixture in
            let storage = fixture.storage
            var completions: [Task<String?, any Error>] = []
            var parts: [Task<String?, any Error>] = []
            for (key, gate) in [("a.bin", first), ("b.bin", second)] {
                let (upload, etags) = try await Self.started(storage, key)
                let crc = CRC64NVME(Self.whole).base64
                let right = upload.complete(etags, headers: [("x-amz-checksum-crc64nvme", crc)])
                completions.append(Task { try await StorageMultipartChecksumTests.refusal(storage, right) })
                await gate.held()
                let part = upload.part(2, Self.fourth)
                parts.append(Task { try await StorageMultipartChecksumTests.refusal(storage, part) })
                await waits.reached(completions.count)
            }
            first.open()
            #expect(try await completions[0].value == nil)
            #expect(try await parts[0].value == "NoSuchUpload 404")
            second.open()
            #expect(try await completions[1].value == nil)
            #expect(try await parts[1].value == "NoSuchUpload 404")
            #expect(waits.count == 2, "each held part counted once")
            #expect(try await Self.listedUploads(storage) == [])
        }
    }
}

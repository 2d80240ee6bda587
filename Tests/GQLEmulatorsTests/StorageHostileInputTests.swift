import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLServices

/// Input no honest client sends, signed as a client would sign it: malformed XML bodies, a body that trickles,
/// keys that look like paths out of the data folder. Each gets S3's own error or is stored as an ordinary key; the
/// emulator keeps answering and writes nothing outside its folder.
@Suite struct StorageHostileInputTests {
    /// XML bodies S3 refuses with `MalformedXML`: nesting far deeper than any request of S3's, entity declarations
    /// (internal ones that expand a billion times, external ones naming a file), an undeclared entity, a document
    /// cut short, one more `<Object>` than a `<Delete>` may hold, a body over the XML size limit, and bodies in
    /// another encoding than UTF-8 (where the parser would find the declarations a UTF-8 byte search does not).
    static func malformedBodies(root: String, item: String) -> [(name: String, body: Data)] {
        let laughs =
            "<!DOCTYPE \(root) [<!ENTITY lol \"lol\">"
            + (1...9).map { level in
                "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10)
                    + "\">"
            }.joined() + "]>"
        let named =
            "<!DOCTYPE \(root) [<!ENTITY key \"keep.txt\">]><\(root)><\(item)><Key>&key;</Key></\(item)></\(root)>"
        func utf16(_ text: String, bigEndian: Bool = false) -> Data {
            Data(
                text.utf16.flatMap {
                    bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)]
                })
        }
        let bom = Data([0xFF, 0xFE])
        let utf7 = "<?xml version=\"1.0\" encoding=\"UTF-7\"?>" + named.replacingOccurrences(of: "<!", with: "+ADwAIQ-")
        let other: [(name: String, body: Data)] = [
            (
                "billion laughs in UTF-16LE",
                bom + utf16(laughs + "<\(root)><\(item)><Key>&lol9;</Key></\(item)></\(root)>")
            ),
            ("an entity naming a key in UTF-16LE", bom + utf16(named)),
            (
                "an entity naming a key in UTF-16BE without a byte order mark",
                utf16("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + named, bigEndian: true)
            ),
            ("an entity naming a key in UTF-7", Data(utf7.utf8)),
        ]
        let utf8: [(name: String, body: String)] = [
            ("deep nesting", "<\(root)>" + String(repeating: "<\(item)>", count: 20_000) + "</\(root)>"),
            ("billion laughs", laughs + "<\(root)><\(item)><Key>&lol9;</Key></\(item)></\(root)>"),
            (
                "external entity",
                "<!DOCTYPE \(root) [<!ENTITY file SYSTEM \"file:///etc/passwd\">]><\(root)><\(item)><Key>&file;</Key>"
                    + "</\(item)></\(root)>"
            ),
            ("undeclared entity", "<\(root)><\(item)><Key>&lol9;</Key></\(item)></\(root)>"),
            ("truncated", "<\(root)><\(item)><Key>keep.txt</Key></\(item)><\(item)><Ke"),
            ("not XML", "{\"\(root)\": []}"),
            (
                "1,001 objects",
                "<\(root)>"
                    + String(
                        repeating: "<\(item)><Key>k</Key><PartNumber>1</PartNumber><ETag>x</ETag></\(item)>",
                        count: 1001)
                    + "</\(root)>"
            ),
            ("over the size limit", "<\(root)>" + String(repeating: "<!-- padding -->", count: 200_000) + "</\(root)>"),
        ]
        return utf8.map { ($0.name, Data($0.body.utf8)) } + other
    }

    /// Sends `call` signed as GQLStorage signs it; the S3 error code it was refused with, `nil` when it was
    /// accepted.
    static func refusal(_ storage: GQLStorage, _ call: GQLStorage.Call) async -> String? {
        do {
            _ = try await storage.send(call)
            return nil
        } catch let error as GQLError {
            return error.serviceCode ?? "\(error)"
        } catch {
            return "\(error)"
        }
    }

    @Test func malformedDeleteObjectsBodiesAreMalformedXMLAndDeleteNothing() async throws {
        try await StorageFixture.with { fixture in
            try await fixture.storage.upload("bucket", "keep.txt", Data("kept".utf8))
            for (name, body) in Self.malformedBodies(root: "Delete", item: "Object") {
                let call = GQLStorage.Call(
                    method: "POST", bucket: "bucket", query: [("delete", "")],
                    headers: [("Content-Type", "application/xml")], body: body, operation: "delete")
                #expect(await Self.refusal(fixture.storage, call) == "MalformedXML", "\(name)")
            }
            #expect(try await fixture.storage.download("bucket", "keep.txt") == Data("kept".utf8))
        }
    }

    @Test func malformedCompleteMultipartUploadBodiesAreMalformedXMLAndTheUploadStays() async throws {
        try await StorageFixture.with(configure: { $0.minimumPartSize = 1 }) { fixture in
            let storage = fixture.storage
            let create = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploads", "")], operation: "upload")
            let uploadId = try #require(try storage.parseXML(try await storage.send(create), call: create)?["UploadId"])
            var part = GQLStorage.Call(
                method: "PUT", bucket: "bucket", key: "multi.bin",
                query: [("partNumber", "1"), ("uploadId", uploadId)],
                operation: "upload")
            part.body = Data("the only part".utf8)
            _ = try await storage.send(part)
            func complete(_ body: Data) -> GQLStorage.Call {
                GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "multi.bin", query: [("uploadId", uploadId)],
                    headers: [("Content-Type", "application/xml")], body: body, operation: "upload")
            }
            for (name, body) in Self.malformedBodies(root: "CompleteMultipartUpload", item: "Part") {
                let code = await Self.refusal(storage, complete(body))
                // 1,001 well-formed parts naming part 1 with a wrong ETag: S3 refuses the part, not the XML.
                #expect(code == (name == "1,001 objects" ? "InvalidPart" : "MalformedXML"), "\(name)")
            }
            #expect(try await storage.info("bucket", "multi.bin") == nil)
            // The upload survived every refusal: it completes.
            let etag = Bytes.hex(MD5.hash(Data("the only part".utf8)))
            let body =
                "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"\(etag)\"</ETag></Part></CompleteMultipartUpload>"
            #expect(await Self.refusal(storage, complete(Data(body.utf8))) == nil)
            #expect(try await storage.download("bucket", "multi.bin") == Data("the only part".utf8))
        }
    }

    /// S3's 5 MiB minimum for every part but the last, at its default: two 1 KiB parts do not complete
    /// (`EntityTooSmall`, the upload stays), the second alone, as the last part, does.
    @Test func aPartUnderFiveMiBThatIsNotTheLastIsEntityTooSmall() async throws {
        try await StorageFixture.with { fixture in
            let storage = fixture.storage
            let create = GQLStorage.Call(
                method: "POST", bucket: "bucket", key: "small.bin", query: [("uploads", "")], operation: "upload")
            let uploadId = try #require(try storage.parseXML(try await storage.send(create), call: create)?["UploadId"])
            let bodies = [1: Data(repeating: 1, count: 1024), 2: Data(repeating: 2, count: 1024)]
            for (number, body) in bodies {
                var part = GQLStorage.Call(
                    method: "PUT", bucket: "bucket", key: "small.bin",
                    query: [("partNumber", String(number)), ("uploadId", uploadId)], operation: "upload")
                part.body = body
                _ = try await storage.send(part)
            }
            func complete(_ numbers: [Int]) -> GQLStorage.Call {
                let parts = numbers.map { number in
                    "<Part><PartNumber>\(number)</PartNumber><ETag>\"\(Bytes.hex(MD5.hash(bodies[number] ?? Data())))\"</ETag></Part>"
                }
                return GQLStorage.Call(
                    method: "POST", bucket: "bucket", key: "small.bin", query: [("uploadId", uploadId)],
                    headers: [("Content-Type", "application/xml")],
                    body: Data("<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>".utf8),
                    operation: "upload")
            }
            #expect(await Self.refusal(storage, complete([1, 2])) == "EntityTooSmall")
            #expect(try await storage.info("bucket", "small.bin") == nil)
            #expect(await Self.refusal(storage, complete([2])) == nil)
            #expect(try await storage.download("bucket", "small.bin") == bodies[2])
        }
    }

    /// A client that trickles bytes never stalls for a whole body timeout; it is cut off because it averages
    /// under the minimum rate. The timeout is 1.5 s here and a byte comes every 0.3 s (five times within any
    /// timeout, so only the rate rule, not the stall rule, can end it even on a loaded machine); the test bounds its
    /// wait at 10 s (a generous bound for a loaded machine) and decides by the answer: S3's `RequestTimeout`, and
    /// nothing stored.
    @Test func aBodyThatTricklesGetsRequestTimeout() async throws {
        try await StorageFixture.with(configure: {
            $0.limits.bodyTimeout = .milliseconds(1500)
            $0.minimumBodyRate = 64
        }) { fixture in
            let url = try fixture.storage.presignedURL(.put, "bucket", "slow.bin", expires: .seconds(60))
            let target = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            let head =
                "PUT \(target.percentEncodedPath)?\(target.percentEncodedQuery ?? "") HTTP/1.1\r\n"
                + "Host: 127.0.0.1:\(fixture.started.port)\r\nContent-Length: 100\r\n\r\n"
            let connection = try RawConnection(port: fixture.started.port, sending: head)
            let trickle = Task {
                for _ in 0..<40 where !Task.isCancelled {
                    await connection.send("x")
                    try? await Task.sleep(for: .milliseconds(300))
                }
            }
            let answers = await connection.readAnswers(1, timeout: 10)
            trickle.cancel()
            #expect(answers.first?.status == 400)
            #expect(answers.first?.body.contains("<Code>RequestTimeout</Code>") == true, "\(answers)")
            #expect(try await fixture.storage.info("bucket", "slow.bin") == nil)
            let temporary = fixture.directory.path("data/.tmp")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).isEmpty)
        }
    }

    /// A body timeout and a minimum rate too large to multiply (`Int64.max` bytes a second, a timeout of
    /// `Int64.max` seconds) do not trap the emulator: an upload is stored and reads back.
    @Test func hugeBodyTimeoutAndMinimumRateStillStoreAnUpload() async throws {
        let settings: [(timeout: Duration, rate: Int64)] = [
            (.seconds(Int64.max), 1024), (.seconds(20), .max), (.seconds(Int64.max), .max),
        ]
        for (timeout, rate) in settings {
            try await StorageFixture.with(configure: {
                $0.limits.bodyTimeout = timeout
                $0.minimumBodyRate = rate
            }) { fixture in
                try await fixture.storage.upload("bucket", "huge.txt", Data("stored".utf8))
                #expect(
                    try await fixture.storage.download("bucket", "huge.txt") == Data("stored".utf8),
                    "\(timeout), \(rate)")
            }
        }
    }

    /// Keys that look like paths out of the data folder — `../`, absolute, with a NUL, and `%2e%2e` on the wire —
    /// are ordinary keys: stored and read back by name, and no file of that name appears anywhere.
    @Test func traversalKeysNameNoFileOutsideTheDataFolder() async throws {
        try await StorageFixture.with { fixture in
            let storage = fixture.storage
            let marker = "escape-\(UUID().uuidString).txt"
            let keys = [
                "../../../\(marker)", "/tmp/\(marker)", "..\\..\\\(marker)", "nul\u{0}/../\(marker)", "./../\(marker)",
            ]
            for key in keys {
                try await storage.upload("bucket", key, Data(key.utf8))
                #expect(try await storage.download("bucket", key) == Data(key.utf8), "key \(key.debugDescription)")
            }
            // `%2e%2e` sent as is: the emulator decodes it to `..` (as S3 does) and signs the decoded path.
            let host = "127.0.0.1:\(fixture.started.port)"
            let signed = storage.signer.sign(
                SigV4Signer.Request(
                    method: "PUT", origin: fixture.started.url, host: host, encodedPath: "/bucket/../../\(marker)",
                    query: [], headers: [], payloadHash: SigV4Signer.unsignedPayload), at: Date())
            let request =
                "PUT /bucket/%2e%2e/%2E%2E/\(marker) HTTP/1.1\r\nHost: \(host)\r\n"
                + signed.map { "\($0.name): \($0.value)\r\n" }.joined() + "Content-Length: 4\r\n\r\ndots"
            let answers = await (try RawConnection(port: fixture.started.port, sending: request)).readAnswers(1)
            #expect(answers.first?.status == 200, "\(answers)")
            #expect(try await storage.download("bucket", "../../\(marker)") == Data("dots".utf8))
            // Nothing of that name anywhere: not beside the data folder, not in its parents, not in /tmp.
            let root = fixture.directory.url
            for place in [
                root, root.deletingLastPathComponent(), URL(fileURLWithPath: "/tmp"), URL(fileURLWithPath: "/"),
            ] {
                #expect(!FileManager.default.fileExists(atPath: place.appendingPathComponent(marker).path))
            }
            let everything = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
            #expect(!everything.isEmpty)
            #expect(everything.allSatisfy { !$0.contains("escape-") && ($0 == "data" || $0.hasPrefix("data/")) })
        }
    }
}

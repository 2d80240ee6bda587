import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// A 10 MB answer from a server: stored, and read back the same, in one fetch.
@Suite struct LargeAnswerTests {
    @Test func aTenMegabyteAnswerIsStoredAndReadBack() async throws {
        let title = String(repeating: "x", count: 2_000)
        let items = (0..<5_000).map { #"{"__typename":"Note","id":"\#($0)","title":"\#(title)"}"# }
        let body =
            #"{"data":{"listNotes":{"__typename":"ModelNoteConnection","items":["#
            + items.joined(separator: ",") + #"],"nextToken":null}}}"#
        #expect(body.utf8.count > 10_000_000)
        let server = try HostileServer { _, _ in .json(body) }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let fetched = try await cache.fetch(client, "ListNotes", policy: .networkOnly)
        #expect(fetched.data?["listNotes"]?["items"]?.arrayValue?.count == 5_000)
        let read = try await cache.fetch(client, "ListNotes", policy: .cacheOnly)
        #expect(read.source == .cache && read.data == fetched.data)
        #expect(try cache.statistics().types["Note"] == 5_000)
        try await client.shutdown()
    }
}

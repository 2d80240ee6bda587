import Foundation
import Testing

@testable import GQLDevServer

@Suite("Engine conflicts")
struct EngineConflictTests {
    private let staleUpdate =
        #"mutation { updateObjects(input: {objectId: "v", text: "late", _version: 1}) { objectId text _version } }"#
    private let staleDelete = #"mutation { deleteObjects(input: {objectId: "v", _version: 1}) { objectId } }"#

    /// An item at `_version` 2.
    private func versioned() async throws -> EngineFixture {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "v", "text": "one"])
        _ = try await fixture.data(
            #"mutation { updateObjects(input: {objectId: "v", text: "two", _version: 1}) { _version } }"#)
        return fixture
    }

    @Test func staleUpdateIsRejectedWithTheCurrentItem() async throws {
        let fixture = try await versioned()
        let response = await fixture.run(staleUpdate)
        #expect(response["data"]?["updateObjects"] == .null)
        let error = try #require(response["errors"]?[0])
        #expect(error["message"] == "Conflict resolver rejects mutation.")
        #expect(error["path"] == ["updateObjects"])
        #expect(error["locations"]?[0]?["line"] == 1)
        let extensions = try #require(error["extensions"])
        #expect(extensions["errorType"] == "ConflictUnhandled")
        #expect(extensions["data"]?["text"] == "two")
        #expect(extensions["data"]?["_version"] == 2)
        #expect(extensions["errorInfo"] == .null)
        #expect(error["errorType"] == nil)
        // Nothing was written.
        #expect(try fixture.db.fetchOne("Objects", key: "v")?["text"] == "two")
    }

    @Test func staleDeleteIsRejectedInAppSyncShape() async throws {
        let fixture = try await versioned()
        let response = await fixture.run(staleDelete, style: .appSync)
        let error = try #require(response["errors"]?[0])
        #expect(error["message"] == "Conflict resolver rejects mutation.")
        #expect(error["errorType"] == "ConflictUnhandled")
        #expect(error["data"]?["objectId"] == "v")
        #expect(error["data"]?["_version"] == 2)
        #expect(error["data"]?["_deleted"] == false)
        #expect(error["errorInfo"] == .null)
        #expect(error["extensions"] == nil)
        #expect(error["path"] == ["deleteObjects"])
        #expect(error["locations"]?[0]?["sourceName"] == .null)
        #expect(try fixture.db.fetchOne("Objects", key: "v")?["_deleted"]?.boolValue == false)
    }

    @Test func currentVersionSucceedsAndBumpsTheVersion() async throws {
        let fixture = try await versioned()
        let updated = try await fixture.data(
            #"mutation { updateObjects(input: {objectId: "v", text: "three", _version: 2}) { _version _lastChangedAt } }"#
        )
        #expect(updated["updateObjects"]?["_version"] == 3)
        let deleted = try await fixture.data(
            #"mutation { deleteObjects(input: {objectId: "v", _version: 3}) { _version } }"#)
        #expect(deleted["deleteObjects"]?["_version"] == 4)
    }

    @Test func writesToADeletedItemConflict() async throws {
        let fixture = try await versioned()
        _ = try await fixture.data(#"mutation { deleteObjects(input: {objectId: "v"}) { _version } }"#)
        let response = await fixture.run(
            #"mutation { updateObjects(input: {objectId: "v", text: "zombie"}) { text } }"#)
        #expect(response["errors"]?[0]?["extensions"]?["errorType"] == "ConflictUnhandled")
        #expect(response["errors"]?[0]?["extensions"]?["data"]?["_deleted"] == true)
    }

    @Test func concurrentWritersWithTheSameVersionLetExactlyOneWin() async throws {
        let fixture = try await versioned()
        let results = await withTaskGroup(of: GQLValue.self) { group in
            for i in 0..<8 {
                group.addTask {
                    await fixture.run(
                        "mutation { updateObjects(input: {objectId: \"v\", text: \"w\(i)\", _version: 2}) { _version } }"
                    )
                }
            }
            var all: [GQLValue] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.filter { $0["errors"] == nil }.count == 1)
        #expect(results.filter { $0["errors"]?[0]?["extensions"]?["errorType"] == "ConflictUnhandled" }.count == 7)
        #expect(try fixture.db.fetchOne("Objects", key: "v")?["_version"] == 3)
    }
}

import GQLCore
import Testing

/// GQLCore's `offload`: the work's value or error comes back, and a cancelled caller still gets the work's true
/// outcome (the work runs to its end; cancellation does not cut it short).
struct OffloadTests {
    struct Refused: Error {}

    @Test func returnsTheWorksValue() async throws {
        #expect(try await offload { 6 * 7 } == 42)
    }

    @Test func rethrowsTheWorksError() async {
        await #expect(throws: Refused.self) { try await offload { throw Refused() } }
    }

    @Test func aCancelledCallerStillGetsTheOutcomeOfWorkThatRan() async throws {
        let ran = GQLLocked(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await offload {
                ran.withLock { $0 = true }
                return "written"
            }
        }
        #expect(try await task.value == "written")
        #expect(ran.withLock { $0 })
    }
}

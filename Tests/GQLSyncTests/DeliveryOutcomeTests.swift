import GQLCore
import GQLNet
import Testing

@testable import GQLSync

/// How answers and errors are classified: delivered, conflict, permanent or transient.
@Suite struct DeliveryOutcomeTests {
    @Test func anAnswerWithoutErrorsIsDelivered() {
        let result = GQLResult(data: ["createNote": ["id": "1"]])
        #expect(DeliveryOutcome.classify(result) == .delivered(result))
    }

    @Test func errorsWithoutDataArePermanent() {
        let error = GQLResult.Error(message: "Variable \"$input\" got invalid value")
        let outcome = DeliveryOutcome.classify(GQLResult(data: nil, errors: [error]))
        #expect(outcome == .permanent(.init(message: error.message, errors: [error])))
        // A null mutation field is no data either.
        let nulled = DeliveryOutcome.classify(GQLResult(data: ["createNote": nil], errors: [error]))
        #expect(nulled == .permanent(.init(message: error.message, errors: [error])))
    }

    /// A 3xx without a Location is a portal or proxy in the way, not the server's word on the item: it waits,
    /// offline, as behind a redirect with one (`.redirect`).
    @Test func aRedirectWithoutALocationKeepsTheItemQueuedOffline() {
        for status in [300, 302, 307, 399] {
            let error = GQLError(.http, "HTTP \(status) from the server", httpStatus: status)
            guard case .transient(let transient) = DeliveryOutcome.classify(error) else {
                Issue.record("HTTP \(status) was not transient")
                continue
            }
            #expect(transient.unreachable, "HTTP \(status)")
        }
    }

    @Test func partialDataIsDelivered() {
        let result = GQLResult(data: ["createNote": ["id": "1"]], errors: [.init(message: "field body failed")])
        #expect(DeliveryOutcome.classify(result) == .delivered(result))
    }

    @Test func conflictUnhandledCarriesTheServerItem() {
        let error = GQLResult.Error(
            message: "Conflict resolver rejects mutation.", path: [.key("updateNote")],
            extensions: ["errorType": "ConflictUnhandled", "data": ["id": "1", "_version": 4]])
        let outcome = DeliveryOutcome.classify(GQLResult(data: ["updateNote": nil], errors: [error]))
        #expect(
            outcome == .conflict(server: ["id": "1", "_version": 4], .init(message: error.message, errors: [error])))
    }

    /// AWS AppSync puts `errorType` and the server's item beside `message`, not in `extensions`.
    @Test func conflictInAppSyncsOwnShapeIsAConflict() throws {
        let answer = try GQLValue(
            json: """
                {"data": {"updateNote": null}, "errors": [{"path": ["updateNote"], "data": {"id": "1", "_version": 4},
                 "errorType": "ConflictUnhandled", "errorInfo": null, "locations": [{"line": 1, "column": 40}],
                 "message": "Conflict resolver rejects mutation."}]}
                """)
        let result = try GQLResult(response: answer)
        guard case .conflict(let server, _) = DeliveryOutcome.classify(result) else {
            Issue.record("not a conflict: \(DeliveryOutcome.classify(result))")
            return
        }
        #expect(server == ["id": "1", "_version": 4])
        // An error in the standard shape keeps its own extensions.
        let standard = try GQLResult(
            response: GQLValue(
                json: #"{"errors": [{"message": "m", "errorType": "X", "extensions": {"errorType": "Y"}}]}"#))
        #expect(standard.errors.first?.extensions?["errorType"] == "Y")
    }

    @Test(arguments: [500, 502, 503, 408, 429])
    func retryableStatusesAreTransient(status: Int) {
        let outcome = DeliveryOutcome.classify(GQLError(.http, "HTTP \(status)", httpStatus: status))
        guard case .transient(let transient) = outcome else {
            Issue.record("HTTP \(status) gave \(outcome)")
            return
        }
        #expect(!transient.unreachable)
    }

    @Test(arguments: [400, 401, 403, 404, 413])
    func otherClientErrorsArePermanent(status: Int) {
        let outcome = DeliveryOutcome.classify(GQLError(.http, "HTTP \(status)", httpStatus: status))
        #expect(outcome == .permanent(.init(message: "HTTP \(status)", httpStatus: status)))
    }

    /// 409 to a request sent with an idempotency key: the server still runs an earlier request with that key.
    @Test func conflictWithAKeyIsTransient() {
        let error = GQLError(.http, "HTTP 409", httpStatus: 409)
        guard case .transient(let transient) = DeliveryOutcome.classify(error, keyed: true) else {
            Issue.record("409 with a key is not retried")
            return
        }
        #expect(!transient.unreachable)
        #expect(DeliveryOutcome.classify(error) == .permanent(.init(message: "HTTP 409", httpStatus: 409)))
    }

    @Test func retryAfterRidesWithTheStatus() {
        let outcome = DeliveryOutcome.classify(GQLError(.http, "slow down", httpStatus: 429), retryAfter: .seconds(3))
        guard case .transient(let transient) = outcome else {
            Issue.record("got \(outcome)")
            return
        }
        #expect(transient.retryAfter == .seconds(3))
    }

    @Test(arguments: [GQLError.Code.connection, .timeout, .io])
    func noConnectionMeansOffline(code: GQLError.Code) {
        guard case .transient(let transient) = DeliveryOutcome.classify(GQLError(code, "down")) else {
            Issue.record("\(code) is not transient")
            return
        }
        #expect(transient.unreachable)
    }

    @Test func requestsTheServerCanNeverAcceptArePermanent() {
        for code in [GQLError.Code.invalidArgument, .responseTooLarge, .invalidValue] {
            guard case .permanent = DeliveryOutcome.classify(GQLError(code, "no")) else {
                Issue.record("\(code) is not permanent")
                continue
            }
        }
    }

    @Test func mutationFieldsNameTheirTables() {
        #expect(ConflictHandler.table(forMutationField: "updateNote") == "Note")
        #expect(ConflictHandler.table(forMutationField: "createUserProfile") == "UserProfile")
        #expect(ConflictHandler.table(forMutationField: "update") == nil)
        #expect(ConflictHandler.table(forMutationField: "likePost") == nil)
    }
}

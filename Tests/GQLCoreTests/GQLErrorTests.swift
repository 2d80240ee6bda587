import GQLCore
import Testing

@Suite struct GQLErrorTests {
    private struct OtherError: Error {}

    @Test func initialiserKeepsEveryField() {
        let error = GQLError(
            .sqlite, "no such table: Nope", sql: "DELETE FROM Nope", table: "Nope", column: "id", operation: "delete",
            httpStatus: 500, sqliteCode: 1)
        #expect(error.code == .sqlite)
        #expect(error.message == "no such table: Nope")
        #expect(error.sql == "DELETE FROM Nope")
        #expect(error.table == "Nope")
        #expect(error.column == "id")
        #expect(error.operation == "delete")
        #expect(error.httpStatus == 500)
        #expect(error.sqliteCode == 1)
    }

    @Test func contextDefaultsToNil() {
        let error = GQLError(.io, "cannot create directory")
        #expect(error.sql == nil)
        #expect(error.table == nil)
        #expect(error.column == nil)
        #expect(error.operation == nil)
        #expect(error.httpStatus == nil)
        #expect(error.sqliteCode == nil)
    }

    @Test func descriptionWithoutContext() {
        let error = GQLError(.invalidJSON, "unexpected end of input at line 1, column 1")
        #expect(error.description == "GQLError.invalidJSON: unexpected end of input at line 1, column 1")
        #expect("\(error)" == error.description)
    }

    @Test func descriptionListsEveryContextField() {
        let error = GQLError(
            .sqlite, "constraint failed", sql: "INSERT INTO User VALUES (?)", table: "User", column: "userId",
            operation: "insert", httpStatus: 409, sqliteCode: 1555)
        #expect(
            error.description
                == "GQLError.sqlite: constraint failed [operation: insert] [table: User] [column: userId] [HTTP 409]"
                + " [SQLite code 1555] [SQL: INSERT INTO User VALUES (?)]")
    }

    @Test func descriptionWithSomeContext() {
        let error = GQLError(.unknownTable, "no table named Nope", table: "Nope")
        #expect(error.description == "GQLError.unknownTable: no table named Nope [table: Nope]")
    }

    @Test(arguments: [
        (GQLError.Code.invalidJSON, "invalidJSON"), (.invalidValue, "invalidValue"),
        (.invalidArgument, "invalidArgument"), (.encoding, "encoding"), (.decoding, "decoding"), (.sqlite, "sqlite"),
        (.unknownTable, "unknownTable"), (.invalidCondition, "invalidCondition"),
        (.missingPrimaryKey, "missingPrimaryKey"), (.downgradeAttempt, "downgradeAttempt"),
        (.migrationFailed, "migrationFailed"), (.nestedWrite, "nestedWrite"), (.closed, "closed"), (.io, "io"),
    ])
    func codeDescriptionIsItsName(code: GQLError.Code, name: String) {
        #expect(code.description == name)
        #expect(GQLError(code, "m").description == "GQLError.\(name): m")
    }

    @Test func codesAreDistinct() {
        let codes: [GQLError.Code] = [
            .invalidJSON, .invalidValue, .invalidArgument, .encoding, .decoding, .sqlite, .unknownTable,
            .invalidCondition, .missingPrimaryKey, .downgradeAttempt, .migrationFailed, .nestedWrite, .closed, .io,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(GQLError.Code.sqlite == .sqlite)
        #expect(GQLError.Code.sqlite != .io)
    }

    @Test func errorsAreHashableByAllFields() {
        let a = GQLError(.sqlite, "m", sql: "S")
        #expect(a == GQLError(.sqlite, "m", sql: "S"))
        #expect(a != GQLError(.sqlite, "m", sql: "T"))
        #expect(a != GQLError(.io, "m", sql: "S"))
        #expect(a != GQLError(.sqlite, "n", sql: "S"))
        #expect(Set([a, GQLError(.sqlite, "m", sql: "S"), GQLError(.io, "m")]).count == 2)
    }

    @Test func fieldsAreMutable() {
        var error = GQLError(.sqlite, "m")
        error.table = "User"
        error.httpStatus = 503
        error.code = .closed
        #expect(error.description == "GQLError.closed: m [table: User] [HTTP 503]")
    }

    // MARK: - Matching

    @Test func codeMatchesAThrownGQLError() {
        let error: any Error = GQLError(.unknownTable, "no table")
        #expect(GQLError.Code.unknownTable ~= error)
        #expect(!(GQLError.Code.sqlite ~= error))
        #expect(!(GQLError.Code.unknownTable ~= OtherError()))
    }

    @Test func catchClauseMatchesByCode() {
        func fail(_ code: GQLError.Code) throws { throw GQLError(code, "boom", table: "User") }
        var matched = ""
        do {
            try fail(.unknownTable)
        } catch GQLError.Code.sqlite {
            matched = "sqlite"
        } catch GQLError.Code.unknownTable {
            matched = "unknownTable"
        } catch {
            matched = "other"
        }
        #expect(matched == "unknownTable")
    }

    @Test func catchClauseFallsThroughForOtherCodesAndErrors() {
        func run(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "none"
            } catch GQLError.Code.invalidJSON {
                return "json"
            } catch let error as GQLError where error.code == .decoding {
                return "decoding: \(error.message)"
            } catch {
                return "other"
            }
        }
        #expect(run { throw GQLError(.invalidJSON, "x") } == "json")
        #expect(run { throw GQLError(.decoding, "bad row") } == "decoding: bad row")
        #expect(run { throw GQLError(.io, "x") } == "other")
        #expect(run { throw OtherError() } == "other")
        #expect(run {} == "none")
    }

    @Test func libraryErrorsMatchInACatch() {
        var caught: GQLError.Code?
        do {
            _ = try GQLValue(json: "{")
        } catch GQLError.Code.invalidJSON {
            caught = .invalidJSON
        } catch {
            caught = nil
        }
        #expect(caught == .invalidJSON)
    }

    @Test func usableAsAnyErrorAcrossTasks() async {
        let result = await Task.detached { () -> Result<Int, GQLError> in .failure(GQLError(.closed, "closed")) }.value
        #expect(throws: GQLError(.closed, "closed")) { try result.get() }
    }
}

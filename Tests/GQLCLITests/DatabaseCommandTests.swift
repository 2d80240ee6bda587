import Foundation
import GQLStore
import Testing

/// `gql-cli db tables|schema|query|exec|count` on a database written with GQLStore.
@Suite(.timeLimit(.minutes(2)))
struct DatabaseCommandTests {
    @Test func tablesListsNamesAsTextAndJSON() async throws {
        let sample = try SampleDatabase()
        #expect(try await CLIProcess.succeed(["db", "tables", sample.path]) == "Note\nPerson\n")
        #expect(try await CLIProcess.succeed(["db", "tables", sample.path, "--json"]) == "[\"Note\",\"Person\"]\n")
    }

    @Test func schemaPrintsEveryCreateStatement() async throws {
        let sample = try SampleDatabase()
        let text = try await CLIProcess.succeed(["db", "schema", sample.path])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("CREATE ") && $0.hasSuffix(";") })
        #expect(lines.contains { $0.hasPrefix("CREATE TABLE \"Note\"") })
        #expect(lines.contains { $0.hasPrefix("CREATE TABLE \"Person\"") && $0.contains("\"nickname\" TEXT") })
        #expect(lines.contains("CREATE INDEX person_age ON \"Person\"(age);"))

        let json = try GQLValue(json: try await CLIProcess.succeed(["db", "schema", sample.path, "--json"]))
        let objects = try #require(json.arrayValue)
        #expect(objects.compactMap { $0["name"]?.stringValue } == ["Note", "Person", "person_age"])
        #expect(objects.last?["type"] == "index")
        #expect(objects.last?["table"] == "Person")
    }

    @Test func schemaOfOneTableShowsColumns() async throws {
        let sample = try SampleDatabase()
        let text = try await CLIProcess.succeed(["db", "schema", sample.path, "Person"])
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("CREATE TABLE \"Person\""))
        #expect(lines[1] == "CREATE INDEX person_age ON \"Person\"(age);")
        #expect(lines[2] == "")
        let header = try #require(lines.firstIndex { $0.hasPrefix("column") })
        #expect(
            lines[header].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                == "column type nullable primary key default")
        func fields(_ column: String) -> [String] {
            let line = lines.first { $0.hasPrefix(column + " ") } ?? ""
            return line.split(separator: " ").map(String.init)
        }
        #expect(fields("id") == ["id", "INTEGER", "no", "yes", "0"])
        #expect(fields("name") == ["name", "TEXT", "no", "''"])
        #expect(fields("nickname") == ["nickname", "TEXT", "yes"])
        #expect(fields("score") == ["score", "REAL", "no", "0.0"] || fields("score") == ["score", "REAL", "no", "0"])

        let json = try GQLValue(json: try await CLIProcess.succeed(["db", "schema", sample.path, "Person", "--json"]))
        #expect(json["name"] == "Person")
        #expect(json["type"] == "table")
        #expect(json["sql"]?.stringValue?.hasPrefix("CREATE TABLE \"Person\"") == true)
        let columns = try #require(json["columns"]?.arrayValue)
        #expect(columns.compactMap { $0["name"]?.stringValue } == ["id", "name", "age", "nickname", "score"])
        #expect(columns[0]["primaryKey"] == true)
        #expect(columns[0]["nullable"] == false)
        #expect(columns[1]["primaryKey"] == false)
        #expect(columns[3]["nullable"] == true)
        #expect(columns[3]["type"] == "TEXT")
        #expect(json["indexes"]?[0]?["name"] == "person_age")
    }

    @Test func queryPrintsAnAlignedTableInSelectOrder() async throws {
        let sample = try SampleDatabase()
        let text = try await CLIProcess.succeed([
            "db", "query", sample.path, "SELECT name, age, nickname FROM Person ORDER BY id",
        ])
        #expect(
            text == """
                name  age  nickname
                ----  ---  --------
                Ada    36  NULL
                Bob    25  bobby
                Cy     41  NULL
                (3 rows)

                """)
        // The SELECT's order, not the alphabet's, also with arguments bound.
        let bound = try await CLIProcess.succeed([
            "db", "query", sample.path, "SELECT score, name FROM Person WHERE id = ?", "--arg", "2",
        ])
        #expect(bound == "score  name\n-----  ----\n 7.25  Bob\n(1 row)\n")
        let empty = try await CLIProcess.succeed(["db", "query", sample.path, "SELECT name, age FROM Person WHERE 0"])
        #expect(empty == "name  age\n----  ---\n(0 rows)\n")
    }

    @Test func queryPrintsJSONRows() async throws {
        let sample = try SampleDatabase()
        let json = try await CLIProcess.succeed([
            "db", "query", sample.path, "SELECT id, name, nickname, score FROM Person ORDER BY id", "--json",
        ])
        #expect(
            json == """
                [{"id":1,"name":"Ada","nickname":null,"score":9.5},\
                {"id":2,"name":"Bob","nickname":"bobby","score":7.25},\
                {"id":3,"name":"Cy","nickname":null,"score":8.0}]

                """)
        #expect(
            try await CLIProcess.succeed(["db", "query", sample.path, "SELECT * FROM Note WHERE 0", "--json"]) == "[]\n"
        )
    }

    @Test func argumentsBindAsJSONWhenValidElseAsStrings() async throws {
        let sample = try SampleDatabase()
        let json = try await CLIProcess.succeed([
            "db", "query", sample.path,
            "SELECT typeof(?) AS a, typeof(?) AS b, typeof(?) AS c, typeof(?) AS d, typeof(?) AS e, ? AS f",
            "--arg", "42", "--arg", "\"42\"", "--arg", "hello world", "--arg", "null", "--arg", "-1.5", "--arg",
            "{not json",
            "--json",
        ])
        #expect(json == #"[{"a":"integer","b":"text","c":"text","d":"null","e":"real","f":"{not json"}]"# + "\n")

        let text = try await CLIProcess.succeed([
            "db", "query", sample.path, "SELECT name FROM Person WHERE age > ? AND name <> ? ORDER BY name",
            "--arg", "30", "--arg", "Cy",
        ])
        #expect(text == "name\n----\nAda\n(1 row)\n")
    }

    @Test func execChangesTheFileAndPrintsTheChanges() async throws {
        let sample = try SampleDatabase()
        let text = try await CLIProcess.succeed([
            "db", "exec", sample.path, "UPDATE Person SET age = age + 1 WHERE age > ?", "--arg", "30",
        ])
        #expect(text == "2 rows changed\n")
        let json = try await CLIProcess.succeed([
            "db", "exec", sample.path, "DELETE FROM Person WHERE name = ?", "--arg", "Bob", "--json",
        ])
        #expect(json == "{\"changes\":1}\n")

        let db = try sample.open()
        let people = try Person.fetchAll(db, order: "id")
        #expect(people.map(\.name) == ["Ada", "Cy"])
        #expect(people.map(\.age) == [37, 42])
    }

    @Test func countCountsRowsWithAnOptionalCondition() async throws {
        let sample = try SampleDatabase()
        #expect(try await CLIProcess.succeed(["db", "count", sample.path, "Person"]) == "3\n")
        #expect(
            try await CLIProcess.succeed(["db", "count", sample.path, "Person", "--where", "age > ?", "--arg", "30"])
                == "2\n")
        #expect(
            try await CLIProcess.succeed([
                "db", "count", sample.path, "Person", "--where", "nickname = ?", "--arg", "bobby", "--json",
            ]) == "{\"count\":1,\"table\":\"Person\"}\n")
    }
}

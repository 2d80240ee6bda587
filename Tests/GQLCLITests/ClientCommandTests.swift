import Foundation
import GQLStore
import GQLTestSupport
import Testing

/// `gql-cli query|mutate|subscribe` against a `gql-cli serve` child process: HTTP and WebSocket transports,
/// variables, named documents, AppSync and Hasura credentials, and the failures a script must be able to tell
/// apart (exit status and standard error).
@Suite(.timeLimit(.minutes(3)))
struct ClientCommandTests {
    static let create =
        "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text number } }"
    static let get = "query ($id: ID!) { getObjects(objectId: $id) { objectId text number } }"
    static let onCreate = "subscription { onCreateObjects { objectId text } }"

    // MARK: HTTP

    @Test func mutateAndQueryOverHTTP() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let created = try await Self.response(
            [
                "mutate", "--url", server.http, Self.create, "--variables",
                #"{"input": {"objectId": "h-1", "text": "Hello", "number": 1}}"#,
            ])
        #expect(created["data"]?["createObjects"] == ["objectId": "h-1", "text": "Hello", "number": 1])
        #expect(created["errors"] == nil)

        let fetched = try await Self.response(["query", "--url", server.http, Self.get, "--var", "id=h-1"])
        #expect(fetched["data"]?["getObjects"]?["text"] == "Hello")

        let pretty = try await CLIProcess.succeed([
            "query", "--url", server.http, Self.get, "--var", "id=h-1", "--pretty",
        ])
        #expect(pretty.split(separator: "\n").count > 3, "--pretty printed one line: \(pretty)")
        #expect(try GQLValue(json: pretty) == fetched)
    }

    @Test func queryPrintsFieldsInTheOrderTheQuerySelectedThem() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        _ = try await CLIProcess.succeed([
            "mutate", "--url", server.http, Self.create, "--variables",
            #"{"input": {"objectId": "o-1", "text": "Hi", "number": 3}}"#,
        ])
        let printed = try await CLIProcess.succeed([
            "query", "--url", server.http, #"{ getObjects(objectId: "o-1") { text number objectId } }"#,
        ])
        #expect(
            printed.trimmingCharacters(in: .whitespacesAndNewlines)
                == #"{"data":{"getObjects":{"text":"Hi","number":3,"objectId":"o-1"}}}"#)
    }

    @Test func queryPrintsStrawberrysAnswerInTheOrderTheQuerySelectedIt() async throws {
        try await PythonPeer.with("strawberry_peer.py") { peer in
            let printed = try await CLIProcess.succeed([
                "query", "--url", peer.ready, #"{ person(id: "1") { tags name id age } hello }"#,
            ])
            #expect(
                printed.trimmingCharacters(in: .whitespacesAndNewlines)
                    == #"{"data":{"person":{"tags":["math","engines"],"name":"Ada","id":"1","age":36},"hello":"Hello, world!"}}"#
            )
        }
    }

    @Test func varValuesAreJSONWhenTheyParseAndLayOverVariables() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        // number=7 is JSON (an Int); text=seven is not, so it is a string, and replaces the text of --variables.
        let created = try await Self.response(
            [
                "mutate", "--url", server.http,
                "mutation ($id: ID!, $text: String, $number: Int) { createObjects(input: {objectId: $id, text: $text, number: $number}) { objectId text number } }",
                "--variables", #"{"id": "v-1", "text": "replaced"}"#, "--var", "text=seven", "--var", "number=7",
            ])
        #expect(created["data"]?["createObjects"] == ["objectId": "v-1", "text": "seven", "number": 7])

        let nested = try await Self.response(
            ["mutate", "--url", server.http, Self.create, "--var", #"input={"objectId": "v-2", "number": 8}"#])
        #expect(nested["data"]?["createObjects"]?["number"] == 8)
    }

    @Test func graphQLErrorsArePrintedAndExitWithStatus2() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let output = try await CLIProcess.run(["query", "--url", server.http, "{ listObjects { items { nope } } }"])
        #expect(output.exited && output.status == 2, "exit \(output.status): \(output.stderr)")
        let response = try GQLValue(json: output.stdout)
        #expect(response["errors"]?[0]?["message"]?.stringValue?.contains("nope") == true)
        #expect(output.stderr.contains("1 GraphQL error"), "stderr: \(output.stderr)")
    }

    // MARK: Documents

    @Test func documentsSendsANamedOperation() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let folder = try TemporaryDirectory()
        let text = """
            mutation CreateObject($input: CreateObjectsInput!) { createObjects(input: $input) { ...Fields } }
            query GetObject($id: ID!) { getObjects(objectId: $id) { ...Fields } }
            fragment Fields on Objects { objectId text }
            """
        try Data(text.utf8).write(to: folder.url.appendingPathComponent("objects.graphql"))

        let created = try await Self.response(
            [
                "mutate", "--url", server.http, "--documents", folder.url.path, "CreateObject",
                "--var", #"input={"objectId": "d-1", "text": "from a file"}"#,
            ])
        #expect(created["data"]?["createObjects"] == ["objectId": "d-1", "text": "from a file"])
        let fetched = try await Self.response(
            ["query", "--url", server.http, "--documents", folder.url.path, "GetObject", "--var", "id=d-1"])
        #expect(fetched["data"]?["getObjects"]?["text"] == "from a file")

        let wrongKind = try await CLIProcess.fail(
            ["query", "--url", server.http, "--documents", folder.url.path, "CreateObject"], status: 64)
        #expect(wrongKind.contains("Error: --documents: CreateObject is a mutation"), "stderr: \(wrongKind)")
        let unknown = try await CLIProcess.fail(
            ["query", "--url", server.http, "--documents", folder.url.path, "Missing"], status: 64)
        #expect(unknown.contains("Error: --documents: no operation named Missing"), "stderr: \(unknown)")
        let noFolder = try await CLIProcess.fail(
            ["query", "--url", server.http, "--documents", folder.url.path + "/nope", "GetObject"], status: 64)
        #expect(noFolder.contains("Error: --documents: no folder at"), "stderr: \(noFolder)")
        let halfGiven = try await CLIProcess.fail(
            ["query", "--url", server.http, "--documents", folder.url.path], status: 64)
        #expect(halfGiven.contains("--documents DIR NAME"), "stderr: \(halfGiven)")
    }

    // MARK: WebSocket

    @Test(arguments: ["graphql-transport-ws", "graphql-ws"])
    func mutateAndQueryOverTheWebSocketOnly(_ socketProtocol: String) async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let socket = ["--ws-url", server.webSocket, "--protocol", socketProtocol]
        let created = try await Self.response(
            ["mutate"] + socket + [Self.create, "--var", #"input={"objectId": "w-1", "text": "socket"}"#])
        #expect(created["data"]?["createObjects"]?["objectId"] == "w-1")
        let fetched = try await Self.response(["query"] + socket + [Self.get, "--var", "id=w-1"])
        #expect(fetched["data"]?["getObjects"]?["text"] == "socket")
    }

    @Test func subscribePrintsCountEventsWhileMutationsHappen() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        // --url with a ws scheme is the WebSocket endpoint, as the help says.
        let subscriber = try BackgroundCLIProcess(
            ["subscribe", "--url", server.webSocket, Self.onCreate, "--count", "2"])
        let created = try await Self.mutate(until: { !subscriber.isRunning }, url: server.http, prefix: "s")
        let output = try await subscriber.wait()
        #expect(output.exited && output.status == 0, "exit \(output.status): \(output.stderr)")
        let events = try output.stdout.split(separator: "\n").map { try GQLValue(json: String($0)) }
        #expect(events.count == 2, "stdout: \(output.stdout)")
        let ids = events.compactMap { $0["data"]?["onCreateObjects"]?["objectId"]?.stringValue }
        #expect(ids.count == 2 && Set(ids).count == 2 && Set(ids).isSubset(of: created), "events: \(ids)")
    }

    @Test func subscribeStopsCleanlyOnSIGINT() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let subscriber = try BackgroundCLIProcess(["subscribe", "--url", server.http, Self.onCreate])
        _ = try await Self.mutate(until: { !subscriber.lines.isEmpty || !subscriber.isRunning }, url: server.http)
        #expect(subscriber.isRunning, "subscribe ended by itself: \(subscriber.stderr)")
        subscriber.send(SIGINT)
        let output = try await subscriber.wait()
        #expect(output.exited && output.status == 0, "exit \(output.status) after SIGINT: \(output.stderr)")
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let first = try GQLValue(json: String(try #require(output.stdout.split(separator: "\n").first)))
        #expect(first["data"]?["onCreateObjects"]?["text"] == "probe")
    }

    // MARK: Credentials

    @Test func appSyncKeyAuthorizesHTTPAndTheRealtimeSocket() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--api-key", "da2-test-key"])
        let key = ["--url", server.http, "--appsync-key", "da2-test-key"]
        let created = try await Self.response(
            ["mutate"] + key + [Self.create, "--var", #"input={"objectId": "k-1", "text": "keyed"}"#])
        #expect(created["data"]?["createObjects"]?["objectId"] == "k-1")
        let fetched = try await Self.response(["query"] + key + [Self.get, "--var", "id=k-1"])
        #expect(fetched["data"]?["getObjects"]?["text"] == "keyed")

        let subscriber = try BackgroundCLIProcess(["subscribe"] + key + [Self.onCreate, "--count", "1"])
        _ = try await Self.mutate(until: { !subscriber.isRunning }, url: server.http, prefix: "probe", extra: key)
        let output = try await subscriber.wait()
        #expect(output.exited && output.status == 0, "exit \(output.status): \(output.stderr)")
        let event = try GQLValue(json: output.stdout)
        #expect(event["data"]?["onCreateObjects"]?["text"] == "probe")
    }

    @Test func refusedCredentialsFailWithoutShowingThem() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--api-key", "da2-right-key"])
        let query = "{ listObjects { items { objectId } } }"
        let wrongKey = try await CLIProcess.fail([
            "query", "--url", server.http, "--appsync-key", "da2-wrong-key", query,
        ])
        #expect(wrongKey.contains("refused the credentials"), "stderr: \(wrongKey)")
        #expect(!wrongKey.contains("da2-wrong-key"))

        let wrongHeader = try await CLIProcess.fail(
            ["query", "--url", server.http, "--header", "x-api-key: header-secret-value", query])
        #expect(wrongHeader.contains("HTTP 401"), "stderr: \(wrongHeader)")
        #expect(!wrongHeader.contains("header-secret-value"))

        let socket = try await CLIProcess.fail(
            ["subscribe", "--url", server.http, "--appsync-key", "da2-wrong-key", Self.onCreate])
        #expect(socket.contains("refused the credentials"), "stderr: \(socket)")
        #expect(!socket.contains("da2-wrong-key"))

        let noKey = try await CLIProcess.fail(["subscribe", "--ws-url", server.webSocket, Self.onCreate])
        #expect(noKey.contains("cannot subscribe"), "stderr: \(noKey)")
    }

    @Test func hasuraSecretAuthorizes() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--admin-secret", "hasura-s3cret"])
        let fetched = try await Self.response(
            [
                "query", "--url", server.http, "--hasura-secret", "hasura-s3cret",
                "{ listObjects { items { objectId } } }",
            ])
        #expect(fetched["data"]?["listObjects"]?["items"] == [])
        let refused = try await CLIProcess.fail(
            [
                "query", "--url", server.http, "--hasura-secret", "not-the-s3cret",
                "{ listObjects { items { objectId } } }",
            ])
        #expect(refused.contains("refused the credentials") && !refused.contains("not-the-s3cret"), "\(refused)")
    }

    // MARK: Failures

    @Test func unreachableServersFailWithAClearMessage() async throws {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        // At once: with an hour's timeout, waiting for it would hit the suite's time limit.
        let http = try await CLIProcess.fail(
            ["query", "--url", "http://127.0.0.1:1/graphql", "--timeout", "3600", "{ a }"])
        #expect(
            http.contains("the query failed") && http.contains("127.0.0.1:1/graphql failed: connection refused\n"),
            "stderr: \(http)")
        let socket = try await CLIProcess.fail(["mutate", "--ws-url", "ws://127.0.0.1:1/graphql", "mutation { a }"])
        #expect(socket.contains("the mutation failed") && socket.contains("127.0.0.1:1"), "stderr: \(socket)")
        let subscribe = try await CLIProcess.fail(["subscribe", "--ws-url", "ws://127.0.0.1:1/graphql", Self.onCreate])
        #expect(subscribe.contains("cannot subscribe: cannot connect"), "stderr: \(subscribe)")
        #expect(subscribe.contains("connection refused"), "stderr: \(subscribe)")
        let both = try await CLIProcess.fail(
            ["subscribe", "--url", "ws://127.0.0.1:1/graphql", "--ws-url", "ws://127.0.0.1:1/graphql", Self.onCreate],
            status: 64)
        #expect(both.contains("--ws-url is given too"), "stderr: \(both)")
    }

    @Test func aSlowServerHitsTheTimeout() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--latency-ms", "5000"])
        let query = "{ listObjects { items { objectId } } }"
        let http = try await CLIProcess.fail(["query", "--url", server.http, "--timeout", "0.2", query])
        #expect(http.contains("--timeout"), "stderr: \(http)")
        let socket = try await CLIProcess.fail(["query", "--ws-url", server.webSocket, "--timeout", "0.2", query])
        #expect(socket.contains("--timeout"), "stderr: \(socket)")
    }

    @Test func aRefusedSubscriptionExitsWithStatus2() async throws {
        let server = try await ServeProcess.start(["--port", "0"])
        let output = try await CLIProcess.run(
            ["subscribe", "--ws-url", server.webSocket, "subscription { onNothing { objectId } }"])
        #expect(output.exited && output.status == 2, "exit \(output.status): \(output.stderr)")
        #expect(output.stderr.contains("onNothing"), "stderr: \(output.stderr)")
    }

    @Test func badOptionsNameTheOption() async throws {
        let url = ["--url", "http://127.0.0.1:1/graphql"]
        let syntax = try await CLIProcess.fail(["query"] + url + ["{ a }", "--variables", "{bad"], status: 64)
        #expect(syntax.contains("--variables is not valid JSON"), "stderr: \(syntax)")
        let array = try await CLIProcess.fail(["query"] + url + ["{ a }", "--variables", "[1]"], status: 64)
        #expect(array.contains("--variables must be a JSON object"), "stderr: \(array)")
        let pair = try await CLIProcess.fail(["query"] + url + ["{ a }", "--var", "novalue"], status: 64)
        #expect(pair.contains("--var"), "stderr: \(pair)")
        let header = try await CLIProcess.fail(["query"] + url + ["{ a }", "--header", "secret-no-colon"], status: 64)
        #expect(header.contains("--header") && !header.contains("secret-no-colon"), "stderr: \(header)")
        let noServer = try await CLIProcess.fail(["query", "{ a }"], status: 64)
        #expect(noServer.contains("--url"), "stderr: \(noServer)")
        let noOperation = try await CLIProcess.fail(["query"] + url, status: 64)
        #expect(noOperation.contains("--documents"), "stderr: \(noOperation)")
    }

    @Test func headerValuesWithControlCharactersAreRefusedWithoutShowingThem() async throws {
        let base = ["query", "--url", "http://127.0.0.1:1/graphql", "{ a }"]
        let crlf = try await CLIProcess.fail(base + ["--header", "x-api-key:da2-sec\r\nret"], status: 64)
        #expect(crlf.contains("--header #1") && !crlf.contains("da2-sec"), "stderr: \(crlf)")
        let second = try await CLIProcess.fail(
            base + ["--header", "x-one:fine", "--header", "x-api-key:da2-sec\u{200B}ret"], status: 64)
        #expect(second.contains("--header #2") && !second.contains("da2-sec"), "stderr: \(second)")
        let badName = try await CLIProcess.fail(base + ["--header", "x(api)key:da2-secret-value"], status: 64)
        #expect(badName.contains("--header #1") && !badName.contains("da2-secret-value"), "stderr: \(badName)")
        let key = try await CLIProcess.fail(base + ["--appsync-key", "da2-sec\nret"], status: 64)
        #expect(key.contains("--appsync-key") && !key.contains("da2-sec"), "stderr: \(key)")
        let secret = try await CLIProcess.fail(base + ["--hasura-secret", "hs-sec\u{7F}ret"], status: 64)
        #expect(secret.contains("--hasura-secret") && !secret.contains("hs-sec"), "stderr: \(secret)")
    }

    @Test func protocolAppSyncSendsHeadersAsRealtimeAuthorization() async throws {
        let server = try await ServeProcess.start(["--port", "0", "--api-key", "da2-header-key"])
        let credentials = ["--url", server.http, "--header", "x-api-key:da2-header-key", "--protocol", "appsync"]
        let fetched = try await Self.response(["query"] + credentials + ["{ listObjects { items { objectId } } }"])
        #expect(fetched["data"]?["listObjects"]?["items"] == [])

        let subscriber = try BackgroundCLIProcess(["subscribe"] + credentials + [Self.onCreate, "--count", "1"])
        _ = try await Self.mutate(
            until: { !subscriber.isRunning }, url: server.http, prefix: "a",
            extra: ["--url", server.http, "--appsync-key", "da2-header-key"])
        let output = try await subscriber.wait()
        #expect(output.exited && output.status == 0, "exit \(output.status): \(output.stderr)")
        #expect(try GQLValue(json: output.stdout)["data"]?["onCreateObjects"]?["text"] == "probe")
    }

    @Test func urlsMustBeHTTPOrWebSocketWithAHostAndNoUserInformation() async throws {
        let operation = ["{ a }"]
        let scheme = try await CLIProcess.fail(["query", "--url", "ftp://127.0.0.1/graphql"] + operation, status: 64)
        #expect(scheme.contains("--url"), "stderr: \(scheme)")
        let socketScheme = try await CLIProcess.fail(
            ["query", "--ws-url", "ftp://127.0.0.1/graphql"] + operation, status: 64)
        #expect(socketScheme.contains("--ws-url"), "stderr: \(socketScheme)")
        let noHost = try await CLIProcess.fail(["query", "--url", "http:///graphql"] + operation, status: 64)
        #expect(noHost.contains("--url"), "stderr: \(noHost)")
        let user = try await CLIProcess.fail(
            ["query", "--url", "http://admin:pa55-secret@127.0.0.1:1/graphql"] + operation, status: 64)
        #expect(user.contains("--url") && !user.contains("pa55-secret") && !user.contains("admin"), "\(user)")
        let socketUser = try await CLIProcess.fail(
            ["query", "--ws-url", "wss://admin:pa55-secret@127.0.0.1:1/graphql"] + operation, status: 64)
        #expect(socketUser.contains("--ws-url") && !socketUser.contains("pa55-secret"), "\(socketUser)")
    }

    @Test func inlineOperationsAreParsedAndMustMatchTheCommand() async throws {
        let url = ["--url", "http://127.0.0.1:1/graphql"]
        let syntax = try await CLIProcess.fail(["query"] + url + ["{ a"], status: 64)
        #expect(syntax.contains("syntax error at operation:1:"), "stderr: \(syntax)")
        let mutation = try await CLIProcess.fail(["query"] + url + ["mutation { a }"], status: 64)
        #expect(mutation.contains("is a mutation, not a query") && mutation.contains("gql-cli mutate"), "\(mutation)")
        let named = try await CLIProcess.fail(["mutate"] + url + ["query Get { a }"], status: 64)
        #expect(named.contains("Get is a query, not a mutation"), "stderr: \(named)")
        let subscription = try await CLIProcess.fail(["subscribe"] + url + ["# c\n{ a }"], status: 64)
        #expect(subscription.contains("is a query, not a subscription"), "stderr: \(subscription)")
    }

    @Test func varNamesAndJSONLookingValuesAreChecked() async throws {
        let base = ["query", "--url", "http://127.0.0.1:1/graphql", "{ a }"]
        let json = try await CLIProcess.fail(
            base + ["--var", "id=1", "--var", #"input={"text": secret-value"#], status: 64)
        #expect(json.contains("--var #2") && !json.contains("secret-value"), "stderr: \(json)")
        let quoted = try await CLIProcess.fail(base + ["--var", #"token="secret-value"#], status: 64)
        #expect(quoted.contains("--var #1") && !quoted.contains("secret-value"), "stderr: \(quoted)")
        let name = try await CLIProcess.fail(base + ["--var", "1st=x"], status: 64)
        #expect(name.contains("--var #1") && name.contains("GraphQL name"), "stderr: \(name)")
        let dashed = try await CLIProcess.fail(base + ["--var", "a-b=x"], status: 64)
        #expect(dashed.contains("--var #1"), "stderr: \(dashed)")
    }

    // MARK: Helpers

    /// Runs a command that must succeed and parses the response object it printed.
    static func response(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> GQLValue
    {
        let text = try await CLIProcess.succeed(arguments, sourceLocation: sourceLocation)
        return try GQLValue(json: text)
    }

    /// Creates objects `<prefix>-1`, `<prefix>-2` … (text "probe") until `done()` says the other side heard
    /// enough: a subscription only hears writes made after the server registered it, which no output announces.
    /// Returns the ids created; gives up after 300 writes.
    static func mutate(
        until done: () -> Bool, url: String, prefix: String = "p", extra: [String] = []
    ) async throws -> Set<String> {
        var created: Set<String> = []
        var credentials = extra
        if credentials.isEmpty { credentials = ["--url", url] }
        for attempt in 1...300 {
            if done() { return created }
            let id = "\(prefix)-\(attempt)"
            _ = try await CLIProcess.succeed(
                ["mutate"] + credentials + [create, "--var", #"input={"objectId": "\#(id)", "text": "probe"}"#])
            created.insert(id)
        }
        Issue.record("the subscriber heard nothing after 300 mutations")
        return created
    }
}

import Foundation
import GQLServices
import GQLTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `gql-cli auth` against the Auth0-shaped tenant of Tests/Interop/auth0_peer.py.
@Suite(.serialized) struct AuthCommandTests {
    static let secret = "cli-client-secret-5e"
    static let password = "correct horse battery"

    /// Runs `body` with the tenant and the flags that reach it (token file in a fresh directory).
    private static func withTenant(_ body: (TemporaryDirectory, [String]) async throws -> Void) async throws {
        try await PythonPeer.with(
            "auth0_peer.py", ["--domain", "tenant.test", "--client-id", "cli-app", "--client-secret", secret]
        ) { peer in
            let scratch = try TemporaryDirectory()
            try await body(
                scratch,
                [
                    "--domain", "tenant.test", "--client-id", "cli-app", "--base-url", peer.ready, "--token-file",
                    scratch.path("tokens.json"),
                ])
        }
    }

    @Test func aSessionFromSignUpToSignOut() async throws {
        try await Self.withTenant { scratch, flags in
            let tokenFile = ["--token-file", scratch.path("tokens.json")]
            let signedUp = try await CLIProcess.succeed(
                ["auth", "signup", "--email", "ann@example.com", "--password", Self.password] + flags)
            #expect(signedUp.hasPrefix("signed up and in as ann@example.com (auth0|"))
            // The tenant is remembered: the token file alone is enough from now on.
            let whoami = try await CLIProcess.succeed(["auth", "whoami"] + tokenFile)
            #expect(whoami.hasPrefix("auth0|"))
            #expect(whoami.hasSuffix(" ann@example.com\n"))
            let token = try await CLIProcess.succeed(["auth", "token"] + tokenFile)
            #expect(token.hasPrefix("at-"))
            #expect(try await CLIProcess.succeed(["auth", "token", "--header"] + tokenFile) == "Bearer " + token)
            let refreshed = try await CLIProcess.succeed(["auth", "token", "--refresh"] + tokenFile)
            #expect(refreshed.hasPrefix("at-") && refreshed != token)

            let attributes = try FileManager.default.attributesOfItem(atPath: scratch.path("tokens.json"))
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let remembered = try String(contentsOfFile: scratch.path("tokens.json.tenant"), encoding: .utf8)
            #expect(remembered.contains("tenant.test"))

            #expect(
                try await CLIProcess.succeed(["auth", "check-password", "--password", Self.password] + tokenFile)
                    == "password ok\n")
            let wrong = try await CLIProcess.fail(["auth", "check-password", "--password", "not-it-31"] + tokenFile)
            #expect(wrong.contains("wrong e-mail or password"))
            #expect(!wrong.contains("not-it-31"))

            #expect(
                try await CLIProcess.succeed(["auth", "update-password", "--password", "ignored here"] + tokenFile)
                    == "Auth0 sent the reset e-mail\n")

            #expect(try await CLIProcess.succeed(["auth", "signout"] + tokenFile) == "signed out\n")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("tokens.json")))
            #expect(try await CLIProcess.fail(["auth", "whoami"] + tokenFile).contains("nobody is signed in"))
            #expect(try await CLIProcess.fail(["auth", "token"] + tokenFile).contains("nobody is signed in"))
            #expect(try await CLIProcess.succeed(["auth", "signout"] + tokenFile) == "nobody was signed in\n")
        }
    }

    @Test func aClientSecretChangesThePasswordAndNeverReachesAFile() async throws {
        try await Self.withTenant { scratch, flags in
            _ = try await CLIProcess.succeed(
                ["auth", "signup", "--email", "bob@example.com", "--password", Self.password] + flags)
            let withSecret = flags + ["--client-secret", Self.secret]
            let weak = try await CLIProcess.fail(["auth", "update-password", "--password", "short"] + withSecret)
            #expect(weak.contains("policy"))
            #expect(
                try await CLIProcess.succeed(
                    ["auth", "update-password", "--password", "a brand new password"] + withSecret)
                    == "password changed\n")
            _ = try await CLIProcess.succeed(
                ["auth", "signin", "--email", "bob@example.com", "--password", "a brand new password"] + withSecret)
            for file in ["tokens.json", "tokens.json.tenant"] {
                #expect(!(try String(contentsOfFile: scratch.path(file), encoding: .utf8)).contains(Self.secret))
            }
        }
    }

    /// `gql-cli query --auth` against `gql-cli serve` in OpenID Connect mode, trusting the tenant's JWKS: the
    /// signed-in user's JWT access token is accepted, and one the server refuses (its exp already past while
    /// Auth0's expires_in says it is fresh) is refreshed after the 401 and the query retried.
    @Test func queriesCarryTheSignedInUsersTokenToAnOpenIDConnectServer() async throws {
        try await PythonPeer.with(
            "auth0_peer.py", ["--domain", "tenant.test", "--client-id", "cli-app", "--client-secret", Self.secret]
        ) { peer in
            let scratch = try TemporaryDirectory()
            let (jwks, _) = try await URLSession.shared.data(
                from: try #require(URL(string: peer.ready + "/.well-known/jwks.json")))
            try jwks.write(to: URL(fileURLWithPath: scratch.path("jwks.json")))
            let server = try await ServeProcess.start(
                [
                    "--port", "0", "--jwks", scratch.path("jwks.json"), "--issuer", "https://tenant.test/",
                    "--audience",
                    "https://api.test/",
                ])
            let tokenFile = scratch.path("tokens.json")
            _ = try await CLIProcess.succeed(
                [
                    "auth", "signup", "--email", "cat@example.com", "--password", Self.password, "--domain",
                    "tenant.test",
                    "--client-id", "cli-app", "--base-url", peer.ready, "--audience", "https://api.test/",
                    "--token-file",
                    tokenFile,
                ])
            let query = "{ listObjects { items { objectId } } }"
            let refused = try await CLIProcess.fail(["query", "--url", server.http, query])
            #expect(refused.contains("401"))
            let answer = try await CLIProcess.succeed([
                "query", "--url", server.http, "--auth-token-file", tokenFile, query,
            ])
            #expect(answer.contains("listObjects"))

            // The next token is already expired for the server, not for GQLAuth: a 401, one refresh, a retry.
            let stats = { () async throws -> [String: Int] in
                let (data, _) = try await URLSession.shared.data(
                    from: try #require(URL(string: peer.ready + "/test/stats")))
                return try JSONDecoder().decode([String: Int].self, from: data)
            }
            var configure = URLRequest(url: try #require(URL(string: peer.ready + "/test/config")))
            configure.httpMethod = "POST"
            configure.setValue("application/json", forHTTPHeaderField: "Content-Type")
            configure.httpBody = Data(#"{"access_exp_offset": -90000}"#.utf8)
            _ = try await URLSession.shared.data(for: configure)
            _ = try await CLIProcess.succeed(["auth", "token", "--refresh", "--token-file", tokenFile])
            configure.httpBody = Data(#"{"access_exp_offset": 0}"#.utf8)
            _ = try await URLSession.shared.data(for: configure)
            let refreshes = try await stats()["token_refresh"] ?? 0
            let retried = try await CLIProcess.succeed([
                "query", "--url", server.http, "--auth-token-file", tokenFile, query,
            ])
            #expect(retried.contains("listObjects"))
            #expect(try await stats()["token_refresh"] == refreshes + 1)
            _ = try await server.stop()
        }
    }

    /// Whether strace can trace a child here (CI installs Debian's strace; a container may forbid ptrace).
    static let canTrace: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
            let probe = try? ChildProcess("/usr/bin/strace", ["-o", "/dev/null", "-e", "trace=none", "/bin/true"])
        else { return false }
        return probe.waitBlocking() == .exited(0)
    }()

    /// `gql-cli auth token --refresh` under strace, which sends `signal` at the process's first fsync(2): the save
    /// of the refreshed tokens has written its temporary (`tokens.json.<pid>.<n>.tmp`) in full, holds it, and has
    /// not renamed it yet.
    private static func refreshInterruptedAtFsync(_ tokenFile: String, signal: String) throws -> ChildProcess {
        try ChildProcess(
            "/usr/bin/strace",
            [
                "-f", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:signal=\(signal):when=1", "--",
                try CLIProcess.executable().path, "auth", "token", "--refresh", "--token-file", tokenFile,
            ])
    }

    /// The temporaries beside `tokenFile` and their sizes.
    private static func temporaries(_ scratch: TemporaryDirectory) -> [(name: String, size: Int)] {
        fileSizes(in: scratch.url) { $0.hasPrefix("tokens.json.") && $0.hasSuffix(".tmp") }
    }

    /// Signs a new user up through `gql-cli` (a plain token file in `scratch`); the token file's path.
    private static func signUp(_ email: String, _ flags: [String], in scratch: TemporaryDirectory) async throws
        -> String
    {
        _ = try await CLIProcess.succeed(["auth", "signup", "--email", email, "--password", password] + flags)
        return scratch.path("tokens.json")
    }

    /// What an app does when it first passes a key for the plain token file: GQLAuth loads it, which seals it.
    /// The file's bytes afterwards, checked sealed.
    private static func openWithAKey(_ tokenFile: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> Data
    {
        let key = GQLAuth.FileKey.raw(Data(repeating: 0x5e, count: 32))
        let auth = GQLAuth(domain: "tenant.test", clientId: "cli-app", tokens: .file(tokenFile, key: key))
        #expect(auth.isSignedIn, sourceLocation: sourceLocation)
        try await auth.shutdown()
        let sealed = try Data(contentsOf: URL(fileURLWithPath: tokenFile))
        #expect(
            sealed.prefix(7) == Data("GQLAUTH".utf8), "the key's load sealed the file", sourceLocation: sourceLocation)
        return sealed
    }

    /// A plain save killed before its rename leaves its temporary beside the token file, the tokens in clear. The
    /// app later opens the file with a key, in a process whose pid is the one that temporary carries (pid 1 again
    /// after a container restarts): sealing the file removes the temporary.
    @Test(.enabled(if: canTrace, "needs strace (Debian's) allowed to trace a child"))
    func aSaveKilledBeforeItsRenameLeavesATemporaryThatTheFirstKeyedLoadRemoves() async throws {
        try await Self.withTenant { scratch, flags in
            let tokenFile = try await Self.signUp("dee@example.com", flags, in: scratch)
            let before = try Data(contentsOf: URL(fileURLWithPath: tokenFile))
            let killed = try Self.refreshInterruptedAtFsync(tokenFile, signal: "SIGKILL")
            let ended = await killed.wait()
            #expect(ended == .signalled(SIGKILL), "strace and gql-cli: \(ended)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: tokenFile)) == before, "the old tokens stay whole")
            let left = try #require(Self.temporaries(scratch).first, "no temporary was left")
            let plain = try String(contentsOfFile: scratch.path(left.name), encoding: .utf8)
            #expect(plain.hasPrefix(#"{"accessToken":"at-"#), "\(plain.prefix(20))")
            // As a restarted container's pid 1 finds it: the same pid as its own.
            try FileManager.default.moveItem(
                atPath: scratch.path(left.name), toPath: scratch.path("tokens.json.\(getpid()).1.tmp"))

            let sealed = try await Self.openWithAKey(tokenFile)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
                    == ["tokens.json", "tokens.json.tenant"])
            #expect(sealed.range(of: Data(#""accessToken""#.utf8)) == nil)
        }
    }

    /// A keyed save's cleaning never removes the temporary of a save still running in another process, whatever
    /// pid it carries: here `gql-cli` is stopped between writing its temporary and renaming it, while the app seals
    /// the file with a key; once continued, its save finishes.
    @Test(.enabled(if: canTrace, "needs strace (Debian's) allowed to trace a child"))
    func aKeyedLoadLeavesTheTemporaryOfASaveStillRunning() async throws {
        try await Self.withTenant { scratch, flags in
            let tokenFile = try await Self.signUp("eve@example.com", flags, in: scratch)
            let stopped = try Self.refreshInterruptedAtFsync(tokenFile, signal: "SIGSTOP")
            // A temporary with bytes: its save holds it, and cannot rename it before it is continued.
            let written = await pollUntil(timeout: .seconds(30)) { Self.temporaries(scratch).first?.size ?? 0 > 0 }
            guard written, let inFlight = Self.temporaries(scratch).first else {
                stopped.kill()
                Issue.record("gql-cli never wrote its temporary: \(String(describing: stopped.termination))")
                return
            }
            // Its name carries the saving process's pid (strace's child).
            let pid = try #require(inFlight.name.split(separator: ".").dropFirst(2).first.flatMap { pid_t($0) })
            defer {
                // Only when something above failed: strace runs as long as the stopped gql-cli does.
                if stopped.isRunning {
                    kill(pid, SIGKILL)
                    stopped.kill()
                }
            }
            _ = try await Self.openWithAKey(tokenFile)
            #expect(Self.temporaries(scratch).map(\.name) == [inFlight.name], "the running save's temporary went")

            kill(pid, SIGCONT)
            let ended = await stopped.wait()
            #expect(ended == .exited(0), "strace and gql-cli: \(ended)")
            #expect(Self.temporaries(scratch).isEmpty)
            let saved = try Data(contentsOf: URL(fileURLWithPath: tokenFile))
            #expect(saved.starts(with: Data(#"{"accessToken":"at-"#.utf8)), "the continued save wrote its tokens")
        }
    }

    @Test func aStoredTokenWithALineBreakIsNeverPrintedAsAHeader() async throws {
        // A token file written before tokens were checked (or by hand): `auth token --header` must not print a
        // CR LF that would start another header line in whatever the output is pasted into.
        let scratch = try TemporaryDirectory()
        let file = scratch.path("auth.json")
        let fields = [
            #""accessToken":"abc\r\nX-Injected: 1""#, #""expiresAt":"2099-01-01T00:00:00Z""#,
            #""idToken":"e30.e30.sig""#, #""tokenType":"Bearer""#,
        ]
        let json = "{" + fields.joined(separator: ",") + "}"
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        let message = try await CLIProcess.fail(
            ["auth", "token", "--header", "--domain", "d", "--client-id", "c", "--token-file", file])
        #expect(message.contains("control character"), "\(message)")
        #expect(!message.contains("X-Injected"), "\(message)")
    }

    @Test func missingSettingsAreUsageErrors() async throws {
        let scratch = try TemporaryDirectory()
        let noTenant = try await CLIProcess.fail(
            ["auth", "whoami", "--token-file", scratch.path("none.json")], status: 64)
        #expect(noTenant.contains("GQL_AUTH_DOMAIN"))
        let noPassword = try await CLIProcess.fail(
            [
                "auth", "signin", "--email", "a@example.com", "--domain", "d", "--client-id", "c", "--token-file",
                scratch.path("none.json"),
            ], status: 64)
        #expect(noPassword.contains("GQL_AUTH_PASSWORD"))
    }
}

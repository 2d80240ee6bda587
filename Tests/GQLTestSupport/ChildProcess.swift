import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process for tests, started with `posix_spawn` and reaped by a thread of its own.
///
/// The tests run many children at once (CLIs, Python peers, crash loops). Foundation's `Process` crashed there
/// (SIGSEGV inside `Process.run`), its pipes leaked into other children (a reader then never saw the end of its
/// output), and a child inherited the blocked-signal mask of whichever thread started it. This type avoids all
/// three: every descriptor the tests open for a child is close-on-exec and the child closes everything else past
/// standard error, the child starts with no blocked signals and default dispositions, and nothing in it is shared
/// between children except the process table.
///
/// ```swift
/// let child = try ChildProcess(cli, ["db", "tables", path], stdout: .pipe)
/// for await line in child.lines() { … }
/// let end = await child.wait()     // .exited(0), .signalled(SIGKILL)
/// ```
public final class ChildProcess: @unchecked Sendable {
    // Safety: `state` is guarded by `condition`; everything else is a constant.

    /// Where a child's standard input comes from.
    public enum Input: Sendable {
        case null
        /// A pipe the test writes through ``writeToStandardInput(_:)`` and ends with ``closeStandardInput()``.
        case pipe
        case file(String)
    }

    /// Where a child's standard output or error goes.
    public enum Output: Sendable {
        case null
        /// A pipe the test reads through ``read()`` or ``lines()`` (standard output only).
        case pipe
        /// A file, created or truncated.
        case file(String)
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let pid: pid_t
    private let stdinWriter: Int32?
    private let stdoutReader: Int32?
    private let condition = NSCondition()
    private var state = State()

    private struct State {
        var termination: Termination?
        /// Set once the child is a zombie about to be reaped: from then on its pid must not be signalled.
        var exiting = false
        var waiters: [CheckedContinuation<Termination, Never>] = []
        var stdinClosed = false
    }

    /// Starts `executable` with `arguments`, in `directory` when given, with this process's environment plus
    /// `environment`.
    ///
    /// - Throws: ``Failure`` naming the executable and the error when it could not be started.
    public init(
        _ executable: String, _ arguments: [String], directory: String? = nil,
        environment: [String: String] = [:], stdin: Input = .null, stdout: Output = .null,
        stderr: Output = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var parentEnds: [Int32] = []  // closed here once the child has its copies
        var stdinWriter: Int32?
        var stdoutReader: Int32?
        do {
            switch stdin {
            case .null: try Self.open(&actions, "/dev/null", O_RDONLY, into: 0)
            case .file(let path): try Self.open(&actions, path, O_RDONLY, into: 0)
            case .pipe:
                let (read, write) = try Self.pipe()
                stdinWriter = write
                parentEnds.append(read)
                posix_spawn_file_actions_adddup2(&actions, read, 0)
            }
            for (output, target) in [(stdout, Int32(1)), (stderr, Int32(2))] {
                switch output {
                case .null: try Self.open(&actions, "/dev/null", O_WRONLY, into: target)
                case .file(let path): try Self.open(&actions, path, O_WRONLY | O_CREAT | O_TRUNC, into: target)
                case .pipe:
                    guard target == 1 else { throw Failure(description: "standard error cannot be a pipe") }
                    let (read, write) = try Self.pipe()
                    stdoutReader = read
                    parentEnds.append(write)
                    posix_spawn_file_actions_adddup2(&actions, write, 1)
                }
            }
            Self.closeFrom(&actions, 3)
            if let directory { try Self.changeDirectory(&actions, directory) }

            var noSignals = sigset_t()
            sigemptyset(&noSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            var environmentLines = ProcessInfo.processInfo.environment
            environmentLines.merge(environment) { _, new in new }
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environmentLines.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                for pointer in argv { free(pointer) }
                for pointer in envp { free(pointer) }
            }
            var pid: pid_t = 0
            let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            guard status == 0 else {
                throw Failure(description: "cannot start \(executable): \(String(cString: strerror(status)))")
            }
            self.pid = pid
        } catch {
            for fd in parentEnds + [stdinWriter, stdoutReader].compactMap({ $0 }) { close(fd) }
            throw error
        }
        for fd in parentEnds { close(fd) }
        self.stdinWriter = stdinWriter
        self.stdoutReader = stdoutReader
        let reaper = Thread { [self] in reap() }
        reaper.name = "ChildProcess \(pid)"
        reaper.start()
    }

    deinit {
        if let stdoutReader { close(stdoutReader) }
        if let stdinWriter, !state.stdinClosed { close(stdinWriter) }
    }

    // MARK: - Life

    /// Whether the child is still running.
    public var isRunning: Bool { termination == nil }

    /// How the child ended, once it did.
    public var termination: Termination? {
        condition.lock()
        defer { condition.unlock() }
        return state.termination
    }

    /// Sends `signal` to the child, unless it already ended (its pid may belong to someone else by then).
    public func kill(_ signal: Int32 = SIGKILL) {
        condition.lock()
        defer { condition.unlock() }
        if !state.exiting { _ = posixKill(pid, signal) }
    }

    /// Waits for the child to end.
    public func wait() async -> Termination {
        await withCheckedContinuation { continuation in
            condition.lock()
            if let termination = state.termination {
                condition.unlock()
                continuation.resume(returning: termination)
            } else {
                state.waiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Waits for the child to end, at most `timeout`; kills it with SIGKILL after that.
    ///
    /// - Returns: how it ended, and whether this call had to kill it.
    public func wait(timeout: Duration) async -> (Termination, timedOut: Bool) {
        let child = self
        let timer = Task {
            try await Task.sleep(for: timeout)
            child.kill(SIGKILL)
        }
        let termination = await wait()
        timer.cancel()
        let fired: Bool
        do {
            try await timer.value
            fired = true
        } catch {
            fired = false
        }
        return (termination, fired && termination == .signalled(SIGKILL))
    }

    /// Blocks the calling thread until the child ends (for synchronous tests).
    public func waitBlocking() -> Termination {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let termination = state.termination { return termination }
            condition.wait()
        }
    }

    private func reap() {
        // Wait for the exit without reaping it, so that `kill` can never hit a recycled pid: the pid stays ours
        // until `waitpid` below, and `exiting` is set before that under the lock.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        condition.lock()
        state.exiting = true
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let termination: Termination =
            (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        state.termination = termination
        let waiters = state.waiters
        state.waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiters { waiter.resume(returning: termination) }
    }

    // MARK: - Pipes

    /// Writes `bytes` to the child's standard input pipe.
    public func writeToStandardInput(_ bytes: some Collection<UInt8>) throws {
        guard let stdinWriter else { throw Failure(description: "standard input is not a pipe") }
        var remaining = Array(bytes)[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { posixWrite(stdinWriter, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "writing to the child's standard input: \(String(cString: strerror(errno)))")
            }
            remaining = remaining.dropFirst(written)
        }
    }

    /// Closes the child's standard input pipe: it reads end of file.
    public func closeStandardInput() {
        condition.lock()
        defer { condition.unlock() }
        guard let stdinWriter, !state.stdinClosed else { return }
        state.stdinClosed = true
        close(stdinWriter)
    }

    /// The next bytes on the child's standard output pipe, blocking until some arrive; `nil` at its end.
    public func read() -> [UInt8]? {
        guard let stdoutReader else { return nil }
        return Self.read(stdoutReader)
    }

    /// The lines of the child's standard output pipe, read on a thread of their own until it ends.
    public func lines() -> AsyncStream<String> {
        guard let stdoutReader else { return AsyncStream { $0.finish() } }
        return Self.lines(stdoutReader, owner: self)
    }

    /// The lines read from `fd` until its end; `owner` is kept alive while reading.
    static func lines(_ fd: Int32, owner: any AnyObject & Sendable) -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                withExtendedLifetime(owner) {
                    var pending: [UInt8] = []
                    while let chunk = read(fd) {
                        pending += chunk
                        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                            continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                            pending.removeSubrange(...newline)
                        }
                    }
                    continuation.finish()
                }
            }
            reader.start()
        }
    }

    /// One `read(2)` of up to 64 KiB, retried on EINTR; `nil` at the end or on an error.
    static func read(_ fd: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { posixRead(fd, $0.baseAddress, $0.count) }
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    // MARK: - Spawn helpers

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        // pipe2 (close-on-exec from the start) is glibc's and hidden from Swift like the two below; without it,
        // pipe + FD_CLOEXEC, and the child's closefrom covers the moment between them.
        let status: Int32
        if let symbol = glibc("pipe2") {
            status = unsafeBitCast(symbol, to: Pipe2.self)(&fds, O_CLOEXEC)
        } else {
            status = Glibc.pipe(&fds)
            if status == 0 { for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) } }
        }
        guard status == 0 else {
            throw Failure(description: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    private static func open(
        _ actions: inout posix_spawn_file_actions_t, _ path: String, _ flags: Int32, into fd: Int32
    )
        throws
    {
        let status = posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o644)
        guard status == 0 else { throw Failure(description: "cannot open \(path) for a child: \(status)") }
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module does not show; the
    /// tests' own descriptors are close-on-exec anyway, this also covers those opened by libraries.
    private static func closeFrom(_ actions: inout posix_spawn_file_actions_t, _ fd: Int32) {
        guard let symbol = glibc("posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, fd)
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), looked up the same way.
    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String) throws {
        guard let symbol = glibc("posix_spawn_file_actions_addchdir_np") else {
            throw Failure(description: "this C library cannot start a child in another directory")
        }
        let status = path.withCString { unsafeBitCast(symbol, to: AddChangeDirectory.self)(&actions, $0) }
        guard status == 0 else { throw Failure(description: "cannot start a child in \(path): \(status)") }
    }
}

/// A C library function by name (RTLD_DEFAULT), for glibc's GNU extensions that Swift's Glibc module leaves out.
private func glibc(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
}

// The C calls whose names the class's own methods shadow.
private func posixKill(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

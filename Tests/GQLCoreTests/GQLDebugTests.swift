import GQLCore
import Synchronization
import Testing

/// ``GQLDebug`` levels and the module loggers they gate. The level is process-wide, so the suite is serialized
/// and every test puts the default (`.none`) back.
@Suite(.serialized) struct GQLDebugTests {
    /// Counts how often a log message is built, which happens only when the line would be logged.
    private final class Probe: Sendable {
        private let count = Mutex(0)
        func message(_ text: String) -> String {
            count.withLock { $0 += 1 }
            return text
        }
        var built: Int { count.withLock { $0 } }
    }

    @Test func silentByDefault() {
        // Every test below restores `.none`, and no other code in this target changes the level.
        #expect(GQLDebug.currentLevel == .none)
    }

    @Test func levelsAreOrdered() {
        #expect(GQLDebug.Level.none < .error)
        #expect(GQLDebug.Level.error < .all)
        #expect(GQLDebug.Level.none < .all)
        #expect(!(GQLDebug.Level.all < .all))
        #expect(GQLDebug.Level.allCases == [.none, .error, .all])
        #expect(GQLDebug.Level.allCases.map(\.rawValue) == [0, 1, 2])
        #expect(GQLDebug.Level.allCases.sorted(by: >) == [.all, .error, .none])
    }

    @Test(arguments: GQLDebug.Level.allCases)
    func setLevelIsReadBack(level: GQLDebug.Level) {
        defer { GQLDebug.level(.none) }
        GQLDebug.level(level)
        #expect(GQLDebug.currentLevel == level)
    }

    @Test func noneLogsNothing() {
        defer { GQLDebug.level(.none) }
        GQLDebug.level(.none)
        let logger = GQLDebug.logger("GQLCoreTests")
        let probe = Probe()
        logger.error(probe.message("GQLDebugTests: error at .none"))
        logger.debug(probe.message("GQLDebugTests: debug at .none"))
        #expect(probe.built == 0)
        #expect(!logger.isVerbose)
    }

    @Test func errorLogsFailuresOnly() {
        defer { GQLDebug.level(.none) }
        GQLDebug.level(.error)
        let logger = GQLDebug.logger("GQLCoreTests")
        let probe = Probe()
        logger.debug(probe.message("GQLDebugTests: debug at .error"))
        #expect(probe.built == 0)
        logger.error(probe.message("GQLDebugTests: error at .error (expected in test output)"))
        #expect(probe.built == 1)
        #expect(!logger.isVerbose)
    }

    @Test func allLogsEverything() {
        defer { GQLDebug.level(.none) }
        GQLDebug.level(.all)
        let logger = GQLDebug.logger("GQLCoreTests")
        let probe = Probe()
        logger.error(probe.message("GQLDebugTests: error at .all (expected in test output)"))
        logger.debug(probe.message("GQLDebugTests: debug at .all (expected in test output)"))
        #expect(probe.built == 2)
        #expect(logger.isVerbose)
    }

    @Test func levelChangesReachExistingLoggers() {
        defer { GQLDebug.level(.none) }
        let logger = GQLDebug.logger("GQLCoreTests")
        let probe = Probe()
        GQLDebug.level(.all)
        #expect(logger.isVerbose)
        GQLDebug.level(.none)
        #expect(!logger.isVerbose)
        logger.error(probe.message("GQLDebugTests: after switching off"))
        #expect(probe.built == 0)
    }

    @Test func loggerLabelNamesTheModule() {
        let logger = GQLDebug.logger("GQLStore")
        #expect(logger.logger.label == "GraphQLite.GQLStore")
    }

    @Test func levelCanBeSetFromManyTasks() async {
        defer { GQLDebug.level(.none) }
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<200 {
                group.addTask { GQLDebug.level(n.isMultiple(of: 2) ? .error : .all) }
                group.addTask { _ = GQLDebug.currentLevel }
            }
        }
        #expect([.error, .all].contains(GQLDebug.currentLevel))
        GQLDebug.level(.none)
        #expect(GQLDebug.currentLevel == .none)
    }
}

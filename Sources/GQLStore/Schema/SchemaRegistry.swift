import GQLCore
import Synchronization

/// Which types a database knows, the tables found in its file, and which tables are known to exist.
final class SchemaRegistry: Sendable {
    private struct State {
        var byType: [ObjectIdentifier: TableSchema] = [:]
        var byName: [String: TableSchema] = [:]
        var installed: Set<String> = []
        var introspected: [String: TableSchema] = [:]
    }

    private let state = GQLLocked(State())

    /// The schema of a type whose table is known to exist.
    func installed(_ type: Any.Type) -> TableSchema? {
        state.withLock { state in
            guard let schema = state.byType[ObjectIdentifier(type)], state.installed.contains(schema.name) else {
                return nil
            }
            return schema
        }
    }

    /// The schema of a type seen before, whether or not its table exists now.
    func known(_ type: Any.Type) -> TableSchema? {
        state.withLock { $0.byType[ObjectIdentifier(type)] }
    }

    /// The registered type's schema for a table name.
    func registered(named name: String) -> TableSchema? {
        state.withLock { $0.byName[name] }
    }

    func isInstalled(_ name: String) -> Bool { state.withLock { $0.installed.contains(name) } }

    var registeredNames: [String] { state.withLock { $0.byName.keys.sorted() } }

    func introspected(named name: String) -> TableSchema? { state.withLock { $0.introspected[name] } }

    func rememberIntrospected(_ schema: TableSchema) { state.withLock { $0.introspected[schema.name] = schema } }

    /// Records types whose tables now exist, with the type each schema came from.
    func commit(_ schemas: [(ObjectIdentifier?, TableSchema)]) {
        guard !schemas.isEmpty else { return }
        state.withLock { state in
            for (type, schema) in schemas {
                if let type { state.byType[type] = schema }
                if type != nil || state.byName[schema.name] != nil { state.byName[schema.name] = schema }
                state.installed.insert(schema.name)
                state.introspected[schema.name] = nil
            }
        }
    }

    /// Notes that a table was dropped.
    func dropped(_ name: String) {
        state.withLock {
            $0.installed.remove(name)
            $0.introspected[name] = nil
        }
    }

    /// Forgets which tables exist (raw SQL may have changed them); types stay registered.
    func forgetInstalled() {
        state.withLock {
            $0.installed.removeAll()
            $0.introspected.removeAll()
        }
    }
}

import ArgumentParser
import GQLCache
import GQLCore

/// `--cache FILE`, `--policy` and `--verbose` of `gql-cli query` and `gql-cli subscribe`: answers go through a
/// GQLCache in a SQLite file.
struct CacheOptions: ParsableArguments {
    /// `--policy` values, in the CLI's spelling.
    enum Policy: String, ExpressibleByArgument, CaseIterable {
        case cacheFirst = "cache-first"
        case networkFirst = "network-first"
        case cacheOnly = "cache-only"
        case networkOnly = "network-only"
        case cacheAndNetwork = "cache-and-network"

        var policy: GQLCache.Policy {
            switch self {
            case .cacheFirst: .cacheFirst
            case .networkFirst: .networkFirst
            case .cacheOnly: .cacheOnly
            case .networkOnly: .networkOnly
            case .cacheAndNetwork: .cacheAndNetwork
            }
        }
    }

    @Option(
        name: .customLong("cache"),
        help: ArgumentHelp(
            "Answer through a GQLCache kept in this SQLite file (created when missing).", valueName: "file"))
    var file: String?

    @Option(
        help: ArgumentHelp(
            "Where the answer comes from, with --cache: cache-first (the default), network-first, cache-only, "
                + "network-only, cache-and-network (the cached answer, then the network's).",
            valueName: "policy"))
    var policy: Policy?

    @Flag(
        name: [.customShort("v"), .long],
        help: "With --cache: add \"source\" (\"cache\" or \"network\") and \"stale\" to each printed response.")
    var verbose = false

    func validate() throws {
        guard file == nil else { return }
        if policy != nil { throw ValidationError("--policy needs --cache FILE") }
        if verbose { throw ValidationError("--verbose needs --cache FILE") }
    }

    /// The cache of `--cache`, or `nil` without it.
    func open() throws -> GQLCache? {
        try file.map { try GQLCache(path: $0) }
    }

    /// The response object of `result`, with its source when `--verbose` asks for it.
    func response(_ result: GQLCache.Result) -> GQLValue {
        guard verbose, case .object(var members) = result.result.jsonValue else { return result.result.jsonValue }
        members["source"] = .string(result.source.rawValue)
        if result.isStale { members["stale"] = true }
        return .object(members)
    }
}

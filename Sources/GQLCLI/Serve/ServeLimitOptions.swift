import ArgumentParser
import GQLDevServer

/// `gql-cli serve`'s limits on what one request may ask (GQLDevServer.Limits); the defaults are the library's.
struct ServeLimitOptions: ParsableArguments {
    private static let defaults = GQLDevServer.Limits()

    @Option(help: ArgumentHelp("Most tokens in a document.", valueName: "n"))
    var maxTokens = defaults.maxTokens

    @Option(help: ArgumentHelp("Deepest nesting of selection sets, fragments included.", valueName: "n"))
    var maxDepth = defaults.maxDepth

    @Option(help: ArgumentHelp("Deepest nesting of list and object values and variables.", valueName: "n"))
    var maxValueDepth = defaults.maxValueDepth

    @Option(help: ArgumentHelp("Most field selections in an operation, fragments expanded.", valueName: "n"))
    var maxSelections = defaults.maxSelections

    @Option(help: ArgumentHelp("Most aliases in an operation, fragments expanded.", valueName: "n"))
    var maxAliases = defaults.maxAliases

    @Option(help: ArgumentHelp("Highest estimated cost of a request (fields × list page sizes).", valueName: "n"))
    var maxCost = defaults.maxCost

    @Option(help: ArgumentHelp("Most bytes of stored values one request may read.", valueName: "bytes"))
    var maxResponseBytes = defaults.maxResponseBytes

    @Option(help: ArgumentHelp("Most operations in a batched HTTP request.", valueName: "n"))
    var maxBatch = defaults.maxBatchOperations

    @Option(help: ArgumentHelp("Most operations running at once on one WebSocket.", valueName: "n"))
    var maxSubscriptionsPerSocket = defaults.maxSubscriptionsPerSocket

    @Option(help: ArgumentHelp("Most comparisons and list elements in one filter.", valueName: "n"))
    var maxFilterTerms = defaults.maxFilterTerms

    @Option(help: ArgumentHelp("Seconds a connection may take to send its request headers.", valueName: "s"))
    var headerTimeout = Double(defaults.headerTimeout.components.seconds)

    @Option(help: ArgumentHelp("Seconds an HTTP connection may stay idle between requests.", valueName: "s"))
    var idleTimeout = Double(defaults.idleTimeout.components.seconds)

    func validate() throws {
        let counts: [(String, Int)] = [
            ("--max-tokens", maxTokens), ("--max-depth", maxDepth), ("--max-value-depth", maxValueDepth),
            ("--max-selections", maxSelections), ("--max-aliases", maxAliases), ("--max-cost", maxCost),
            ("--max-response-bytes", maxResponseBytes), ("--max-batch", maxBatch),
            ("--max-subscriptions-per-socket", maxSubscriptionsPerSocket), ("--max-filter-terms", maxFilterTerms),
        ]
        for (name, value) in counts where value < 1 { throw ValidationError("\(name) must be at least 1") }
        for (name, value) in [("--max-depth", maxDepth), ("--max-value-depth", maxValueDepth)] where value > 256 {
            throw ValidationError("\(name) must be at most 256: deeper documents could exhaust the parser's stack")
        }
        for (name, value) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout)]
        where !(value > 0 && value <= 86_400) {
            throw ValidationError("\(name) must be more than 0 and at most 86400 seconds")
        }
    }

    /// The limits these options describe.
    var limits: GQLDevServer.Limits {
        var limits = GQLDevServer.Limits()
        limits.maxTokens = maxTokens
        limits.maxDepth = maxDepth
        limits.maxValueDepth = maxValueDepth
        limits.maxSelections = maxSelections
        limits.maxAliases = maxAliases
        limits.maxCost = maxCost
        limits.maxResponseBytes = maxResponseBytes
        limits.maxBatchOperations = maxBatch
        limits.maxSubscriptionsPerSocket = maxSubscriptionsPerSocket
        limits.maxFilterTerms = maxFilterTerms
        limits.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        return limits
    }
}

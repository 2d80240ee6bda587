import Foundation
import GQLCache
import GQLCore
import GQLNet
import GQLStore

/// One pull: pages through a delta query and writes each page into the store in its own transaction.
struct PullRunner: Sendable {
    let server: GQLServer
    let outbox: OutboxStore
    let store: GQLDatabase
    let rows: ServerRows
    /// The query's name: the cursor is kept under it.
    let query: String
    let text: String
    let variables: GQLValues
    /// The variables as the cursor's key (``OutboxStore/cursorVariables(_:)``): a pull with other variables (a
    /// filter) has a cursor of its own.
    let cursorVariables: String
    let pageSize: Int?
    /// The most pages the pull fetches (``GQLSync/Configuration/pullPageLimit``).
    let pageLimit: Int
    let baseInterval: Duration?
    let now: @Sendable () -> Date
    /// Hears each page once it is written (``GQLSync/Configuration/cache``).
    var cache: GQLCache? = nil

    /// Pulls every page; `forceBase` asks for everything even with a fresh cursor.
    ///
    /// A delta pull sends the stored cursor as `lastSync`; a base pull sends none. The cursor saved at the end is
    /// the `startedAt` of the first page, so a change made on the server while later pages were fetched is asked
    /// for again next time rather than missed. Each page is written with the sync origin; when the outbox
    /// shares the store's file, the last page and the new cursor commit together.
    ///
    /// `from`: the cursor to pull from instead of the stored one (a live sync reading again what its last pull
    /// read, see ``GQLSync/Live``).
    func run(
        forceBase: Bool, from earlier: OutboxStore.Cursor? = nil, progress: (@Sendable (GQLSync.PullReport) -> Void)?
    ) async throws -> GQLSync.PullReport {
        let takenAt = Int64((now().timeIntervalSince1970 * 1000).rounded())
        let cursor = try earlier ?? outbox.cursor(query, variables: cursorVariables)
        let isBase = forceBase || cursor == nil || cursor.map { expired($0, at: takenAt) } == true
        var report = GQLSync.PullReport(kind: isBase ? .base : .delta)
        let shared = store === outbox.database
        var nextToken: String?
        var startedAt: Int64?
        // The tokens asked for so far, hashed (a token may be long): a server whose pages go round in a circle
        // would otherwise be paged for ever.
        var asked: [Int: Int] = [:]
        repeat {
            try Task.checkCancellation()
            var variables = variables
            if let pageSize { variables["limit"] = .int(Int64(pageSize)) }
            if let nextToken { variables["nextToken"] = .string(nextToken) }
            if !isBase, let cursor { variables["lastSync"] = .int(cursor.startedAt) }
            let page = try PullPage(
                await server.query(text, variables.dictionary), query: query, number: report.pages + 1)
            if report.pages == 0 { startedAt = page.startedAt }
            if let next = page.nextToken {
                if next == nextToken {
                    throw GQLError(
                        .invalidResponse, "page \(report.pages + 1) of \(query) repeats the nextToken it was asked for",
                        operation: query)
                }
                if let earlier = asked.updateValue(report.pages + 2, forKey: next.hashValue) {
                    throw GQLError(
                        .invalidResponse,
                        "page \(report.pages + 1) of \(query) answers the nextToken page \(earlier) was asked with: "
                            + "the pages go round in a circle", operation: query)
                }
            }
            nextToken = page.nextToken
            let saved =
                nextToken == nil && shared ? startedAt.map { OutboxStore.Cursor(startedAt: $0, takenAt: takenAt) } : nil
            let shielded = shared ? nil : try outbox.unsentKeys(in: outbox.database)
            let (rows, outbox, query, keyed) = (rows, outbox, query, cursorVariables)
            let source = "page \(report.pages + 1) of \(query)"
            let tally = try await store.write(origin: GQLSync.origin) { tx in
                let tally = try rows.apply(
                    page.items, shielded: try shielded ?? outbox.unsentKeys(in: tx), in: tx, source: source)
                if let saved { try outbox.setCursor(query, variables: keyed, saved, in: tx) }
                return tally
            }
            try cache?.write(objects: page.items, typename: rows.table, keyField: rows.key)
            report.pages += 1
            report.written += tally.written
            report.deleted += tally.deleted
            report.kept += tally.kept
            progress?(report)
            if nextToken != nil, report.pages >= pageLimit {
                // Every page so far is written (each its own transaction); the cursor is saved only with the last.
                throw GQLError(
                    .invalidResponse,
                    "\(query) still had a nextToken after \(report.pages) pages (pullPageLimit); the pages so far "
                        + "are written, the cursor stays where it was", operation: query)
            }
        } while nextToken != nil
        if let startedAt {
            report.cursor = startedAt
            if !shared {
                let (outbox, query, keyed) = (outbox, query, cursorVariables)
                try await outbox.database.write { tx in
                    let cursor = OutboxStore.Cursor(startedAt: startedAt, takenAt: takenAt)
                    try outbox.setCursor(query, variables: keyed, cursor, in: tx)
                }
            }
        }
        return report
    }

    /// Whether `cursor` is older than the base interval at `now` (ms since 1970); a cursor dated after `now` (a
    /// clock set back, a file edited by hand) has no age to trust and counts as expired. In doubles: neither a
    /// stored date nor the interval can overflow them.
    private func expired(_ cursor: OutboxStore.Cursor, at now: Int64) -> Bool {
        guard let baseInterval else { return false }
        let limit = baseInterval.seconds * 1000
        return cursor.takenAt > now || Double(now) - Double(cursor.takenAt) > limit
    }
}

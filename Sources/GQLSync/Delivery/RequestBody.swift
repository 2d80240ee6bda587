import GQLCore

/// The JSON body of one queued item's request, `{"query":…,"variables":{"input":…}}`, made from the values' JSON
/// text as the outbox stores it instead of from the parsed values.
///
/// No `GQLValue` tree is built and written again for each request. Every item sent alone goes this way (read
/// ahead or claimed), so a request sent again after a crash has the same bytes as the first: a server that keeps
/// answers by `Idempotency-Key` compares bodies, and one that compares their bytes would refuse the same key with a
/// body written differently (the stored text keeps the call's member order, where parsed values would be written
/// sorted; the dev server compares the decoded requests).
/// Batches still go through ``GQLServer/batch(_:headers:)``.
///
/// The outbox hands out the stored text (``OutboxItem/input``) and the operation's id; the body is made here, on
/// the delivery side, which the outbox knows nothing of.
enum RequestBody {
    /// The body's start of each operation the loop sent, by the operation's id in the outbox (an id always means
    /// the same operation, so the first one made is kept).
    final class Prefixes: Sendable {
        // A pthread lock (GQLLocked), which ThreadSanitizer understands, like the engine's other locks.
        private let known = GQLLocked<[Int64: [UInt8]]>([:])

        init() {}

        /// The body of `item`, from its stored values' text.
        func body(of item: OutboxItem) -> [UInt8] {
            RequestBody.make(prefix: prefix(of: item), wrapped: item.wrap != nil, input: item.input)
        }

        private func prefix(of item: OutboxItem) -> [UInt8] {
            guard let id = item.operationID else { return RequestBody.prefix(query: item.query, wrap: item.wrap) }
            if let prefix = known.withLock({ $0[id] }) { return prefix }
            let prefix = RequestBody.prefix(query: item.query, wrap: item.wrap)
            known.withLock { $0[id] = prefix }
            return prefix
        }
    }

    /// The body's start up to the values: `{"query":"<text>","variables":{"<wrap>":` with the wrap, or
    /// `{"query":"<text>","variables":` without one. The same for every item of an operation.
    static func prefix(query: String, wrap: String?) -> [UInt8] {
        var text = #"{"query":"#
        JSONWriter.quote(query, into: &text)
        text += #","variables":"#
        if let wrap {
            text += "{"
            JSONWriter.quote(wrap, into: &text)
            text += ":"
        }
        return Array(text.utf8)
    }

    /// The body of an item whose values are the JSON object `input` (as stored), after `prefix`.
    static func make(prefix: [UInt8], wrapped: Bool, input: String) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(prefix.count + input.utf8.count + 2)
        body.append(contentsOf: prefix)
        body.append(contentsOf: input.utf8)
        body.append(UInt8(ascii: "}"))
        if wrapped { body.append(UInt8(ascii: "}")) }
        return body
    }
}

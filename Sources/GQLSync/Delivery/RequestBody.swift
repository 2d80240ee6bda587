import GQLCore

/// The JSON body of one queued item's request, `{"query":…,"variables":{"input":…}}`, made from the values' JSON
/// text as the outbox stores it instead of from the parsed values.
///
/// Sending the parsed values meant turning them back into a `GQLValue` tree and writing that as JSON again for
/// every request; SyncBench's profile of a one-per-request drain put that at about 6 µs of the delivery loop's
/// CPU per item. Every item sent alone goes this way (read ahead or claimed), so a request sent again after a
/// crash has the same bytes as the first: a server that keeps answers by `Idempotency-Key` compares bodies, and
/// one that compares their bytes would refuse the same key with a body written differently (the stored text keeps
/// the call's member order, the parsed values were written sorted; the dev server compares the decoded requests).
/// Batches still go through ``GQLServer/batch(_:headers:)``.
enum RequestBody {
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

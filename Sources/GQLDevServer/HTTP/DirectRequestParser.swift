import GQLCore

/// Reads, from a connection's raw bytes, the one shape of HTTP/1.1 request that ``DirectHTTPHandler`` answers
/// itself: `POST <path> HTTP/1.1`, plain header lines, one `Content-Length`, a body of at most a given size.
///
/// Real clients' header sets are of that shape: a Python `requests` session's (`Connection: keep-alive`,
/// `User-Agent`, `Accept`, `Accept-Encoding`) and a browser page's (`Origin`, `Referer`, `Sec-Fetch-*`,
/// `Connection: keep-alive`). `Connection` is taken only as `keep-alive` (HTTP/1.1's default, so it changes
/// nothing), and `Origin` only as one value of visible ASCII, handed back in ``Request/origin`` for the caller to
/// allow or hand over.
///
/// It decides nothing about requests outside that shape: anything it does not fully understand — another method,
/// path, version or query string, a folded or non-ASCII header line, a `Transfer-Encoding`, `Expect` or `Upgrade`
/// header, a `Connection` other than `keep-alive`, a repeated or unreadable length, a repeated content type,
/// credential, `Origin`, `Connection` or `Idempotency-Key`, a header block over ``maxHeaderBytes`` — is
/// ``Outcome/other``, and the request goes, from its first byte, to the HTTP parser of the usual path, which
/// answers or refuses it. So the two parsers never disagree about where a request ends: this one takes only
/// requests whose framing leaves no room for a second reading.
struct DirectRequestParser {
    /// The largest header block (request line included) read here.
    static let maxHeaderBytes = 8 * 1024

    /// A request read in full.
    struct Request {
        /// Bytes from the request's first byte to its body's first byte.
        var headerBytes: Int
        var bodyBytes: Int
        /// Whether the `Content-Type` is one a browser sends without a preflight (``BrowserRules/isSimple(_:)``,
        /// read from the header's bytes): the router's to refuse or allow.
        var simpleContentType: Bool
        // The values of the headers below are where they lie in the bytes, counted from the request's first byte
        // (``text(_:in:)`` reads one), not `String`s: so a request holds no reference, and the handler's copies of
        // it (the outcome, the request awaiting its body) cost no retain and release.
        var apiKey: Range<Int>?
        var adminSecret: Range<Int>?
        var authorization: Range<Int>?
        var idempotencyKey: Range<Int>?
        /// The `Origin` header's value (a browser's page), for the caller to allow or refuse.
        var origin: Range<Int>?

        var totalBytes: Int { headerBytes + bodyBytes }

        /// The text of the header value at `range` (one of the request's), in `bytes` that start at the request's
        /// first byte; `nil` without a range.
        static func text(_ range: Range<Int>?, in bytes: UnsafeRawBufferPointer) -> String? {
            guard let range else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
    }

    enum Outcome {
        /// The bytes so far fit the shape; more are needed before the header block ends.
        case incomplete
        /// A request of the shape whose header block has arrived, not yet all of its body.
        case awaitingBody(Request)
        /// A request of the shape, with all of its body.
        case request(Request)
        /// Not a request this parser takes.
        case other
    }

    /// `POST <path> HTTP/1.1\r\n`.
    private let requestLine: [UInt8]
    private let maxBodyBytes: Int

    init(path: String, maxBodyBytes: Int) {
        self.requestLine = Array("POST \(path) HTTP/1.1\r\n".utf8)
        self.maxBodyBytes = maxBodyBytes
    }

    /// Reads the request at the start of `bytes`.
    func parse(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        let lineLength = requestLine.count
        let prefix = min(bytes.count, lineLength)
        guard requestLine.withUnsafeBytes({ Self.same(bytes, $0, count: prefix) }) else { return .other }
        guard bytes.count > lineLength else { return .incomplete }

        var request = Request(headerBytes: 0, bodyBytes: -1, simpleContentType: true)
        var sawContentType = false
        var sawConnection = false
        var position = lineLength
        let limit = min(bytes.count, Self.maxHeaderBytes)
        let notYet: Outcome = bytes.count >= Self.maxHeaderBytes ? .other : .incomplete
        while true {
            // The empty line that ends the block, or a header line: its name up to the colon, then its value.
            guard position < limit else { return notYet }
            if bytes[position] == 0x0D {
                guard position + 1 < limit else { return notYet }
                guard bytes[position + 1] == 0x0A else { return .other }
                request.headerBytes = position + 2
                break
            }
            let colon: Int
            switch Self.nameEnd(bytes, from: position, limit: limit) {
            case .colon(let index): colon = index
            case .notYet: return notYet
            case .other: return .other
            }
            // The name's bytes are tokens (visible ASCII): the value's are the ones left to look at.
            let line = Self.scanLine(bytes, from: colon + 1, limit: limit)
            let end: Int
            switch line.end {
            case .at(let index): end = index
            case .notYet: return notYet
            case .malformed: return .other
            }
            guard line.plain else { return .other }
            let field = (name: Self.kind(bytes, position..<colon), value: Self.value(bytes, from: colon + 1, to: end))
            position = end + 2
            switch field.name {
            case .contentLength:
                // NIO's parser refuses a tab around the length: so must the usual path, not this one.
                guard request.bodyBytes < 0, !line.hasTab, let length = Self.length(bytes, field.value),
                    length <= maxBodyBytes
                else { return .other }
                request.bodyBytes = length
            case .contentType:
                guard !sawContentType else { return .other }
                sawContentType = true
                request.simpleContentType = BrowserRules.isSimple(UnsafeRawBufferPointer(rebasing: bytes[field.value]))
            case .apiKey:
                guard request.apiKey == nil else { return .other }
                request.apiKey = field.value
            case .adminSecret:
                guard request.adminSecret == nil else { return .other }
                request.adminSecret = field.value
            case .authorization:
                guard request.authorization == nil else { return .other }
                request.authorization = field.value
            case .idempotencyKey:
                guard request.idempotencyKey == nil else { return .other }
                request.idempotencyKey = field.value
            case .connection:
                // `keep-alive` only, once: HTTP/1.1's default. `close`, `Upgrade` or a list is the usual path's.
                guard !sawConnection, Self.equalsIgnoringCase(bytes, field.value, Self.keepAlive) else { return .other }
                sawConnection = true
            case .origin:
                // One origin of visible ASCII (`scheme://host[:port]` or `null`): nothing for the HTTP types to
                // trim or rewrite, so the caller compares the same text the router would.
                guard request.origin == nil, !field.value.isEmpty,
                    field.value.allSatisfy({ bytes[$0] > 0x20 && bytes[$0] < 0x7F })
                else { return .other }
                request.origin = field.value
            case .refused:
                return .other
            case .ignored:
                continue
            }
        }
        guard request.bodyBytes >= 0, sawContentType else { return .other }
        return bytes.count >= request.totalBytes ? .request(request) : .awaitingBody(request)
    }

    // MARK: Lines and fields

    private enum LineEnd {
        /// The index of the `\r` of the line's `\r\n`.
        case at(Int)
        /// The line has not ended within the bytes looked at.
        case notYet
        /// A bare `\n`, or a `\r` not followed by `\n`.
        case malformed
    }

    /// Where the line whose rest starts at `start` (a header line's value, after its name's colon) ends, looking no
    /// further than `limit`; whether every byte before its end is visible ASCII, a space or a tab (`plain`); and
    /// whether one is a tab.
    ///
    /// Eight bytes are looked at together, and a word holding a control byte or one outside visible ASCII goes on
    /// from the first such byte (``specialBytes(_:)`` marks it exactly): one pass over the line, a look at each of
    /// its special bytes (its end, a tab) instead of at every byte of the word that holds them.
    @inline(__always)
    private static func scanLine(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> (
        end: LineEnd, plain: Bool, hasTab: Bool
    ) {
        var plain = true
        var hasTab = false
        var index = start
        while index < limit {
            if index + 8 <= limit {
                let special = specialBytes(word(bytes, at: index))
                guard special != 0 else {
                    index += 8
                    continue
                }
                index += special.trailingZeroBitCount >> 3
            }
            switch bytes[index] {
            case 0x0D:
                guard index + 1 < limit else { return (.notYet, plain, hasTab) }
                return (bytes[index + 1] == 0x0A ? .at(index) : .malformed, plain, hasTab)
            case 0x0A:
                return (.malformed, plain, hasTab)
            case 0x09:
                hasTab = true
            case 0x20..<0x7F:
                break
            default:
                plain = false
            }
            index += 1
        }
        return (.notYet, plain, hasTab)
    }

    /// The eight bytes at `offset`, the first in the lowest bits (whatever the machine's byte order).
    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` (first byte lowest) that is below 0x20 (a control byte: CR, LF, tab …),
    /// is 0x7F, or is over it: the bytes a header line's scan must look at one by one. No such byte is missed, and
    /// the lowest bit set is exactly the first of them (a byte's borrow can only mark a byte after it), from the
    /// classic "has a byte less than n" test.
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let belowSpace = (word &- ones &* 0x20) & ~word & highBits
        let delete = word ^ (ones &* 0x7F)
        let isDelete = (delete &- ones) & ~delete & highBits
        return belowSpace | isDelete | (word & highBits)
    }

    /// The high bit of each byte of `word` that is in `low...high`, for a word of bytes below 0x80 (a plain line's):
    /// exact, since no sum carries out of its byte.
    @inline(__always)
    private static func inRange(_ word: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
        let atLeastLow = word &+ ones &* UInt64(0x80 - low)
        let aboveHigh = word &+ ones &* UInt64(0x7F - high)
        return atLeastLow & ~aboveHigh & highBits
    }

    /// The high bit of each byte of `word` (bytes below 0x80) that is a letter, a digit or `-`: the bytes of every
    /// common header name, which are all `tchar`s, so eight of them are checked at once.
    @inline(__always)
    private static func nameBytes(_ word: UInt64) -> UInt64 {
        // `| 0x20` makes a capital a small letter, and no other byte one.
        let letters = inRange(word | ones &* 0x20, 0x61, 0x7A)
        return letters | inRange(word, 0x30, 0x39) | inRange(word, 0x2D, 0x2D)
    }

    /// `word` (bytes below 0x80) with its ASCII capitals made small letters, every other byte as it is.
    @inline(__always)
    private static func lowercased(_ word: UInt64) -> UInt64 {
        word | inRange(word, 0x41, 0x5A) >> 2  // 0x80 >> 2 is the case bit
    }

    /// The headers this parser tells apart.
    enum Name {
        case contentLength, contentType, apiKey, adminSecret, authorization, idempotencyKey, connection, origin
        /// A header the usual path must see (`Transfer-Encoding`, `Expect`, `Upgrade`).
        case refused
        case ignored
    }

    private static let keepAlive: StaticString = "keep-alive"

    private enum NameEnd {
        /// The index of the colon that ends the name.
        case colon(Int)
        /// The name has not ended within the bytes looked at.
        case notYet
        /// Not a field line this parser takes: an empty name, or a byte that is not a token's before the colon (a
        /// leading space — an obsolete folded line —, a line with no colon, a control or non-ASCII byte).
        case other
    }

    /// Where the name of the header line starting at `start` ends, looking no further than `limit`.
    ///
    /// Eight bytes at a time while they are letters, digits and `-` (``nameBytes(_:)`` marks them exactly up to
    /// the first byte that is not one, whatever the bytes after it), and the word holding the colon at once when
    /// every byte before the colon is one; the rest (another token byte, a byte no name has) one by one.
    @inline(__always)
    private static func nameEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> NameEnd {
        var colon = start
        while colon + 8 <= limit {
            let chunk = word(bytes, at: colon)
            let names = nameBytes(chunk)
            if names == highBits {
                colon += 8
                continue
            }
            let colons = inRange(chunk, 0x3A, 0x3A)
            let before = (colons & (0 &- colons)) &- 1  // the bits below the first colon's (all, without a colon)
            if colons != 0, names & before == highBits & before {
                colon += colons.trailingZeroBitCount >> 3
            } else {
                colon += (~names & highBits).trailingZeroBitCount >> 3  // the first byte that is not a name byte
            }
            break
        }
        while colon < limit, bytes[colon] != UInt8(ascii: ":") {
            guard HTTPToken.contains(bytes[colon]) else { return .other }
            colon += 1
        }
        guard colon < limit else { return .notYet }
        return colon > start ? .colon(colon) : .other
    }

    /// The range of the value between `start` (after the colon) and `end` (its line's `\r`), without the spaces
    /// and tabs around it.
    @inline(__always)
    private static func value(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Range<Int> {
        var valueStart = start
        var valueEnd = end
        while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        return valueStart..<valueEnd
    }

    /// The kind of the header named by the bytes in `name`, a complete line's (so at least eight bytes, the colon
    /// and the line's end among them, follow its start): its length picks the one or two names it can be, and its
    /// first eight bytes, made lowercase, are compared with theirs at once, so a line is compared in full only
    /// with a name that starts as it does (a browser sends sixteen lines, most of them ignored).
    private static func kind(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) -> Name {
        guard name.count >= 6, name.count <= 21 else { return .ignored }
        // The bytes of a complete line up to its `\r\n` are below 0x80, as `lowercased` needs.
        let first = lowercased(word(bytes, at: name.lowerBound))
        func named(_ prefix: UInt64, _ lowercase: StaticString, _ kind: Name) -> Name? {
            first == prefix && equalsIgnoringCase(bytes, name, lowercase) ? kind : nil
        }
        let kind: Name? =
            switch name.count {
            // Six and seven bytes: the word's first six or seven are the whole name.
            case 6:
                switch first & 0xFFFF_FFFF_FFFF {
                case 0x6E69_6769_726F: .origin  // "origin"
                case 0x7463_6570_7865: .refused  // "expect"
                default: nil
                }
            case 7: first & 0xFF_FFFF_FFFF_FFFF == 0x65_6461_7267_7075 ? .refused : nil  // "upgrade"
            case 9: named(0x656B_2D69_7061_2D78, "x-api-key", .apiKey)  // "x-api-ke"
            case 10: named(0x6974_6365_6E6E_6F63, "connection", .connection)  // "connecti"
            case 12: named(0x2D74_6E65_746E_6F63, "content-type", .contentType)  // "content-"
            case 13: named(0x7A69_726F_6874_7561, "authorization", .authorization)  // "authoriz"
            case 14: named(0x2D74_6E65_746E_6F63, "content-length", .contentLength)  // "content-"
            case 15: named(0x6574_6F70_6D65_6469, "idempotency-key", .idempotencyKey)  // "idempote"
            case 17: named(0x7265_6673_6E61_7274, "transfer-encoding", .refused)  // "transfer"
            case 21: named(0x6172_7573_6168_2D78, "x-hasura-admin-secret", .adminSecret)  // "x-hasura"
            default: nil
            }
        return kind ?? .ignored
    }

    /// Whether the bytes in `range` are `lowercase` with ASCII letters in any case (every other byte exactly), for
    /// bytes of a plain line (below 0x80): eight at a time, then one by one.
    private static func equalsIgnoringCase(
        _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lowercase: StaticString
    ) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard range.count == count else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: count)
        func same(at offset: Int) -> Bool {
            lowercased(word(bytes, at: range.lowerBound + offset)) == word(expected, at: offset)
        }
        if count >= 8 {
            // Word by word, the last word overlapping the one before it.
            var offset = 0
            while offset + 8 < count {
                guard same(at: offset) else { return false }
                offset += 8
            }
            return same(at: count - 8)
        }
        var offset = 0
        while offset < count {
            let byte = bytes[range.lowerBound + offset]
            guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == expected[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// Whether the first `count` bytes of `bytes` and `other` (both at least that long) are the same.
    private static func same(_ bytes: UnsafeRawBufferPointer, _ other: UnsafeRawBufferPointer, count: Int) -> Bool {
        var offset = 0
        while offset + 8 <= count {
            guard word(bytes, at: offset) == word(other, at: offset) else { return false }
            offset += 8
        }
        while offset < count {
            guard bytes[offset] == other[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// A `Content-Length` of one to seven digits (the body limit is far below 10 MB), else `nil`.
    private static func length(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 7 else { return nil }
        var value = 0
        for index in range {
            let digit = Int(bytes[index]) - 0x30
            guard digit >= 0, digit <= 9 else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}

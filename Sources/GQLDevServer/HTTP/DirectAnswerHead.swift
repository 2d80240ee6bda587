import Foundation
import HTTPTypes
import NIOCore

/// The bytes of an answer ``DirectHTTPHandler`` writes: the status line, the head the router's answers carry (in
/// their order; with an allowed origin ``BrowserGuard``'s `Access-Control-Allow-Origin` and `Vary`), and the JSON
/// body, measured first and then copied into one buffer of exactly their size in one pass (one bounds check and
/// one exclusive access of the buffer per answer, where writing each piece with its own `ByteBuffer` call paid
/// for both per piece).
struct DirectAnswerHead {
    /// The head's `Date` and `Server` lines and the empty line that ends it (`\r\nDate: …\r\nServer:
    /// GQLDevServer\r\n\r\n`), made once a second.
    private var dateLines: (second: Int, bytes: [UInt8]) = (-1, [])

    private static let okStart: StaticString =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: "
    private static let typeAndLength: StaticString = "Content-Type: application/json; charset=utf-8\r\nContent-Length: "
    private static let allowOrigin: StaticString = "\r\nAccess-Control-Allow-Origin: "
    private static let varyOrigin: StaticString = "\r\nVary: Origin"
    private static let connectionClose: StaticString = "Connection: close\r\n\r\n"

    /// The answer with `status` and the bytes of `json` as the body; with `origin`, the CORS lines for it; with
    /// `closing`, a `Connection: close` line last.
    mutating func answer(
        _ status: HTTPResponse.Status, _ json: [UInt8], origin: String?, closing: Bool, allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        json.withUnsafeBytes { answer(status, body: $0, origin: origin, closing: closing, allocator: allocator) }
    }

    /// ``answer(_:_:origin:closing:allocator:)`` for a body made as text (a queued mutation's).
    mutating func answer(
        _ status: HTTPResponse.Status, _ json: String, origin: String?, closing: Bool, allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        var json = json
        return json.withUTF8 {
            answer(status, body: UnsafeRawBufferPointer($0), origin: origin, closing: closing, allocator: allocator)
        }
    }

    private mutating func answer(
        _ status: HTTPResponse.Status, body: UnsafeRawBufferPointer, origin: String?, closing: Bool,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        let now = time(nil)
        if now != dateLines.second {
            dateLines = (now, Array("\r\nDate: \(HTTPDate.format(now))\r\nServer: GQLDevServer\r\n\r\n".utf8))
        }
        var origin = origin
        // Any status but 200 is rare on this path (a refused document): its line is made as text.
        var statusLine = status == .ok ? "" : "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        let length = body.count
        let digits = Self.digitCount(length)
        var start = Self.okStart.utf8CodeUnitCount
        if status != .ok { start = statusLine.utf8.count + Self.typeAndLength.utf8CodeUnitCount }
        var cors = 0
        if let origin {
            cors = Self.allowOrigin.utf8CodeUnitCount + origin.utf8.count + Self.varyOrigin.utf8CodeUnitCount
        }
        let lines = dateLines.bytes
        let end = closing ? lines.count - 2 + Self.connectionClose.utf8CodeUnitCount : lines.count
        let total = start + digits + cors + end + length
        var buffer = allocator.buffer(capacity: total)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: total) { out in
            var cursor = Cursor(out: out)
            if status == .ok {
                cursor.put(Self.okStart)
            } else {
                cursor.put(&statusLine)
                cursor.put(Self.typeAndLength)
            }
            cursor.put(decimal: length, digits: digits)
            if origin != nil {
                cursor.put(Self.allowOrigin)
                origin?.withUTF8 { cursor.put(UnsafeRawBufferPointer($0)) }
                cursor.put(Self.varyOrigin)
            }
            lines.withUnsafeBytes { raw in
                if closing {
                    cursor.put(UnsafeRawBufferPointer(rebasing: raw.dropLast(2)))  // the head's end comes after
                    cursor.put(Self.connectionClose)
                } else {
                    cursor.put(raw)  // the head's end included
                }
            }
            cursor.put(body)
            return cursor.at
        }
        return buffer
    }

    /// How many decimal digits `value` (not negative) has.
    private static func digitCount(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }

    /// Copies pieces one after another into a buffer measured for all of them.
    private struct Cursor {
        let out: UnsafeMutableRawBufferPointer
        var at = 0

        mutating func put(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: out[at..<at + bytes.count]).copyMemory(from: bytes)
            at += bytes.count
        }

        mutating func put(_ text: StaticString) {
            put(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func put(_ text: inout String) {
            text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
        }

        /// `value`'s `digits` decimal digits, as `String(value)` spells it.
        mutating func put(decimal value: Int, digits: Int) {
            var rest = value
            var index = at + digits
            repeat {
                index -= 1
                out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while index > at
            at += digits
        }
    }
}

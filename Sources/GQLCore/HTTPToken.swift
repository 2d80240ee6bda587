/// RFC 9110's `tchar`: the bytes of an HTTP header name or method, for the client's header check and the dev
/// server's request reader.
package enum HTTPToken {
    package static func contains(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

import GQLCore
import Testing

@Suite("HTTPToken is RFC 9110's tchar")
struct HTTPTokenTests {
    @Test("exactly the letters, digits and !#$%&'*+-.^_`|~ of all 256 bytes")
    func everyByte() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPToken.contains(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }
}

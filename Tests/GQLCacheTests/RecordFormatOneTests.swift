import Foundation
import GQLCache
import GQLCore
import Testing

/// Record format 1's bytes, written out here by hand from the format's description (RecordCodec), so a change of
/// the format cannot pass unnoticed (review L3): fixed records encode to exactly these bytes, and these bytes decode
/// to the records, members in order. Cache files hold rows of format 1: a later format must still read them (the
/// decoding test stays as it is); a writer of a new format moves the encoding test to that format's bytes.
@Suite struct RecordFormatOneTests {
    /// Tags: null 0, false 1, true 2, int 3 (zigzag varint), double 4 (8 bytes, little-endian), string 5 and data 6
    /// (varint count, bytes), array 7 (varint count, values), object 8 (varint count, name and value per member),
    /// reference 9 (like a string).
    static func text(_ string: String) -> [UInt8] { [UInt8(string.utf8.count)] + Array(string.utf8) }

    /// A typical record: scalars of each kind, references, data, a nested object.
    static let user: GQLValues = [
        "__typename": "User", "id": "1", "name": "Zoë", "age": 42, "score": -3, "ratio": .double(0.5),
        "active": true, "banned": false, "nickname": .null, "friends": [["__ref": "User:2"], ["__ref": "User:3"]],
        "avatar": .data(Data([0x00, 0xFF])), "address": ["city": "Oslo", "zip": 150],
    ]

    static let userBytes: [UInt8] =
        [0x01, 0x0C]  // format 1, 12 fields
        + text("__typename") + [0x05] + text("User")
        + text("id") + [0x05] + text("1")
        + text("name") + [0x05, 0x04, 0x5A, 0x6F, 0xC3, 0xAB]  // "Zoë": 4 bytes of UTF-8
        + text("age") + [0x03, 0x54]  // 42 → zigzag 84
        + text("score") + [0x03, 0x05]  // -3 → zigzag 5
        + text("ratio") + [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0, 0x3F]  // 0.5
        + text("active") + [0x02]
        + text("banned") + [0x01]
        + text("nickname") + [0x00]
        + text("friends") + [0x07, 0x02, 0x09] + text("User:2") + [0x09] + text("User:3")
        + text("avatar") + [0x06, 0x02, 0x00, 0xFF]
        + text("address") + [0x08, 0x02] + text("city") + [0x05] + text("Oslo")
        + text("zip") + [0x03, 0xAC, 0x02]  // 150 → zigzag 300, two varint bytes

    /// The edges: the widest integers, varints of two bytes, a string of 128 bytes, a wrapped object leaf holding
    /// what looks like a reference, nested and empty lists and objects, negative zero, an empty name.
    static let edges: GQLValues = [
        "min": .int(.min), "max": .int(.max), "big": 64, "neg": -65,
        "long": .string(String(repeating: "a", count: 128)),
        "json": ["__value": ["z": 1, "a": ["__ref": "x"]]],
        "nested": [[], [.null, "é"]], "empty": [:], "zero": .double(-0.0), "": "",
    ]

    static let edgesBytes: [UInt8] =
        [0x01, 0x0A]  // format 1, 10 fields
        + text("min") + [0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]  // zigzag 2^64 - 1
        + text("max") + [0x03, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]  // zigzag 2^64 - 2
        + text("big") + [0x03, 0x80, 0x01]  // 64 → zigzag 128
        + text("neg") + [0x03, 0x81, 0x01]  // -65 → zigzag 129
        + text("long") + [0x05, 0x80, 0x01] + Array(repeating: 0x61, count: 128)
        + text("json") + [0x08, 0x01] + text("__value") + [0x08, 0x02] + text("z") + [0x03, 0x02]
        + text("a") + [0x09] + text("x")  // a one-member {"__ref": string} is written as a reference
        + text("nested") + [0x07, 0x02, 0x07, 0x00, 0x07, 0x02, 0x00, 0x05, 0x02, 0xC3, 0xA9]
        + text("empty") + [0x08, 0x00]
        + text("zero") + [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80]
        + [0x00, 0x05, 0x00]  // "": ""

    static let records: [(name: String, fields: GQLValues, bytes: [UInt8])] = [
        ("user", user, userBytes), ("edges", edges, edgesBytes), ("empty", [:], [0x01, 0x00]),
    ]

    @Test func recordsAreWrittenInFormatOne() throws {
        for (name, fields, bytes) in Self.records {
            #expect(try RecordCodec.encode(fields, key: "Golden:\(name)") == bytes, "\(name)")
        }
    }

    @Test func formatOneBytesReadBackAsTheRecords() throws {
        for (name, fields, bytes) in Self.records {
            let decoded = try #require(bytes.withUnsafeBytes { RecordCodec.decode($0) }, "\(name)")
            #expect(decoded == fields, "\(name)")
            #expect(decoded.keys == fields.keys, "\(name): members in the order written")
        }
        // -0.0 equals 0.0: its sign is read back too.
        let zero = Self.edgesBytes.withUnsafeBytes { RecordCodec.decode($0) }?["zero"]
        #expect(zero?.doubleValue?.sign == .minus)
    }
}

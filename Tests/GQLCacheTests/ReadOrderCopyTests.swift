import Foundation
import GQLTestSupport
import Testing

@testable import GQLCache

/// A write copies its records for the memory layer (``ReadOrderCopy``): the copies are the records to the byte,
/// in order, and a warm read returns exactly what was written.
@Suite struct ReadOrderCopyTests {
    /// Strings past the inline length, strings out of NFC (`e` + U+0301, which `String`'s `==` holds equal to
    /// U+00E9) and past the Basic Multilingual Plane, nested lists and objects, references and a wrapped value.
    static let record: GQLValues = [
        "__typename": "Note", "id": "n1", "title": .string("a title longer than fifteen bytes, caf" + "e\u{301}"),
        "short": "e\u{301}", "emoji": .string(String(repeating: "\u{1F600}", count: 9)), "count": 3,
        "ratio": 0.5, "flag": true, "none": .null, "data": .data(Data([0, 1, 2])),
        "tags": ["one tag longer than fifteen bytes", ["nested list, also long enough"]],
        "author": StoredValue.reference("User:\u{E9}t\u{E9} with a long id"),
        "json": .object(["__value": .object(["k": "a value longer than fifteen bytes"])]),
    ]

    @Test func aCopyIsTheRecordToTheByteInOrder() throws {
        let copied = ReadOrderCopy.copy([(key: RecordKey("Note:n1"), fields: Self.record)])
        #expect(copied.count == 1)
        #expect(copied[0].key == RecordKey("Note:n1"))
        let fields = try #require(copied.first?.fields)
        #expect(fields.keys == Self.record.keys)
        #expect(StoredValue.isIdentical(.object(fields), .object(Self.record)))
        // Not the same storage as the original (a copy of its own), the same bytes.
        guard case .string(let original)? = Self.record["title"], case .string(let copy)? = fields["title"] else {
            Issue.record("the title is not a string")
            return
        }
        #expect(Array(copy.utf8) == Array(original.utf8))
        #expect(ReadOrderCopy.copy("e\u{301}").utf8.elementsEqual("e\u{301}".utf8))
        #expect(ReadOrderCopy.copy("").isEmpty)
    }

    @Test func aWarmReadReturnsTheAnswerWrittenToTheByte() throws {
        let cache = try GQLCache(inMemory: true)
        let query = "query { notes { __typename id title body tags author { __typename id name } } }"
        let long = "a body of text longer than fifteen bytes, with caf" + "e\u{301} and \u{1F600}"
        let data: GQLValue = [
            "notes": .array(
                (1...20).map { index in
                    [
                        "__typename": "Note", "id": .string("n\(index)"), "title": .string("Title \(index) e\u{301}"),
                        "body": .string(long + String(index)), "tags": [.string("first tag of note \(index)"), "x"],
                        "author": [
                            "__typename": "User", "id": .string("u\(index % 3)"), "name": "A name past 15 bytes",
                        ],
                    ]
                })
        ]
        try cache.write(query, data: data)
        let read = try cache.read(query)
        #expect(try read.jsonData() == data.jsonData())
    }
}

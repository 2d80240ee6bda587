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
        let fields = ReadOrderCopy.copy(Self.record)
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

    /// A value nested deeper than the codec stores is refused with an error, as before the copy: only records the
    /// codec took are copied (a copy of a 20,000-deep value overflowed the stack: review 10, item 1). Not deeper:
    /// releasing a 60,000-deep value at the test's end overflows a test thread's stack by itself.
    @Test(arguments: [600, 20_000])
    func aValueTooDeepToStoreThrowsAndIsNotCopied(_ depth: Int) throws {
        let cache = try GQLCache(inMemory: true)
        var value: GQLValue = [:]
        for _ in 1..<depth { value = ["a": value] }
        let data: GQLValue = ["getNote": ["__typename": "Note", "id": "5", "meta": value]]
        #expect(throws: GQLError.self) { try cache.write(#"query { getNote(id: "5") { id meta } }"#, data: data) }
        #expect(try cache.recordKeys().isEmpty)
    }

    /// A value nested deeper than the codec stores, merged into a record the memory layer already holds (which is
    /// not copied), is refused too, and the record reads back as it was.
    @Test(arguments: [600, 20_000])
    func aValueTooDeepForAHeldRecordThrowsAndLeavesIt(_ depth: Int) throws {
        let cache = try GQLCache(inMemory: true)
        let query = #"query { getNote(id: "5") { id meta } }"#
        let shallow: GQLValue = ["getNote": ["__typename": "Note", "id": "5", "meta": "shallow"]]
        try cache.write(query, data: shallow)
        var value: GQLValue = [:]
        for _ in 1..<depth { value = ["a": value] }
        #expect(throws: GQLError.self) {
            try cache.write(query, data: ["getNote": ["__typename": "Note", "id": "5", "meta": value]])
        }
        #expect(try cache.read(query) == shallow)
    }

    /// A record written again unchanged is not stored again (nor copied): the memory layer keeps the first copy.
    @Test func anUnchangedRecordKeepsItsStoredCopy() throws {
        let cache = try GQLCache(inMemory: true)
        let query = "query { note { __typename id title } }"
        let data: GQLValue = ["note": ["__typename": "Note", "id": "1", "title": "a title longer than fifteen bytes"]]
        try cache.write(query, data: data)
        let first = try #require(cache.store.memory.withLock { $0.records[RecordKey("Note:1")] })
        try cache.write(query, data: data)
        let second = try #require(cache.store.memory.withLock { $0.records[RecordKey("Note:1")] })
        // The same storage (both held alive here): the second write neither stored nor copied it.
        #expect(first.withMembers { $0.baseAddress } == second.withMembers { $0.baseAddress })
        #expect(try cache.read(query) == data)
    }
}

import GQLCache
import GQLCore
import GQLTestSupport
import Testing

/// Fields whose response key repeats (merged into one plan when the read plan is built) read each field's own
/// arguments' data (review H1: a merged plan freed after one build could have its address taken by another
/// merged plan with other arguments, and the reader's storage-key cache, keyed by that address, read the other
/// field's data).
@Suite struct MergedFieldTests {
    @Test func repeatedFieldsWithArgumentsReadWhatWasWritten() throws {
        var random = SplitMix64(seed: TestSeed.make("merged fields"))
        let cache = try memoryCache()
        // Several texts, each read many times, so merged plans are built and freed again and again.
        for first in 1...4 {
            let text = """
                query { posts { id comments(first: \(first)) { id } ...Bodies likes(first: \(first + 3)) { id } \
                likes(first: \(first + 3)) { user } } }
                fragment Bodies on Post { comments(first: \(first)) { body } }
                """
            var posts: [GQLValue] = []
            for post in 0..<30 {
                let comments = (0..<Int(random.next() % UInt64(first + 1))).map { index -> GQLValue in
                    let id = "\(first)-\(post)-c\(index)"
                    return [
                        "__typename": "Comment", "id": .string(id), "body": .string("body \(random.next() % 1000)"),
                    ]
                }
                let likes = (0..<Int(random.next() % UInt64(first + 4))).map { index -> GQLValue in
                    let id = "\(first)-\(post)-l\(index)"
                    return ["__typename": "Like", "id": .string(id), "user": .string("user \(random.next() % 1000)")]
                }
                posts.append(
                    [
                        "__typename": "Post", "id": .string("\(post)"), "comments": .array(comments),
                        "likes": .array(likes),
                    ])
            }
            try cache.write(text, data: ["posts": .array(posts)])
            for _ in 0..<5 {
                let read = try cache.read(text)["posts"]?.arrayValue ?? []
                #expect(read.count == posts.count)
                for (got, wrote) in zip(read, posts) {
                    for (field, members) in [("comments", ["id", "body"]), ("likes", ["id", "user"])] {
                        let want = wrote[field]?.arrayValue?.map { item in members.map { item[$0] } }
                        let have = got[field]?.arrayValue?.map { item in members.map { item[$0] } }
                        #expect(have == want, "first \(first), post \(wrote["id"] ?? .null), \(field)")
                    }
                }
            }
        }
    }
}

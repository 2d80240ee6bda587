import BenchKit
import Foundation
import GQLCore

/// The answer every workload works on: a feed of posts, each with its author and three comments with theirs, as a
/// GraphQL server would send it (`__typename` on every object, string ids), generated from a fixed seed.
///
/// Users come from a pool of 2,000, so an author appears under several posts and comments, as in a real feed:
/// the answer holds the root, the posts, the comments and every distinct user, each one record.
struct Feed: Sendable {
    static let userPool = 2_000
    static let commentsPerPost = 3

    /// The operation the cache stores and reads; `first` is a variable so the field key carries an argument.
    static let query = """
        query Feed($first: Int!) {
          posts(first: $first) {
            __typename id title body createdAt likes
            author { __typename id name avatarUrl }
            comments { __typename id body createdAt author { __typename id name avatarUrl } }
          }
        }
        """
    /// One post by id, the query each watcher watches (distinct variables: distinct queries to the cache).
    static let postQuery = """
        query Post($id: ID!) {
          post(id: $id) { __typename id title author { __typename id name } }
        }
        """

    let posts: Int
    /// `data` of the answer.
    let data: GQLValue
    /// The whole answer as the network sends it, `{"data": …}`.
    let bytes: [UInt8]
    /// How many records the answer normalizes into (the root, posts, comments and distinct users).
    let recordCount: Int
    /// The author's user id of each post, in order (the watcher workload's expectations).
    let authors: [String]

    init(posts: Int, seed: UInt64 = 0xCA_C4E5) throws {
        var rng = SplitMix64(seed: seed)
        func pick(_ range: Int) -> Int { Int(rng.next() % UInt64(range)) }
        func words(_ count: Int) -> String {
            (0..<count).map { _ in Self.vocabulary[pick(Self.vocabulary.count)] }.joined(separator: " ")
        }
        func user(_ id: Int) -> GQLValue {
            let word = Self.vocabulary[id % Self.vocabulary.count].capitalized
            return [
                "__typename": "User", "id": .string(String(id)), "name": .string("User \(id) \(word)"),
                "avatarUrl": .string("https://cdn.example.com/avatars/\(id).png"),
            ]
        }
        func date(_ index: Int) -> GQLValue {
            .string(
                String(format: "2026-11-%02dT%02d:%02d:%02d.000Z", 1 + index % 28, index % 24, index % 60, pick(60)))
        }
        var users: Set<Int> = []
        var authors: [String] = []
        var list: [GQLValue] = []
        for index in 0..<posts {
            let author = pick(Self.userPool) + 1
            users.insert(author)
            authors.append(String(author))
            var comments: [GQLValue] = []
            for number in 0..<Self.commentsPerPost {
                let commenter = pick(Self.userPool) + 1
                users.insert(commenter)
                comments.append([
                    "__typename": "Comment", "id": .string("c\(index * Self.commentsPerPost + number + 1)"),
                    "body": .string(words(30 + pick(20))), "createdAt": date(index + number),
                    "author": user(commenter),
                ])
            }
            list.append([
                "__typename": "Post", "id": .string(String(index + 1)), "title": .string(words(6 + pick(5))),
                "body": .string(words(70 + pick(40))), "createdAt": date(index), "likes": .int(Int64(pick(500))),
                "author": user(author), "comments": .array(comments),
            ])
        }
        self.posts = posts
        data = ["posts": .array(list)]
        bytes = Array(try GQLValue.object(["data": data]).jsonData())
        recordCount = 1 + posts + posts * Self.commentsPerPost + users.count
        self.authors = authors
    }

    static let vocabulary = [
        "cache", "offline", "record", "answer", "query", "screen", "network", "server", "field", "object", "swift",
        "latency", "phone", "train", "tunnel", "battery", "update", "watch", "layer", "commit", "sqlite", "page",
        "scroll", "photo", "review", "comment", "reply", "thread", "garden", "coffee", "weekend", "river", "city",
        "music", "travel", "recipe", "morning", "evening", "story", "friend", "launch", "release", "bug", "fix",
    ]
}

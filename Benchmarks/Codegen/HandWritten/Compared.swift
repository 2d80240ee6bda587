// The 10 operations of Benchmarks/Codegen/Operations/Compared.graphql written by hand, as a careful Swift developer
// writes them without a generator: each operation's document, an Encodable Variables and a Decodable Data with only
// the fields selected, in nested structs; small shapes that recur (a login, a count, a page of nodes, page info)
// shared; the enums with their raw values; unions decoded on __typename. CodegenBench compares GQLCodegen's output
// for the same file with this one, in lines and in compile time.

struct Login: Decodable, Sendable { var login: String }
struct TotalCount: Decodable, Sendable { var totalCount: Int }
struct PageInfo: Decodable, Sendable {
    var hasNextPage: Bool
    var endCursor: String?
}
struct Nodes<Node: Decodable & Sendable>: Decodable, Sendable { var nodes: [Node?]? }

/// `__typename`, read before a union or interface member is decoded.
enum Typename: String, CodingKey {
    case __typename
    static func of(_ decoder: any Decoder) throws -> String {
        try decoder.container(keyedBy: Typename.self).decode(String.self, forKey: .__typename)
    }
}

enum IssueState: String, Codable, Sendable { case open = "OPEN", closed = "CLOSED" }
enum IssueStateReason: String, Decodable, Sendable {
    case completed = "COMPLETED", duplicate = "DUPLICATE", notPlanned = "NOT_PLANNED", reopened = "REOPENED"
}
enum PullRequestState: String, Decodable, Sendable { case open = "OPEN", closed = "CLOSED", merged = "MERGED" }
enum MergeableState: String, Decodable, Sendable {
    case conflicting = "CONFLICTING", mergeable = "MERGEABLE", unknown = "UNKNOWN"
}
enum PullRequestReviewDecision: String, Decodable, Sendable {
    case approved = "APPROVED", changesRequested = "CHANGES_REQUESTED", reviewRequired = "REVIEW_REQUIRED"
}
enum PullRequestReviewState: String, Decodable, Sendable {
    case approved = "APPROVED", changesRequested = "CHANGES_REQUESTED", commented = "COMMENTED"
    case dismissed = "DISMISSED", pending = "PENDING"
}
enum StatusState: String, Decodable, Sendable {
    case error = "ERROR", expected = "EXPECTED", failure = "FAILURE", pending = "PENDING", success = "SUCCESS"
}
enum OrganizationMemberRole: String, Decodable, Sendable { case admin = "ADMIN", member = "MEMBER" }
enum ReactionContent: String, Codable, Sendable {
    case confused = "CONFUSED", eyes = "EYES", heart = "HEART", hooray = "HOORAY", laugh = "LAUGH"
    case rocket = "ROCKET", thumbsDown = "THUMBS_DOWN", thumbsUp = "THUMBS_UP"
}

struct AddReactionInput: Encodable, Sendable {
    var subjectId: String
    var content: ReactionContent
    var clientMutationId: String? = nil
}

/// fragment ComparedRepoParts on Repository
struct RepoParts: Decodable, Sendable {
    var nameWithOwner: String
    var description: String?
    var stargazerCount: Int
    var owner: Login
    var primaryLanguage: Language?

    struct Language: Decodable, Sendable {
        var name: String
        var color: String?
    }

    static let document = """
        fragment ComparedRepoParts on Repository {
          nameWithOwner
          description
          stargazerCount
          owner { login }
          primaryLanguage { name color }
        }
        """
}

enum ComparedViewer {
    static let document = """
        query ComparedViewer {
          viewer {
            login
            name
            avatarUrl(size: 96)
            bio
            company
            location
            createdAt
            followers { totalCount }
            following { totalCount }
          }
        }
        """

    struct Data: Decodable, Sendable {
        var viewer: Viewer

        struct Viewer: Decodable, Sendable {
            var login: String
            var name: String?
            var avatarUrl: String
            var bio: String?
            var company: String?
            var location: String?
            var createdAt: String
            var followers: TotalCount
            var following: TotalCount
        }
    }
}

enum ComparedRepositoryIssues {
    static let document = """
        query ComparedRepositoryIssues($owner: String!, $name: String!, $states: [IssueState!] = [OPEN], $after: String) {
          repository(owner: $owner, name: $name) {
            issues(first: 25, after: $after, states: $states, orderBy: { field: CREATED_AT, direction: DESC }) {
              totalCount
              nodes {
                number
                title
                state
                createdAt
                author { login }
                labels(first: 10) { nodes { name color } }
                comments { totalCount }
              }
              pageInfo { hasNextPage endCursor }
            }
          }
        }
        """

    struct Variables: Encodable, Sendable {
        var owner: String
        var name: String
        var states: [IssueState]? = nil
        var after: String? = nil
    }

    struct Data: Decodable, Sendable {
        var repository: Repository?

        struct Repository: Decodable, Sendable { var issues: Issues }
        struct Issues: Decodable, Sendable {
            var totalCount: Int
            var nodes: [Issue?]?
            var pageInfo: PageInfo
        }
        struct Issue: Decodable, Sendable {
            var number: Int
            var title: String
            var state: IssueState
            var createdAt: String
            var author: Login?
            var labels: Nodes<Label>?
            var comments: TotalCount
        }
        struct Label: Decodable, Sendable {
            var name: String
            var color: String
        }
    }
}

enum ComparedPullRequest {
    static let document = """
        query ComparedPullRequest($owner: String!, $name: String!, $number: Int!) {
          repository(owner: $owner, name: $name) {
            pullRequest(number: $number) {
              number
              title
              state
              isDraft
              mergeable
              reviewDecision
              additions
              deletions
              headRefName
              commits(last: 1) { nodes { commit { oid messageHeadline statusCheckRollup { state } } } }
              reviews(first: 20) { nodes { state submittedAt author { login } } }
            }
          }
        }
        """

    struct Variables: Encodable, Sendable {
        var owner: String
        var name: String
        var number: Int
    }

    struct Data: Decodable, Sendable {
        var repository: Repository?

        struct Repository: Decodable, Sendable { var pullRequest: PullRequest? }
        struct PullRequest: Decodable, Sendable {
            var number: Int
            var title: String
            var state: PullRequestState
            var isDraft: Bool
            var mergeable: MergeableState
            var reviewDecision: PullRequestReviewDecision?
            var additions: Int
            var deletions: Int
            var headRefName: String
            var commits: Nodes<CommitNode>
            var reviews: Nodes<Review>?
        }
        struct CommitNode: Decodable, Sendable { var commit: Commit }
        struct Commit: Decodable, Sendable {
            var oid: String
            var messageHeadline: String
            var statusCheckRollup: StatusCheckRollup?
        }
        struct StatusCheckRollup: Decodable, Sendable { var state: StatusState }
        struct Review: Decodable, Sendable {
            var state: PullRequestReviewState
            var submittedAt: String?
            var author: Login?
        }
    }
}

enum ComparedSearchRepositories {
    static let document = """
        query ComparedSearchRepositories($query: String!, $first: Int = 20) {
          search(query: $query, type: REPOSITORY, first: $first) {
            repositoryCount
            nodes {
              __typename
              ... on Repository { ...ComparedRepoParts updatedAt }
            }
            pageInfo { hasNextPage endCursor }
          }
        }
        """ + RepoParts.document

    struct Variables: Encodable, Sendable {
        var query: String
        var first: Int? = nil
    }

    struct Data: Decodable, Sendable {
        var search: Search

        struct Search: Decodable, Sendable {
            var repositoryCount: Int
            var nodes: [Node?]?
            var pageInfo: PageInfo
        }
        enum Node: Decodable, Sendable {
            case repository(Repository)
            case other(String)

            init(from decoder: any Decoder) throws {
                let typename = try Typename.of(decoder)
                self = typename == "Repository" ? .repository(try Repository(from: decoder)) : .other(typename)
            }
        }
        struct Repository: Decodable, Sendable {
            var parts: RepoParts
            var updatedAt: String

            private enum CodingKeys: String, CodingKey { case updatedAt }

            init(from decoder: any Decoder) throws {
                parts = try RepoParts(from: decoder)
                updatedAt = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .updatedAt)
            }
        }
    }
}

enum ComparedOrganizationRepositories {
    static let document = """
        query ComparedOrganizationRepositories($login: String!, $after: String) {
          organization(login: $login) {
            name
            repositories(first: 30, after: $after, orderBy: { field: STARGAZERS, direction: DESC }) {
              totalCount
              nodes { ...ComparedRepoParts isArchived forkCount }
              pageInfo { hasNextPage endCursor }
            }
          }
        }
        """ + RepoParts.document

    struct Variables: Encodable, Sendable {
        var login: String
        var after: String? = nil
    }

    struct Data: Decodable, Sendable {
        var organization: Organization?

        struct Organization: Decodable, Sendable {
            var name: String?
            var repositories: Repositories
        }
        struct Repositories: Decodable, Sendable {
            var totalCount: Int
            var nodes: [Repository?]?
            var pageInfo: PageInfo
        }
        struct Repository: Decodable, Sendable {
            var parts: RepoParts
            var isArchived: Bool
            var forkCount: Int

            private enum CodingKeys: String, CodingKey { case isArchived, forkCount }

            init(from decoder: any Decoder) throws {
                parts = try RepoParts(from: decoder)
                let container = try decoder.container(keyedBy: CodingKeys.self)
                isArchived = try container.decode(Bool.self, forKey: .isArchived)
                forkCount = try container.decode(Int.self, forKey: .forkCount)
            }
        }
    }
}

enum ComparedUserRepositories {
    static let document = """
        query ComparedUserRepositories($login: String!) {
          user(login: $login) {
            login
            repositories(first: 30, orderBy: { field: UPDATED_AT, direction: DESC }) {
              nodes { name stargazerCount updatedAt primaryLanguage { name } }
            }
          }
        }
        """

    struct Variables: Encodable, Sendable { var login: String }

    struct Data: Decodable, Sendable {
        var user: User?

        struct User: Decodable, Sendable {
            var login: String
            var repositories: Nodes<Repository>
        }
        struct Repository: Decodable, Sendable {
            var name: String
            var stargazerCount: Int
            var updatedAt: String
            var primaryLanguage: Language?
        }
        struct Language: Decodable, Sendable { var name: String }
    }
}

enum ComparedOrganizationMembers {
    static let document = """
        query ComparedOrganizationMembers($login: String!, $after: String) {
          organization(login: $login) {
            membersWithRole(first: 50, after: $after) {
              totalCount
              edges { role node { login name avatarUrl } }
              pageInfo { hasNextPage endCursor }
            }
          }
        }
        """

    struct Variables: Encodable, Sendable {
        var login: String
        var after: String? = nil
    }

    struct Data: Decodable, Sendable {
        var organization: Organization?

        struct Organization: Decodable, Sendable { var membersWithRole: Members }
        struct Members: Decodable, Sendable {
            var totalCount: Int
            var edges: [Edge?]?
            var pageInfo: PageInfo
        }
        struct Edge: Decodable, Sendable {
            var role: OrganizationMemberRole?
            var node: Member?
        }
        struct Member: Decodable, Sendable {
            var login: String
            var name: String?
            var avatarUrl: String
        }
    }
}

enum ComparedIssueTimeline {
    static let document = """
        query ComparedIssueTimeline($owner: String!, $name: String!, $number: Int!) {
          repository(owner: $owner, name: $name) {
            issue(number: $number) {
              title
              timelineItems(first: 50, itemTypes: [ISSUE_COMMENT, CLOSED_EVENT, LABELED_EVENT]) {
                nodes {
                  __typename
                  ... on IssueComment { id body createdAt author { login } }
                  ... on ClosedEvent { createdAt stateReason actor { login } }
                  ... on LabeledEvent { createdAt label { name color } actor { login } }
                }
              }
            }
          }
        }
        """

    struct Variables: Encodable, Sendable {
        var owner: String
        var name: String
        var number: Int
    }

    struct Data: Decodable, Sendable {
        var repository: Repository?

        struct Repository: Decodable, Sendable { var issue: Issue? }
        struct Issue: Decodable, Sendable {
            var title: String
            var timelineItems: Nodes<Item>
        }
        enum Item: Decodable, Sendable {
            case comment(Comment)
            case closed(Closed)
            case labeled(Labeled)
            case other(String)

            init(from decoder: any Decoder) throws {
                switch try Typename.of(decoder) {
                case "IssueComment": self = .comment(try Comment(from: decoder))
                case "ClosedEvent": self = .closed(try Closed(from: decoder))
                case "LabeledEvent": self = .labeled(try Labeled(from: decoder))
                case let typename: self = .other(typename)
                }
            }
        }
        struct Comment: Decodable, Sendable {
            var id: String
            var body: String
            var createdAt: String
            var author: Login?
        }
        struct Closed: Decodable, Sendable {
            var createdAt: String
            var stateReason: IssueStateReason?
            var actor: Login?
        }
        struct Labeled: Decodable, Sendable {
            var createdAt: String
            var label: Label
            var actor: Login?
        }
        struct Label: Decodable, Sendable {
            var name: String
            var color: String
        }
    }
}

enum ComparedAddComment {
    static let document = """
        mutation ComparedAddComment($subjectId: ID!, $body: String!) {
          addComment(input: { subjectId: $subjectId, body: $body }) {
            commentEdge { node { id body createdAt url } }
          }
        }
        """

    struct Variables: Encodable, Sendable {
        var subjectId: String
        var body: String
    }

    struct Data: Decodable, Sendable {
        var addComment: AddComment?

        struct AddComment: Decodable, Sendable { var commentEdge: Edge? }
        struct Edge: Decodable, Sendable { var node: Comment? }
        struct Comment: Decodable, Sendable {
            var id: String
            var body: String
            var createdAt: String
            var url: String
        }
    }
}

enum ComparedAddReaction {
    static let document = """
        mutation ComparedAddReaction($input: AddReactionInput!) {
          addReaction(input: $input) {
            reaction { id content }
            subject { id viewerCanReact }
          }
        }
        """

    struct Variables: Encodable, Sendable { var input: AddReactionInput }

    struct Data: Decodable, Sendable {
        var addReaction: AddReaction?

        struct AddReaction: Decodable, Sendable {
            var reaction: Reaction?
            var subject: Subject?
        }
        struct Reaction: Decodable, Sendable {
            var id: String
            var content: ReactionContent
        }
        struct Subject: Decodable, Sendable {
            var id: String
            var viewerCanReact: Bool
        }
    }
}

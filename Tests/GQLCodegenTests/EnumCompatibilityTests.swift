import Foundation
import GQLCore
import GQLNet
import Testing

/// An enum as GQLCodegen generated it before `GQLEnumValues` (its own switches, no `gqlValues`), as apps have it
/// committed: it still conforms to GQLEnum, so their code compiles before they regenerate.
enum LegacyStatus: GQLEnum {
    case draft
    case published
    case unknown(String)

    init(rawValue: String) {
        switch rawValue {
        case "DRAFT": self = .draft
        case "PUBLISHED": self = .published
        default: self = .unknown(rawValue)
        }
    }

    var rawValue: String {
        switch self {
        case .draft: "DRAFT"
        case .published: "PUBLISHED"
        case .unknown(let value): value
        }
    }
}

@Suite struct EnumCompatibilityTests {
    @Test func enumsGeneratedBeforeTheTableStillDecodeAndEncode() throws {
        #expect(
            try GQLValue(json: #"["PUBLISHED", "LATER"]"#).decode([LegacyStatus].self) == [
                .published, .unknown("LATER"),
            ])
        #expect(LegacyStatus.draft.gqlValue == .string("DRAFT") && LegacyStatus(rawValue: "DRAFT") == .draft)
    }

    /// A known name read or made by name is its case, never `unknown`, old enums and new alike.
    @Test func knownNamesAreTheirCases() throws {
        #expect(try GQLValue(json: #""DRAFT""#).decode(PostStatus.self) == .draft)
        #expect(PostStatus(rawValue: "ARCHIVED") == .archived && PostStatus(rawValue: "LATER") == .unknown("LATER"))
        #expect(PostStatus.unknown("LATER").rawValue == "LATER" && PostStatus.archived.rawValue == "ARCHIVED")
    }
}

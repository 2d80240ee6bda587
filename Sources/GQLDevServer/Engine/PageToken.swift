import Foundation
import GQLCore

/// The opaque `nextToken` of `list` and `sync`: base64 of `{"v":1,"model":…,"after":<last key>}`.
///
/// Pages are ordered by key, so a page resumes after the last key of the one before (keyset pagination):
/// rows inserted or deleted between pages do not shift the pages.
struct PageToken: Sendable, Equatable {
    var model: String
    var after: GQLValue

    /// The token text.
    var encoded: String {
        let json: GQLValue = ["v": 1, "model": .string(model), "after": after]
        return Data(((try? json.jsonString()) ?? "{}").utf8).base64EncodedString()
    }

    /// Reads a token made for `model`.
    ///
    /// - Throws: ``ResolverError`` `InvalidNextToken` for text that is not a token of this model.
    static func decode(_ text: String, model: String) throws -> PageToken {
        let invalid = ResolverError(
            "InvalidNextToken", "Invalid nextToken: '\(text.prefix(64))' is not a nextToken of a \(model) page")
        guard let data = Data(base64Encoded: text), let json = try? GQLValue(json: data),
            json["v"]?.intValue == 1, json["model"]?.stringValue == model, let after = json["after"], !after.isNull
        else { throw invalid }
        switch after {
        case .string, .int: return PageToken(model: model, after: after)
        default: throw invalid
        }
    }
}

import Foundation
import GQLCore
import GQLNet
import Testing

/// Recorded answers decode into the types generated for what an answer may leave out (Generated/Conditions):
/// fragments spread under @include/@skip, and interface conditions that overlap in part.
@Suite struct ConditionTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try GQLValue(json: json).decode(type)
    }

    @Test func partlyOverlappingInterfacesAddOptionalFieldsToTheirCases() throws {
        let ages = try decode(
            Conditions.AgesQuery.Data.self,
            """
            {"things": [{"__typename": "Person", "age": 36, "name": "Ada"}, {"__typename": "Tree", "age": 300},
                        {"__typename": "Pet", "name": "Rex"}, {"__typename": "Rock"}]}
            """)
        guard case .aged(let person) = ages.things[0], case .aged(let tree) = ages.things[1],
            case .named(let pet) = ages.things[2], case .unknown(let rock) = ages.things[3]
        else {
            Issue.record("wrong cases: \(ages.things)")
            return
        }
        #expect(person.age == 36 && person.name == "Ada")
        #expect(tree.age == 300 && tree.name == nil)
        #expect(pet.name == "Rex" && rock.__typename == "Rock")

        let names = try decode(
            Conditions.NamesQuery.Data.self,
            """
            {"things": [{"__typename": "Person", "name": "Ada", "age": 36}, {"__typename": "Pet", "name": "Rex"},
                        {"__typename": "Tree", "age": 300}]}
            """)
        guard case .named(let ada) = names.things[0], case .named(let rex) = names.things[1],
            case .aged(let oak) = names.things[2]
        else {
            Issue.record("wrong cases: \(names.things)")
            return
        }
        #expect(ada.agedParts?.age == 36 && rex.agedParts == nil && oak.agedParts.age == 300)
    }

    @Test func fragmentsUnderIncludeAndSkipAreOptional() throws {
        #expect(Conditions.NodeQuery.document.contains("...PersonParts @include(if: $full)"))
        let full = try decode(
            Conditions.NodeQuery.Data.self,
            """
            {"node": {"__typename": "Person", "id": "1", "name": "Ada", "age": 36}}
            """)
        guard case .person(let person)? = full.node else {
            Issue.record("not a person: \(String(describing: full.node))")
            return
        }
        #expect(person.personParts?.name == "Ada" && person.personParts?.age == 36)
        guard case .named(let named)? = person.nodeName else {
            Issue.record("no NodeName: \(String(describing: person.nodeName))")
            return
        }
        #expect(named.name == "Ada")

        // Both left out (full false, brief true): the fragments are nil, not a decoding error.
        let brief = try decode(Conditions.NodeQuery.Data.self, #"{"node": {"__typename": "Person", "id": "1"}}"#)
        guard case .person(let bare)? = brief.node else {
            Issue.record("not a person: \(String(describing: brief.node))")
            return
        }
        #expect(bare.id == "1" && bare.personParts == nil && bare.nodeName == nil)

        // A fragment's fields half there is still an error naming what is missing.
        #expect(throws: GQLError.self) {
            try decode(Conditions.NodeQuery.Data.self, #"{"node": {"__typename": "Person", "id": "1", "age": 1}}"#)
        }
        #expect(throws: GQLError.self) {
            try decode(
                Conditions.NodeQuery.Data.self, #"{"node": {"__typename": "Person", "id": "1", "name": 5, "age": 1}}"#)
        }
    }

    /// A fragment whose keys the enclosing selection selects too: with $full false the answer has them, without
    /// the fragment's own fields, and the fragment is nil (it was a keyNotFound error).
    @Test func fragmentsWhoseKeysTheSelectionSuppliesAreNilWhenLeftOut() throws {
        let brief = try decode(Conditions.PostQuery.Data.self, #"{"post": {"id": "p1", "author": {"id": "u1"}}}"#)
        #expect(brief.post?.id == "p1" && brief.post?.author.id == "u1" && brief.post?.postParts == nil)
        let full = try decode(
            Conditions.PostQuery.Data.self, #"{"post": {"id": "p1", "author": {"id": "u1", "name": "Ada"}}}"#)
        #expect(full.post?.postParts?.author.name == "Ada" && full.post?.postParts?.id == "p1")
    }
}

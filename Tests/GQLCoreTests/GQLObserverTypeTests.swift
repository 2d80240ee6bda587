import GQLCore
import Testing

@Suite struct GQLObserverTypeTests {
    @Test func rawValuesAreDistinctBits() {
        #expect(GQLObserverType.insert.rawValue == 1)
        #expect(GQLObserverType.update.rawValue == 2)
        #expect(GQLObserverType.delete.rawValue == 4)
        #expect(GQLObserverType.all.rawValue == 7)
        #expect(GQLObserverType(rawValue: 5) == [.insert, .delete])
    }

    @Test func arrayLiteralsCombineOptions() {
        let types: GQLObserverType = [.insert, .update]
        #expect(types.contains(.insert))
        #expect(types.contains(.update))
        #expect(!types.contains(.delete))
        #expect([.insert, .update, .delete] == GQLObserverType.all)
        #expect([.insert, .insert] == GQLObserverType.insert)
    }

    @Test func emptySet() {
        let none: GQLObserverType = []
        #expect(none.isEmpty)
        #expect(none.rawValue == 0)
        #expect(!none.contains(.insert))
        #expect(GQLObserverType.all.contains(none))
    }

    @Test func setAlgebra() {
        var types: GQLObserverType = .insert
        types.insert(.delete)
        #expect(types == [.insert, .delete])
        types.remove(.insert)
        #expect(types == .delete)
        #expect(GQLObserverType.all.subtracting(.update) == [.insert, .delete])
        #expect(GQLObserverType.all.intersection([.update, .delete]) == [.update, .delete])
        #expect(GQLObserverType.insert.union(.update) == [.insert, .update])
        #expect(GQLObserverType.insert.isDisjoint(with: .update))
        #expect(GQLObserverType.update.isSubset(of: .all))
        #expect(GQLObserverType.all.symmetricDifference(.insert) == [.update, .delete])
    }

    @Test(arguments: [
        (GQLObserverType(), "[]"), (GQLObserverType.insert, "insert"), (.update, "update"), (.delete, "delete"),
        (GQLObserverType([.insert, .update]), "insert|update"), (GQLObserverType([.delete, .insert]), "insert|delete"),
        (.all, "insert|update|delete"),
    ])
    func description(types: GQLObserverType, text: String) {
        #expect(types.description == text)
        #expect("\(types)" == text)
    }

    @Test func hashable() {
        let set: Set<GQLObserverType> = [.insert, [.insert], .all, [.insert, .update, .delete], .delete]
        #expect(set.count == 3)
        #expect(set.contains(.all))
    }
}

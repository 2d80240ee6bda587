import Foundation
import Testing

/// The module's rooms depend one way: delivery (`Delivery/`, what is sent) uses the outbox's API, and the outbox
/// (`Outbox/`, what is stored) knows nothing of delivery; the outbox's journal is called from `Outbox/` only.
///
/// Read from the sources: a file in `Outbox/` that names a type declared in `Delivery/`, or a file elsewhere that
/// names the journal, fails here with the file and the name.
@Suite struct RoomsTests {
    /// `Sources/GQLSync`, found from this file's path.
    static let module = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/GQLSync")

    /// Each Swift file under `folder` (relative to the module), with its text.
    static func files(in folder: String) throws -> [(name: String, text: String)] {
        let root = module.appendingPathComponent(folder)
        let names = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }
        return try names.sorted().map { name in
            (folder + "/" + name, try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8))
        }
    }

    /// The top-level types a file declares (classes, structs, enums, actors, protocols, type aliases); a nested
    /// type is named through its outer one.
    static func declaredTypes(_ text: String) throws -> Set<String> {
        let declaration = try Regex(
            #"^(?:(?:public|package|internal|fileprivate|private|final)\s+)*"#
                + #"(?:class|struct|enum|actor|protocol|typealias)\s+([A-Z][A-Za-z0-9_]*)"#
        ).anchorsMatchLineEndings()
        return Set(text.matches(of: declaration).compactMap { $0.output[1].substring.map(String.init) })
    }

    /// Whether `text` holds `name` as a whole word.
    static func names(_ text: String, _ name: String) throws -> Bool {
        try text.contains(Regex("\\b\(name)\\b"))
    }

    @Test func theOutboxNamesNoDeliveryType() throws {
        let delivery = try Self.files(in: "Delivery")
        let outbox = try Self.files(in: "Outbox")
        let deliveryTypes = try delivery.reduce(into: Set<String>()) { $0.formUnion(try Self.declaredTypes($1.text)) }
        // The check has something to check: the rooms are where this test looks for them.
        #expect(deliveryTypes.isSuperset(of: ["DeliveryDriver", "DeliveryStateMachine", "RequestBody"]))
        #expect(outbox.contains { $0.name == "Outbox/OutboxStore.swift" })
        var found: [String] = []
        for file in outbox {
            for type in deliveryTypes.sorted() where try Self.names(file.text, type) {
                found.append("\(file.name) names \(type)")
            }
        }
        #expect(found.isEmpty, "the outbox must not know delivery: \(found.joined(separator: "; "))")
    }

    @Test func onlyTheOutboxCallsItsJournal() throws {
        var checked = 0
        var found: [String] = []
        for folder in ["API", "Engine", "Delivery", "Pull", "Live"] {
            for file in try Self.files(in: folder) {
                checked += 1
                if try Self.names(file.text, "OutboxJournal") || file.text.contains(".journal?")
                    || file.text.contains(".journal.")
                {
                    found.append(file.name)
                }
            }
        }
        #expect(checked > 20)
        #expect(found.isEmpty, "the journal is the outbox's own: \(found.joined(separator: ", ")) reach into it")
    }
}

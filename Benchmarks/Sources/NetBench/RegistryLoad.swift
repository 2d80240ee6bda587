import BenchKit
import Foundation
import GQLNet

/// Loading a `GQLQuery` registry: `documents` generated `.graphql` files in ten folders — a tenth of them shared
/// fragments (some spreading another, chains up to five deep), the rest queries and mutations spreading one to
/// three of them — loaded with `load(directory:)`, then every operation resolved once with `validate()`.
/// Reading the same files into strings, without parsing, is timed too as the floor.
struct RegistryLoad {
    let documents: Int
    let options: NetBench.Options

    func run(into table: inout Table) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "NetBench-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (operations, fragments, bytes) = try generate(in: directory)
        progress("registry: \(operations) operations and \(fragments) fragments in \(documents) files, warm-up")

        var loads: [Double] = []
        var resolves: [Double] = []
        var reads: [Double] = []
        for round in 0...options.rounds {
            let clock = ContinuousClock()
            let start = clock.now
            let registry = GQLQuery()
            try registry.load(directory: directory)
            let loaded = clock.now
            try registry.validate()
            let resolved = clock.now
            guard registry.operationNames.count == operations, registry.fragmentNames.count == fragments else {
                throw BenchError(
                    "registry: \(registry.operationNames.count) operations and \(registry.fragmentNames.count) "
                        + "fragments loaded, \(operations) and \(fragments) expected")
            }
            let readStart = clock.now
            let texts = try Self.readAll(directory)
            let read = clock.now
            guard texts == documents else { throw BenchError("registry: read \(texts) files of \(documents)") }
            if round > 0 {  // round 0 warms the file cache and the code
                loads.append((loaded - start).seconds * 1000)
                resolves.append((resolved - loaded).seconds * 1000)
                reads.append((read - readStart).seconds * 1000)
            }
        }
        table.add(.init(label: "registry: load \(documents) files, ms", gqlnet: median(loads), format: "%.1f"))
        table.add(
            .init(label: "registry: resolve all \(operations) operations, ms", gqlnet: median(resolves), format: "%.1f")
        )
        table.add(
            .init(
                label: "registry: load + resolve, ms", gqlnet: median(zip(loads, resolves).map { $0 + $1 }),
                format: "%.1f"))
        table.note(
            "registry: \(operations) operations + \(fragments) fragments, \(bytes / 1024) KiB in \(documents) files "
                + "(10 folders); reading them into strings without parsing takes "
                + String(format: "%.1f ms", median(reads)))
        if options.verbose {
            table.note("registry load ms: " + loads.map { String(format: "%.1f", $0) }.joined(separator: ", "))
            table.note("registry resolve ms: " + resolves.map { String(format: "%.1f", $0) }.joined(separator: ", "))
        }
    }

    /// Writes the documents; returns the counts of operations and fragments and the total size.
    private func generate(in directory: URL) throws -> (Int, Int, Int) {
        let fragments = max(1, documents / 10)
        let operations = documents - fragments
        var bytes = 0
        func write(_ text: String, _ name: String, folder: Int) throws {
            let folderURL = directory.appendingPathComponent("group\(folder)", isDirectory: true)
            try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folderURL.appendingPathComponent(name + ".graphql"))
            bytes += text.utf8.count
        }
        for index in 0..<fragments {
            // Every fragment but the first of each run of five spreads the previous one: chains of up to five.
            let inner = index % 5 == 0 ? "" : "\n  ...ObjectFields\(index - 1)"
            let text = """
                # Shared fields, set \(index).
                fragment ObjectFields\(index) on Objects {
                  objectId
                  text
                  number\(inner)
                }

                """
            try write(text, "ObjectFields\(index)", folder: index % 10)
        }
        for index in 0..<operations {
            let spreads = (0...(index % 3)).map { "...ObjectFields\((index * 7 + $0 * 13) % fragments)" }
                .joined(separator: "\n    ")
            let text: String
            if index % 4 == 3 {
                text = """
                    # Creates an object, variant \(index).
                    mutation CreateObject\(index)($input: CreateObjectsInput!) {
                      createObjects(input: $input) {
                        \(spreads)
                        createdAt
                      }
                    }

                    """
            } else {
                text = """
                    # Reads an object, variant \(index).
                    query GetObject\(index)($id: ID!, $limit: Int = 10) {
                      getObjects(objectId: $id) {
                        \(spreads)
                        double
                        boolean
                      }
                      listObjects(limit: $limit) { items { objectId } nextToken }
                    }

                    """
            }
            try write(text, (index % 4 == 3 ? "CreateObject" : "GetObject") + String(index), folder: index % 10)
        }
        return (operations, fragments, bytes)
    }

    /// Reads every `.graphql` file under `directory` into a string, as the loader's floor; returns the count.
    private static func readAll(_ directory: URL) throws -> Int {
        guard
            let enumerator = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])
        else { throw BenchError("cannot list \(directory.path)") }
        var count = 0
        for case let url as URL in enumerator where url.pathExtension == "graphql" {
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            if !text.isEmpty { count += 1 }
        }
        return count
    }
}

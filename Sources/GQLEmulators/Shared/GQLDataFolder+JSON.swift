import Foundation
import GQLCore

extension GQLDataFolder {
    /// The JSON file `name` decoded as `T`; nil when there is none.
    /// - Throws: ``GQLCore/GQLError`` `.decoding` when the file is not `T`'s JSON (it is left as it is), naming
    ///   `owner` (the emulator whose file it is).
    package func readJSON<T: Decodable>(_ type: T.Type, _ name: String, owner: String) throws -> T? {
        guard let data = try read(name) else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw GQLError(
                .decoding, "\(name) in the \(owner)'s data folder is not the emulator's; move it away to start afresh")
        }
    }

    /// `value` as JSON (sorted keys) in `name`, written atomically; readable by its owner only when `ownerOnly`.
    package func writeJSON(_ value: some Encodable, to name: String, owner: String, ownerOnly: Bool = false) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw GQLError(.encoding, "the \(owner)'s \(name) could not be encoded: \(error)")
        }
        try write(data, to: name)
        if ownerOnly { _ = chmod(try resolve(name).path, 0o600) }
    }
}

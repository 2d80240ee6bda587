import Foundation

/// Checks `condition` every `interval` until it holds or `timeout` passes; whether it held. For a test that waits
/// on an outcome another process or thread brings about (a file grows, a folder empties): it decides by the
/// outcome, and the timeout only bounds a wait that went wrong (choose it generously, for a loaded machine).
///
/// ```swift
/// let emptied = await pollUntil { (try? FileManager.default.contentsOfDirectory(atPath: tmp))?.isEmpty == true }
/// ```
public func pollUntil(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// The entries of `folder` whose names satisfy `isIncluded`, with their sizes in bytes (an empty list when the
/// folder is missing).
public func fileSizes(in folder: URL, where isIncluded: (String) -> Bool = { _ in true }) -> [(name: String, size: Int)]
{
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter(isIncluded).map { name in
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
        return (name, (attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
}

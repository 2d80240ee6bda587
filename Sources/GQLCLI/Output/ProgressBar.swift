import Foundation
import GQLCore

/// A one-line progress bar on standard error, drawn only when standard error is a terminal; elsewhere (pipes,
/// files, CI logs) it stays silent so output remains plain lines. Safe to update from any thread.
///
/// ```swift
/// let bar = ProgressBar(label: "upload big.bin")
/// bar.update(done: sent, total: size)      // redraws at most once per percent
/// bar.finish()
/// ```
final class ProgressBar: Sendable {
    private let label: String
    private let enabled: Bool
    private let output: @Sendable (String) -> Void
    /// The last percentage drawn (-1: a count without a total), and whether anything was drawn.
    private let drawn = GQLLocked((percent: -1, any: false))

    init(
        label: String, enabled: Bool = isatty(STDERR_FILENO) == 1,
        output: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.label = label
        self.enabled = enabled
        self.output = output
    }

    /// Shows `done` of `total` units (bytes when `bytes` is true); a negative total shows the count alone.
    func update(done: Int64, total: Int64, bytes: Bool = true) {
        guard enabled else { return }
        let percent = total > 0 ? Int(min(max(done * 100 / total, 0), 100)) : -1
        let redraw = drawn.withLock { last in
            guard percent != last.percent || percent < 0 || !last.any else { return false }
            last = (percent, true)
            return true
        }
        guard redraw else { return }
        let amount =
            bytes
            ? "\(Self.size(done))/\(total >= 0 ? Self.size(total) : "?")" : total >= 0 ? "\(done)/\(total)" : "\(done)"
        let width = 30
        let filled = percent < 0 ? 0 : percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let line = "\r\(label) [\(bar)] \(percent < 0 ? "  ?" : String(format: "%3d", percent))% \(amount)\u{1B}[K"
        output(line)
    }

    /// Ends the line the bar was drawn on.
    func finish() {
        guard enabled, drawn.withLock({ $0.any }) else { return }
        output("\n")
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

import AsyncHTTPClient
import BenchKit
import Foundation
import GQLServices

/// `swift run -c release StorageBench [--signatures N] [--megabytes N] [--rounds N] [--parts N] [--only sign,transfer]`
///
/// GQLStorage against the AWS SDK for Python, each at its best, in interleaved rounds with every answer checked:
/// - SigV4 signatures per second: presigned URLs for the same generated keys, GQLStorage's public
///   `presignedURL` vs botocore's S3SigV4QueryAuth called directly (no client in the loop); the signatures of
///   both must be identical (compared by a digest of all of them).
/// - Upload and download of one large file against the same local S3 server (moto, Tests/Interop/s3_peer.py
///   --no-auth): GQLStorage vs boto3's transfer manager; the downloaded file must equal the source. The server's
///   own limit sits beside them: a raw AsyncHTTPClient GET of the same object, unsigned and unchecked.
/// - The peak resident memory GQLStorage's streamed download adds.
@main
struct StorageBench {
    struct Options {
        var signatures = 20_000
        var megabytes = 256
        var rounds = 3
        /// GQLStorage's parts in flight at once (its `maximumConcurrentParts`; the default when nil).
        var parts: Int?
        var only: Set<String> = ["sign", "transfer"]

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = arguments
            func number(_ name: String) throws -> Int {
                guard let text = arguments.popFirst(), let number = Int(text), number > 0 else {
                    throw BenchError("\(name) needs a positive number")
                }
                return number
            }
            while let argument = arguments.popFirst() {
                switch argument {
                case "--signatures": signatures = try number(argument)
                case "--megabytes": megabytes = try number(argument)
                case "--rounds": rounds = try number(argument)
                case "--parts": parts = try number(argument)
                case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
                default:
                    throw BenchError(
                        "usage: StorageBench [--signatures N] [--megabytes N] [--rounds N] [--parts N] [--only sign,transfer]"
                    )
                }
            }
        }
    }

    static func main() async {
        do {
            let options = try Options(CommandLine.arguments.dropFirst())
            print("StorageBench, \(ProcessInfo.processInfo.activeProcessorCount) cores, rounds \(options.rounds)")
            if options.only.contains("sign") { try await SigningLoad(options: options).run() }
            if options.only.contains("transfer") { try await TransferLoad(options: options).run() }
        } catch {
            print("StorageBench failed: \(error)")
            exit(1)
        }
    }
}

/// Medians and the spread of per-round ratios.
struct Rounds {
    var ours: [Double] = []
    var theirs: [Double] = []

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Per-round ratios ours ÷ theirs of rates (higher is better).
    var ratios: [Double] { zip(ours, theirs).map { $0 / $1 } }

    func line(_ label: String, unit: String, target: Double?) -> String {
        let ratio = Self.median(ratios)
        let spread = String(format: "%.2f–%.2f", ratios.min() ?? 0, ratios.max() ?? 0)
        var text = label.padding(toLength: 34, withPad: " ", startingAt: 0)
        text += String(format: "%12.1f ", Self.median(ours)) + unit
        text += String(format: "%12.1f ", Self.median(theirs)) + unit
        text += String(format: "  %6.2f×", ratio) + " (rounds \(spread))"
        if let target { text += String(format: "  goal ≥ %.0f× ", target) + (ratio >= target ? "✔" : "✘") }
        return text
    }
}

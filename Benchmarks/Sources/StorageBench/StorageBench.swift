import AsyncHTTPClient
import BenchKit
import Foundation
import GQLServices

/// `swift run -c release StorageBench [--signatures N] [--megabytes N] [--rounds N] [--parts N]
/// [--tuned-part-mib N] [--tuned-parts N] [--no-checksums] [--no-nginx] [--no-emulator] [--only sign,transfer,grid]`
///
/// GQLStorage against the AWS SDK for Python, each at its best, in interleaved rounds with every answer checked:
/// - SigV4 signatures per second: presigned URLs for the same generated keys, GQLStorage's public
///   `presignedURL` vs botocore's S3SigV4QueryAuth called directly (no client in the loop); the signatures of
///   both must be identical (compared by a digest of all of them).
/// - Upload and download of one large file (TransferLoad): GQLStorage vs boto3's transfer manager at its default and
///   at its best (uploads: both tuned, each at the part size and concurrency fastest against the emulator here;
///   downloads: boto3's one GET), against moto (Tests/Interop/s3_peer.py --no-auth), the project's storage
///   emulator (GQLStorageEmulator in a child process: ranges served natively, signatures checked) and, for
///   downloads, nginx serving the same file; each server's limit (curl) beside them; every download and both
///   clients' uploads compared with the source.
/// - The peak resident memory GQLStorage's streamed download adds, in a fresh process (MemoryProbe).
/// - `--only grid` (not in the default run): GQLStorage's upload to the emulator over a grid of part sizes and
///   concurrencies (UploadGrid), which picked the tuned row's defaults.
@main
struct StorageBench {
    struct Options {
        var signatures = 20_000
        var megabytes = 256
        var rounds = 3
        /// GQLStorage's parts in flight at once (its `maximumConcurrentParts`; the default when nil).
        var parts: Int?
        /// The part size, in MiB, of the tuned GQLStorage row: the fastest of UploadGrid's grid against the emulator
        /// (`--only grid --rounds 2` at 256 MiB, 2026-11-28; Docs/Performance.md).
        var tunedPartMiB = 16
        /// The parts in flight at once of the tuned GQLStorage row (UploadGrid's fastest, with ``tunedPartMiB``).
        var tunedParts = 4
        /// Whether GQLStorage's uploads carry CRC-32 checksums (its `sendsChecksums`; `--no-checksums` turns it off).
        var checksums = true
        /// Whether downloads are also measured from nginx serving the same file (`--no-nginx` leaves it out).
        var nginx = true
        /// Whether the storage emulator is a server too (`--no-emulator` leaves it out).
        var emulator = true
        var only: Set<String> = ["sign", "transfer"]

        static let usage =
            "usage: StorageBench [--signatures N] [--megabytes N] [--rounds N] [--parts N] [--tuned-part-mib N] "
            + "[--tuned-parts N] [--no-checksums] [--no-nginx] [--no-emulator] [--only sign,transfer,grid]"

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--signatures": signatures = try arguments.number(for: argument)
                case "--megabytes": megabytes = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--parts": parts = try arguments.number(for: argument)
                case "--tuned-part-mib": tunedPartMiB = try arguments.number(for: argument)
                case "--tuned-parts": tunedParts = try arguments.number(for: argument)
                case "--no-checksums": checksums = false
                case "--no-nginx": nginx = false
                case "--no-emulator": emulator = false
                case "--only": only = try arguments.list(for: argument, allowed: ["sign", "transfer", "grid"])
                default: throw BenchError("unknown argument \(argument); \(Self.usage)")
                }
            }
        }
    }

    static func main() async {
        do {
            if CommandLine.arguments.dropFirst().first == "--memory-child" {
                return try await MemoryProbe.child(Array(CommandLine.arguments.dropFirst(2)))
            }
            if CommandLine.arguments.dropFirst().first == "--emulator-child" {
                return try await S3Peer.emulatorChild(Array(CommandLine.arguments.dropFirst(2)))
            }
            if CommandLine.arguments.dropFirst().first == "--download-child" {
                return try await MemoryProbe.downloads(Array(CommandLine.arguments.dropFirst(2)))
            }
            let options = try Options(CommandLine.arguments.dropFirst())
            print(
                "StorageBench — GQLStorage vs botocore / boto3, \(options.rounds) interleaved rounds after a warm-up")
            for line in BenchEnvironment.header() { print(line) }
            if options.only.contains("sign") { try await SigningLoad(options: options).run() }
            if options.only.contains("transfer") { try await TransferLoad(options: options).run() }
            if options.only.contains("grid") { try await UploadGrid(options: options).run() }
            print("load average after: \(BenchEnvironment.loadAverage())")
        } catch {
            print("StorageBench failed: \(error)")
            exit(1)
        }
    }
}

/// Per-round rates of both sides: their medians and the spread of the per-round ratios (BenchKit's Statistics).
struct Rounds {
    var ours: [Double] = []
    var theirs: [Double] = []

    /// `label  ours unit  theirs unit  1.23× (1.10–1.40)  goal ≥ N× ✔`.
    func line(_ label: String, unit: String, target: Double?) -> String {
        let ratio = Statistics.median(Statistics.ratios(ours, theirs)) ?? 0
        var text = label.padding(toLength: 52, withPad: " ", startingAt: 0)
        text += String(format: "%12.1f ", Statistics.median(ours) ?? 0) + unit
        text += String(format: "%12.1f ", Statistics.median(theirs) ?? 0) + unit
        text += "  " + Statistics.spread(Statistics.ratios(ours, theirs))
        if let target { text += String(format: "  goal ≥ %.0f× ", target) + (ratio >= target ? "✔" : "✘") }
        return text
    }
}

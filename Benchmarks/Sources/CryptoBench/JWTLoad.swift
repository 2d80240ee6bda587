import BenchKit
import Foundation
@_spi(Benchmarks) import GQLCrypto
import GQLServices

/// One algorithm's rounds: GQLCrypto's full verification and signature floor, then PyJWT's and Python's floor, on
/// the same tokens, with every side's accepted tokens checked against the expected ones.
struct JWTLoad {
    let algorithm: String
    let options: CryptoBench.Options
    static let issuer = "https://tenant.bench/"
    static let audience = "bench-client"

    func run() throws {
        let bench = try JWTBenchmark(
            algorithm: algorithm, secret: "bench-secret-0123456789-abcdefghij", issuer: Self.issuer,
            audience: Self.audience)
        var tokens: [String] = []
        var expectedSubs: [String] = []
        var expectedIndices: [String] = []
        for index in 0..<options.tokens {
            let sub = "user-\(index)"
            var token = try bench.sign([
                "sub": .string(sub), "iss": .string(Self.issuer), "aud": .string(Self.audience), "iat": 1_795_435_200,
                "exp": 4_102_444_800, "email": .string("user\(index)@example.com"),
            ])
            if index % 8 == 7 {
                token = Self.tampered(token)
            } else {
                expectedSubs.append(sub)
                expectedIndices.append(String(index))
            }
            tokens.append(token)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cryptobench-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        var spec: GQLValues = [
            "alg": .string(algorithm), "issuer": .string(Self.issuer), "audience": .string(Self.audience),
            "tokens": .array(tokens.map { .string($0) }), "secret": "bench-secret-0123456789-abcdefghij",
        ]
        if let jwks = bench.jwks { spec["jwks"] = .string(jwks) }
        try GQLValue.object(spec).jsonData().write(to: file)
        let prepared = try tokens.map { try bench.prepare($0) }
        let now = Date()

        var full = Rounds()
        var floor = Rounds()
        for round in 0...options.rounds {
            // GQLCrypto: the full check, then the signature alone.
            var subs: [String] = []
            subs.reserveCapacity(tokens.count)
            var started = ContinuousClock.now
            for token in tokens {
                if let sub = bench.verify(token, now: now) { subs.append(sub) }
            }
            let ours = Double(tokens.count) / (ContinuousClock.now - started).seconds
            guard subs == expectedSubs else {
                throw BenchError("GQLCrypto accepted other \(algorithm) tokens than expected")
            }
            var valid: [String] = []
            started = ContinuousClock.now
            for (index, token) in prepared.enumerated() where bench.verifySignature(token) {
                valid.append(String(index))
            }
            let oursFloor = Double(tokens.count) / (ContinuousClock.now - started).seconds
            guard valid == expectedIndices else { throw BenchError("GQLCrypto's \(algorithm) floor disagrees") }
            // Python, on the same file.
            let theirs = try Self.python(file, "pyjwt", expect: expectedSubs, count: tokens.count, algorithm)
            let theirsFloor = try Self.python(file, "raw", expect: expectedIndices, count: tokens.count, algorithm)
            guard round > 0 else { continue }  // warm-up
            full.add(ours, theirs)
            floor.add(oursFloor, theirsFloor)
        }
        print(full.line("\(algorithm) verify (GQLCrypto / PyJWT)"))
        print(floor.line("\(algorithm) signature only (libcrypto)"))
    }

    /// Flips one character in the middle of the signature (still canonical base64url).
    static func tampered(_ token: String) -> String {
        var characters = Array(token)
        let index = characters.count - 10
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }

    /// Runs the Python side in `mode` and returns its rate, after checking what it accepted.
    static func python(_ file: URL, _ mode: String, expect: [String], count: Int, _ algorithm: String) throws -> Double
    {
        let lines = try Peers.run("Benchmarks/Server/jwt_bench_peer.py", [file.path, mode]).split(separator: "\n")
        guard let first = lines.first, let seconds = Double(first), seconds > 0 else {
            throw BenchError("jwt_bench_peer.py \(mode) answered \(lines.prefix(2))")
        }
        guard lines.dropFirst().elementsEqual(expect.lazy.map { Substring($0) }) else {
            throw BenchError("Python (\(mode)) accepted other \(algorithm) tokens than expected")
        }
        return Double(count) / seconds
    }
}

/// Per-round rates of both sides; medians and the spread of the per-round ratios.
struct Rounds {
    private var ours: [Double] = []
    private var theirs: [Double] = []

    mutating func add(_ our: Double, _ their: Double) {
        ours.append(our)
        theirs.append(their)
    }

    func line(_ label: String) -> String {
        label.padding(toLength: 38, withPad: " ", startingAt: 0)
            + String(
                format: "%10.0f/s %16.0f/s  ", Statistics.median(ours) ?? 0, Statistics.median(theirs) ?? 0)
            + Statistics.spread(Statistics.ratios(ours, theirs))
    }
}

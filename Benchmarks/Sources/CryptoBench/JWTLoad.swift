import BenchKit
import Foundation
import GQLServices

/// One algorithm's rounds: GQLCrypto's full verification and PyJWT's, then GQLCrypto's signature floor and
/// Python's, on the same tokens, the order alternating by round, with every side's accepted tokens checked
/// against the expected ones. The Python sides are warm processes kept for the whole run (`pyjwt`, `raw`).
struct JWTLoad {
    let algorithm: String
    let options: CryptoBench.Options
    let pyjwt: PeerLoop
    let raw: PeerLoop
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
            // The order alternates by round (ours first in even rounds, Python first in odd ones), so that whatever
            // the machine does over a round falls on both sides alike.
            let oursFirst = round % 2 == 0
            var ours = 0.0
            var theirs = 0.0
            for side in oursFirst ? [true, false] : [false, true] {
                if side {
                    ours = try verifyAll(bench, tokens, now: now, expect: expectedSubs)
                } else {
                    theirs = try Self.python(pyjwt, file, expect: expectedSubs, count: tokens.count, "PyJWT")
                }
            }
            var oursFloor = 0.0
            var theirsFloor = 0.0
            for side in oursFirst ? [true, false] : [false, true] {
                if side {
                    oursFloor = try signaturesOnly(bench, prepared, expect: expectedIndices)
                } else {
                    theirsFloor = try Self.python(raw, file, expect: expectedIndices, count: tokens.count, "floor")
                }
            }
            guard round > 0 else { continue }  // warm-up
            full.add(ours, theirs)
            floor.add(oursFloor, theirsFloor)
        }
        print(full.line("\(algorithm) verify (GQLCrypto / PyJWT)"))
        print(floor.line("\(algorithm) signature only (libcrypto)"))
    }

    /// GQLCrypto's full check of every token; the rate, after checking which tokens it accepted.
    private func verifyAll(_ bench: JWTBenchmark, _ tokens: [String], now: Date, expect: [String]) throws -> Double {
        var subs: [String] = []
        subs.reserveCapacity(tokens.count)
        let started = ContinuousClock.now
        for token in tokens {
            if let sub = bench.verify(token, now: now) { subs.append(sub) }
        }
        let rate = Double(tokens.count) / (ContinuousClock.now - started).seconds
        guard subs == expect else { throw BenchError("GQLCrypto accepted other \(algorithm) tokens than expected") }
        return rate
    }

    /// GQLCrypto's signature check alone; the rate, after checking which signatures held.
    private func signaturesOnly(_ bench: JWTBenchmark, _ prepared: [JWTBenchmark.Prepared], expect: [String]) throws
        -> Double
    {
        var valid: [String] = []
        let started = ContinuousClock.now
        for (index, token) in prepared.enumerated() where bench.verifySignature(token) {
            valid.append(String(index))
        }
        let rate = Double(prepared.count) / (ContinuousClock.now - started).seconds
        guard valid == expect else { throw BenchError("GQLCrypto's \(algorithm) floor disagrees") }
        return rate
    }

    /// Flips one character in the middle of the signature (still canonical base64url).
    static func tampered(_ token: String) -> String {
        var characters = Array(token)
        let index = characters.count - 10
        characters[index] = characters[index] == "A" ? "B" : "A"
        return String(characters)
    }

    /// One timed loop of a warm Python peer over `file`; its rate, after checking what it accepted.
    static func python(_ peer: PeerLoop, _ file: URL, expect: [String], count: Int, _ label: String) throws -> Double {
        let answer = try peer.ask(file.path)
        struct Answer: Decodable {
            let seconds: Double
            let accepted: [String]
        }
        guard let decoded = try? JSONDecoder().decode(Answer.self, from: Data(answer.utf8)), decoded.seconds > 0
        else { throw BenchError("jwt_bench_peer.py (\(label)) answered \(answer.prefix(200))") }
        guard decoded.accepted == expect else {
            throw BenchError("Python (\(label)) accepted other tokens than expected")
        }
        return Double(count) / decoded.seconds
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

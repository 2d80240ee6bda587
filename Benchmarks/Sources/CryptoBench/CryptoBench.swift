import BenchKit
import Foundation

/// `swift run -c release CryptoBench [--tokens N] [--rounds N]`
///
/// JWT verifications per second, GQLCrypto against PyJWT on cryptography (Python's usual JWT stack, as an API server
/// runs it: key object built once, issuer, audience and expiry required), on the same tokens, in interleaved rounds
/// (the order alternating by round; one warm Python process per Python contender for the whole run):
/// - HS256 (HMAC-SHA256 with a shared secret) and RS256 (RSA 2048 with SHA-256), each over N tokens of which every
///   eighth has a tampered signature; both sides must accept exactly the untampered tokens (their `sub`s compared
///   in order, every round).
/// - Beside each, the floor: the signature alone (libcrypto's HMAC or RSA verify with the token already split and
///   decoded) on each side, Python's through the standard library's hmac and cryptography's RSA verify.
@main
struct CryptoBench {
    struct Options {
        var tokens = 20_000
        var rounds = 3

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--tokens": tokens = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                default: throw BenchError("unknown argument \(argument); usage: CryptoBench [--tokens N] [--rounds N]")
                }
            }
        }
    }

    static func main() async {
        do {
            let options = try Options(CommandLine.arguments.dropFirst())
            print("CryptoBench — JWT verification, GQLCrypto vs PyJWT, \(options.rounds) interleaved rounds")
            for line in BenchEnvironment.header() { print(line) }
            print("workload                          GQLCrypto                 Python    ratio")
            let pyjwt = try PeerLoop("Benchmarks/Server/jwt_bench_peer.py", ["pyjwt"])
            let raw = try PeerLoop("Benchmarks/Server/jwt_bench_peer.py", ["raw"])
            defer {
                pyjwt.close()
                raw.close()
            }
            for algorithm in ["HS256", "RS256"] {
                try JWTLoad(algorithm: algorithm, options: options, pyjwt: pyjwt, raw: raw).run()
            }
            print("load average after: \(BenchEnvironment.loadAverage())")
        } catch {
            print("CryptoBench failed: \(error)")
            exit(1)
        }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

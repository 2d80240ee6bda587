// Where should GQLValues (GQLCore's ordered JSON object) stop scanning its keys and keep an index?
//
//   swiftc -O Benchmarks/values-threshold.swift -o /tmp/values-threshold && /tmp/values-threshold
//
// GQLValues keeps its members in an array of (key, value) and, above `linearLimit` members, a [String: Int] index
// from key to position. This measures the two ways to find a key, on objects of n members named like GraphQL
// fields (short names, some longer than the 15 UTF-8 bytes Swift keeps inline), for n from 2 to 64:
// - lookup: ns per lookup of a present key (every key in turn, shuffled), by scan and by the index;
// - object: ns per object built member by member the way the JSON parser builds one (each new name checked
//   against the ones before it) and then read once per member, the life of most parsed answers and rows.
// The members' layout is GQLValues' own: (key: String, value: V) with a 17-byte enum standing in for GQLValue.
// Figures are the best of 5 runs of about 0.2 s each (the least disturbed by other work on the machine).
import Foundation

enum Value {
    case null
    case int(Int64)
    case string(String)
    case array([Value])
}

let names = [
    "id", "objectId", "text", "number", "double", "boolean", "__typename", "name", "age", "email", "owner",
    "items", "nextToken", "startedAt", "createdAt", "updatedAt", "description", "firstName", "lastName",
    "avatarUrl", "followersCount", "isViewerFollowing", "repository", "stargazerCount", "primaryLanguage",
    "defaultBranchRef", "viewerPermission", "hasIssuesEnabled", "pushedAt", "url", "homepageUrl", "isArchived",
]

func keys(_ n: Int, salt: String) -> [String] {
    // Fresh String instances (as parsed keys are), never the literals themselves.
    (0..<n).map { i in
        String(decoding: Array((names[i % names.count] + (i < names.count ? "" : "\(i)")).utf8), as: UTF8.self) + salt
    }
}

struct Scan {
    var entries: [(key: String, value: Value)] = []
    @inline(__always) func find(_ key: String) -> Int? {
        for i in entries.indices where entries[i].key == key { return i }
        return nil
    }
    mutating func set(_ key: String, _ value: Value) {
        if let i = find(key) { entries[i].value = value } else { entries.append((key, value)) }
    }
}

struct Indexed {
    var entries: [(key: String, value: Value)] = []
    var positions: [String: Int] = [:]
    @inline(__always) func find(_ key: String) -> Int? { positions[key] }
    mutating func set(_ key: String, _ value: Value) {
        if let i = positions[key] {
            entries[i].value = value
        } else {
            positions[key] = entries.count
            entries.append((key, value))
        }
    }
}

@inline(never) func blackhole(_ x: Int) { if x == -1 { print("") } }

func best(_ body: () -> Double) -> Double { (0..<5).map { _ in body() }.min() ?? 0 }

func time(_ iterations: Int, _ body: () -> Int) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    var sum = 0
    for _ in 0..<iterations { sum &+= body() }
    blackhole(sum)
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations)
}

var random = SystemRandomNumberGenerator()
print("n   lookup scan  lookup index   object scan  object index   (ns)")
for n in [2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64] {
    let own = keys(n, salt: "")
    let asked = keys(n, salt: "").shuffled(using: &random)  // equal, not identical, strings
    var scan = Scan()
    var indexed = Indexed()
    for (i, key) in own.enumerated() {
        scan.set(key, .int(Int64(i)))
        indexed.set(key, .int(Int64(i)))
    }
    let rounds = max(1, 2_000_000 / n)
    let lookupScan =
        best {
            time(rounds) {
                var s = 0; for k in asked { s &+= scan.find(k) ?? 0 }; return s
            }
        } / Double(n)
    let lookupIndex =
        best {
            time(rounds) {
                var s = 0; for k in asked { s &+= indexed.find(k) ?? 0 }; return s
            }
        } / Double(n)
    let builds = max(1, 200_000 / n)
    let objectScan = best {
        time(builds) {
            var o = Scan()
            o.entries.reserveCapacity(n)
            for (i, k) in own.enumerated() { o.set(k, .int(Int64(i))) }
            var s = 0
            for k in asked { s &+= o.find(k) ?? 0 }
            return s
        }
    }
    let objectIndex = best {
        time(builds) {
            var o = Indexed()
            o.entries.reserveCapacity(n)
            o.positions.reserveCapacity(n)
            for (i, k) in own.enumerated() { o.set(k, .int(Int64(i))) }
            var s = 0
            for k in asked { s &+= o.find(k) ?? 0 }
            return s
        }
    }
    print(
        String(n).padding(toLength: 4, withPad: " ", startingAt: 0)
            + String(format: "%11.1f  %12.1f  %12.0f  %12.0f", lookupScan, lookupIndex, objectScan, objectIndex))
}

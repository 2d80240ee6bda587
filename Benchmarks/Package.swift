// swift-tools-version:6.1
// GraphQLite store benchmarks: GQLStore vs GRDB Codable records vs a raw SQLite C loop.
// Kept out of the root package graph (DESIGN.md §1); run with
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching StoreBench
// See README.md for the workloads, the flags and why the environment variable matters.
import Foundation
import PackageDescription

// GRDB's manifest turns its preupdate-hook API (DatabasePreUpdateEvent) on when this environment variable is "1".
// Read the same variable here so the GRDB observer code compiles against whichever GRDB API the build has.
let grdbPreUpdate = ProcessInfo.processInfo.environment["SQLITE_ENABLE_PREUPDATE_HOOK"] == "1"

let package = Package(
    name: "GraphQLiteBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "GraphQLite", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "BenchSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "BenchKit"),
        .target(name: "BenchRawSQLite", dependencies: ["BenchKit", "BenchSQLite"]),
        .target(
            name: "BenchGRDB",
            dependencies: ["BenchKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: grdbPreUpdate ? [.define("SQLITE_ENABLE_PREUPDATE_HOOK")] : []
        ),
        .target(
            name: "BenchGQLStore",
            dependencies: ["BenchKit", .product(name: "GQLStore", package: "GraphQLite")]
        ),
        .executableTarget(
            name: "StoreBench",
            dependencies: ["BenchKit", "BenchRawSQLite", "BenchGRDB", "BenchGQLStore", "BenchSQLite"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

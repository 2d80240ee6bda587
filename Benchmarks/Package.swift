// swift-tools-version:6.1
// GraphQLite benchmarks: GQLStore vs GRDB Codable records vs a raw SQLite C loop (StoreBench), GQLDevServer vs a
// Strawberry GraphQL server (ServerBench), the GQLNet client vs raw AsyncHTTPClient / WSClient (NetBench), and
// GQLStorage vs botocore / boto3 (StorageBench), GQLCache vs parsing and rows by hand (CacheBench), GQLCodegen vs
// ariadne-codegen (CodegenBench).
// Kept out of the root package graph, so GRDB never enters it; run with
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching StoreBench
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching ServerBench
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching NetBench
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching StorageBench
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching CryptoBench
//   cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 swift run -c release --disable-build-manifest-caching CacheBench
//   make bench-codegen   (CodegenBench: builds gql-cli and installs ariadne-codegen first)
// See README.md for the workloads, the flags and why the environment variable matters.
import Foundation
import PackageDescription

// GRDB's manifest turns its preupdate-hook API (DatabasePreUpdateEvent) on when this environment variable is "1".
// Read the same variable here so the GRDB observer code compiles against whichever GRDB API the build has.
let grdbPreUpdate = ProcessInfo.processInfo.environment["SQLITE_ENABLE_PREUPDATE_HOOK"] == "1"

// CryptoBench drives GQLCrypto's JWT layer, whose API is `package` (GQLCrypto is no product and has no public API).
// Rather than widen the product's surface for a benchmark, CryptoBench is compiled as a member of GraphQLite's
// package: SwiftPM names a path dependency's package after its folder (lowercased, made a C identifier) and passes
// that name to every target of it as `-package-name`; CryptoBench gets the same name (and no name of its own).
let graphQLitePackageName: String = {
    let folder = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? ""
    var name = String(folder.lowercased().map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    if name.first?.isNumber ?? true { name = "_" + name }
    return name
}()

let package = Package(
    name: "GraphQLiteBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "GraphQLite", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // ServerBench's load driver; the same versions as the root package.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", exact: "1.6.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        // ServerBench's physical limit: a bare route on the HTTP server GQLDevServer is built on.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // CodegenBench's floor: parsing the schema alone, with the parser GQLCodegen uses (the root's version).
        .package(url: "https://github.com/GraphQLSwift/GraphQL", exact: "4.3.0"),
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
        .executableTarget(
            name: "ServerBench",
            dependencies: [
                "BenchKit",
                .product(name: "GQLDevServer", package: "GraphQLite"),
                .product(name: "GQLCore", package: "GraphQLite"),
                .product(name: "GQLStore", package: "GraphQLite"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "StorageBench",
            dependencies: [
                "BenchKit",
                .product(name: "GQLServices", package: "GraphQLite"),
                .product(name: "GQLEmulators", package: "GraphQLite"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // JWT verifications/s: GQLCrypto (its package API, see graphQLitePackageName) vs PyJWT on cryptography.
        .executableTarget(
            name: "CryptoBench",
            dependencies: ["BenchKit", .product(name: "GQLServices", package: "GraphQLite")],
            packageAccess: false,
            swiftSettings: [.unsafeFlags(["-package-name", graphQLitePackageName])]
        ),
        .executableTarget(
            name: "NetBench",
            dependencies: [
                "BenchKit",
                .product(name: "GQLNet", package: "GraphQLite"),
                .product(name: "GQLDevServer", package: "GraphQLite"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "SyncBench",
            dependencies: [
                "BenchKit",
                "BenchSQLite",
                .product(name: "GQLSync", package: "GraphQLite"),
                .product(name: "GQLDevServer", package: "GraphQLite"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GQLCache's write, read and watchers vs parsing the answer and inserting its rows by hand.
        .executableTarget(
            name: "CacheBench",
            dependencies: [
                "BenchKit",
                "BenchSQLite",
                .product(name: "GQLCache", package: "GraphQLite"),
                .product(name: "GQLNet", package: "GraphQLite"),
            ]
        ),
        // GQLCodegen (in-process and as gql-cli codegen) vs ariadne-codegen on GitHub's schema, then the generated
        // Swift's lines and compile time beside Swift written by hand.
        .executableTarget(
            name: "CodegenBench",
            dependencies: [
                "BenchKit",
                .product(name: "GQLCodegen", package: "GraphQLite"),
                .product(name: "GraphQL", package: "GraphQL"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "GraphQLite",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "GQLCore", targets: ["GQLCore"]),
        .library(name: "GQLStore", targets: ["GQLStore"]),
        .executable(name: "gql-cli", targets: ["GQLCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "GQLCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "GQLStore",
            dependencies: ["GQLCore", "CSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "GQLCLI",
            dependencies: [
                "GQLCore", "GQLStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "GQLCoreTests", dependencies: ["GQLCore"]),
        .testTarget(name: "GQLStoreTests", dependencies: ["GQLStore", "GQLCore"]),
        // Runs the built gql-cli as a child process; `swift test` builds the executable with the tests.
        .testTarget(name: "GQLCLITests", dependencies: ["GQLStore"]),
    ],
    swiftLanguageModes: [.v6]
)

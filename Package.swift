// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "GraphQLite",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "GQLCore", targets: ["GQLCore"]),
        .library(name: "GQLStore", targets: ["GQLStore"]),
        .library(name: "GQLNet", targets: ["GQLNet"]),
        .library(name: "GQLCache", targets: ["GQLCache"]),
        .library(name: "GQLSync", targets: ["GQLSync"]),
        .library(name: "GQLServices", targets: ["GQLServices"]),
        .library(name: "GQLDevServer", targets: ["GQLDevServer"]),
        .library(name: "GQLEmulators", targets: ["GQLEmulators"]),
        .library(name: "GQLCodegen", targets: ["GQLCodegen"]),
        .plugin(name: "GQLCodegenPlugin", targets: ["GQLCodegenPlugin"]),
        .executable(name: "gql-cli", targets: ["GQLCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/GraphQLSwift/GraphQL", exact: "4.3.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", exact: "1.6.2"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // GQLNet's WebSocket client (NIOWebSocket's upgrader) and HTTP error mapping: the versions AsyncHTTPClient
        // 1.37.0 resolves to.
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        // GQLDevServer's HTTP request and response types (the version hummingbird 2.28.1 resolves to).
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // SHA-256, HMAC, hex and signature checks on the system libcrypto, shared by the modules that sign or
        // verify; not a product.
        .target(name: "GQLCrypto", dependencies: ["GQLCore", "CCrypto"]),
        .target(
            name: "GQLCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        // GQLStore's encrypting SQLite VFS (AES-256-GCM per page on libcrypto), in C because SQLite's VFS is a table
        // of C callbacks over structs it allocates; not a product.
        .target(name: "CStoreCrypt", dependencies: ["CSQLite", "CCrypto"]),
        .target(
            name: "GQLStore",
            dependencies: ["GQLCore", "CSQLite", "CStoreCrypt", .product(name: "Logging", package: "swift-log")]
        ),
        // The HTTP layer GQLNet and GQLServices share (HTTPExchange: deadlines, size limits, redirects refused,
        // header checks, the owned client's shutdown); not a product.
        .target(
            name: "GQLHTTP",
            dependencies: [
                "GQLCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]
        ),
        .target(
            name: "GQLNet",
            dependencies: [
                "GQLCore", "GQLHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "GQLServices",
            dependencies: [
                "GQLCore", "GQLHTTP", "GQLCrypto", "GQLNet",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "GQLCache",
            dependencies: ["GQLCore", "GQLStore", "GQLNet", .product(name: "GraphQL", package: "GraphQL")]
        ),
        .target(
            name: "GQLSync",
            dependencies: ["GQLCore", "GQLStore", "GQLNet", "GQLCache"]
        ),
        .target(
            name: "GQLDevServer",
            dependencies: [
                "GQLCore", "GQLStore", "GQLCrypto",
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Local emulators of the services GQLServices talks to (S3, Auth0, OneSignal), one folder each, on the dev
        // server's connection plumbing; `gql-cli serve` composes them with the GraphQL API.
        .target(
            name: "GQLEmulators",
            dependencies: [
                "GQLCore", "GQLCrypto", "GQLStore", "GQLDevServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Typed Swift operations from .graphql documents and a schema (gql-cli codegen, the build plugin): parses
        // with GraphQL; no network, no SQLite.
        .target(
            name: "GQLCodegen",
            dependencies: ["GQLCore", .product(name: "GraphQL", package: "GraphQL")]
        ),
        // The generator as GQLCodegenPlugin runs it at build time (GQLCodegen alone).
        .executableTarget(name: "GQLCodegenTool", dependencies: ["GQLCodegen"]),
        // `swift build` runs the generator on a target's .graphql files (schema.graphql beside them).
        .plugin(name: "GQLCodegenPlugin", capability: .buildTool(), dependencies: ["GQLCodegenTool"]),
        .executableTarget(
            name: "GQLCLI",
            dependencies: [
                "GQLCore", "GQLCrypto", "GQLStore", "GQLNet", "GQLCache", "GQLServices", "GQLSync", "GQLDevServer",
                "GQLEmulators", "GQLCodegen",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Helpers the test targets share (child processes, scripted servers, seeds); not a product.
        .target(name: "GQLTestSupport", dependencies: ["GQLCore"], path: "Tests/GQLTestSupport"),
        .testTarget(name: "GQLCoreTests", dependencies: ["GQLCore", "GQLTestSupport"]),
        .testTarget(name: "GQLCryptoTests", dependencies: ["GQLCrypto", "GQLCore", "GQLTestSupport"]),
        .testTarget(
            name: "GQLServicesTests",
            dependencies: [
                // GQLEmulators: GQLAuth's and GQLPush's suites run against its emulators as well as the stand-ins.
                "GQLServices", "GQLCore", "GQLNet", "GQLCrypto", "GQLEmulators", "GQLTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // Fixtures/ holds schemas and documents; Generated/ the Swift written from them, compiled here.
        .testTarget(
            name: "GQLCodegenTests", dependencies: ["GQLCodegen", "GQLCore", "GQLNet", "GQLStore", "GQLTestSupport"],
            exclude: ["Fixtures"]
        ),
        // Uses GQLCodegenPlugin on the dev server's schema and its own operations, then runs them against GQLDevServer.
        .testTarget(
            name: "GQLCodegenPluginTests",
            dependencies: ["GQLNet", "GQLCore", "GQLDevServer", "GQLStore", "GQLSync", "GQLCache"],
            plugins: ["GQLCodegenPlugin"]
        ),
        .testTarget(name: "GQLStoreTests", dependencies: ["GQLStore", "GQLCore", "CSQLite", "GQLTestSupport"]),
        // Runs the built gql-cli as a child process; `swift test` builds the executable with the tests.
        .testTarget(
            name: "GQLCLITests",
            dependencies: ["GQLCore", "GQLStore", "GQLSync", "GQLCache", "GQLCrypto", "GQLServices", "GQLTestSupport"]
        ),
        .testTarget(
            name: "GQLNetTests",
            dependencies: [
                "GQLNet", "GQLHTTP", "GQLCore", "GQLDevServer", "GQLCrypto", "GQLTestSupport",
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "GQLCacheTests",
            dependencies: ["GQLCache", "GQLCore", "GQLStore", "GQLNet", "GQLDevServer", "GQLTestSupport"]
        ),
        .testTarget(
            name: "GQLSyncTests",
            dependencies: ["GQLSync", "GQLCache", "GQLCore", "GQLStore", "GQLNet", "GQLDevServer", "GQLTestSupport"]
        ),
        .testTarget(
            name: "GQLDevServerTests",
            dependencies: [
                "GQLDevServer", "GQLCore", "GQLStore", "GQLCrypto", "GQLTestSupport",
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "GQLEmulatorsTests",
            dependencies: [
                "GQLEmulators", "GQLDevServer", "GQLServices", "GQLCore", "GQLCrypto", "GQLTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

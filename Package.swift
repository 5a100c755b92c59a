// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "CourierLoad", targets: ["CourierLoad"]),
        .executable(name: "courier", targets: ["CourierCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // libcurl, through a shim of typed, non-variadic wrappers (Swift cannot call C variadics).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libcrypto, for RS256 signatures (service accounts) and MD5 (upload integrity).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // CRC32C, in C so it stays fast in debug builds (SSE4.2 when available).
        .target(name: "CCourierChecksum"),
        .target(
            name: "Courier",
            dependencies: [
                "CCurl",
                "COpenSSL",
                "CCourierChecksum",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .target(
            name: "CourierTesting",
            dependencies: ["Courier"]
        ),
        .target(name: "CCourierTestSupport"),
        .target(
            name: "CourierTestServer",
            dependencies: [
                "CCourierTestSupport",
                "CCourierChecksum",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // Verifies JWTs independently of the OpenSSL signer under test.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // zlib, for the standard compressed HdrHistogram encoding in load results.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The load generator behind `courier load`: runner, recorder, results, thresholds, reports.
        .target(
            name: "CourierLoad",
            dependencies: [
                "Courier",
                "CZlib",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The `courier` command line (load, merge, serve), as a library so tests parse its arguments.
        .target(
            name: "CourierCommands",
            dependencies: [
                "Courier",
                "CourierLoad",
                "CourierTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "CourierCLI",
            dependencies: ["CourierCommands", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "CourierTestHelper",
            dependencies: ["Courier", "CourierTestServer"],
            path: "Tests/CourierTestHelper"
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier", "CourierTesting", "CourierTestServer", "CourierTestHelper", "CourierLoad", "CourierCommands", "CourierCLI"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

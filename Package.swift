// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "CourierLoad", targets: ["CourierLoad"]),
        .library(name: "CourierGenerator", targets: ["CourierGenerator"]),
        .library(name: "GoogleStorage", targets: ["GoogleStorage"]),
        .library(name: "GoogleTasks", targets: ["GoogleTasks"]),
        // A swift-openapi-runtime ClientTransport on Courier: any OpenAPI client on the pipeline.
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        // The test server's Notes API as a swift-openapi-generator client, beside CourierTestServer:
        // for examples (Snippets/OpenAPIClient.swift) and tests of OpenAPI code against that server.
        .library(name: "OpenAPINotes", targets: ["OpenAPINotes"]),
        .executable(name: "courier", targets: ["CourierCLI"]),
        // A client generated at build time from the Discovery document in the target.
        .plugin(name: "CourierGeneratorPlugin", targets: ["CourierGeneratorPlugin"]),
        // `swift package generate-courier-client --target T`: the same, written into the target's folder.
        .plugin(name: "GenerateCourierClient", targets: ["GenerateCourierClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The test server's connection-level faults (HTTPRequestPart); Hummingbird depends on it already.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Tests only, both: child processes (peers, the test helper) without Foundation.Process,
        // whose run() reads past a buffer on Linux and crashes about one suite run in five
        // (swiftlang/swift-corelibs-foundation#5472); swift-system for the paths Subprocess takes.
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
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
        // ThreadSanitizer annotations for edges the uninstrumented Swift runtime makes (no-ops otherwise).
        .target(name: "CCourierSanitizer"),
        // The runtime's global-enqueue hook, so the loop can run a lone resumed caller in place.
        .target(name: "CCourierExecutor"),
        .target(
            name: "Courier",
            dependencies: [
                "CourierSync",
                "CCurl",
                "COpenSSL",
                "CCourierChecksum",
                "CCourierSanitizer",
                "CCourierExecutor",
                // zlib: a gzip-stored download decoded at its end (libcurl links it already).
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // Test support for users: the mock transport, the virtual clock; and swift-distributed-tracing's
        // InMemoryTracer, for tests that check the spans of their queries (Docs/Tracing.md).
        .target(
            name: "CourierTesting",
            dependencies: ["Courier", "CourierSync", .product(name: "InMemoryTracing", package: "swift-distributed-tracing")]
        ),
        .target(name: "CCourierTestSupport"),
        .target(
            name: "CourierTestServer",
            dependencies: [
                "CourierSync",
                "CCourierTestSupport",
                "CCourierChecksum",
                // gzip, for the storage testbench's compressed objects.
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // MD5 and RS256 verification through the libcrypto Courier already links: a
                // second crypto library (swift-crypto's BoringSSL, 359 C files) cost every CI build
                // configuration minutes. The verifier fixes the algorithm (RSASSA-PKCS1-v1_5,
                // SHA-256) on its own side, so it still checks what the signer chose.
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
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
                "CourierSync",
                "CZlib",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                // Live metrics during a run (`--metrics-port`): small, swift-metrics and atomics only.
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // Discovery document → Swift client: parse, translate, render; a document named by API and
        // version is fetched with libcurl alone. It does not depend on Courier, so the build
        // plugin's tool compiles no second Courier for the host.
        .target(name: "CourierGenerator", dependencies: ["CCurl"]),
        // The generator alone, as both plugins' tool.
        .executableTarget(name: "CourierGenerateTool", dependencies: ["CourierGenerator"]),
        .plugin(name: "CourierGeneratorPlugin", capability: .buildTool(), dependencies: ["CourierGenerateTool"]),
        .plugin(
            name: "GenerateCourierClient",
            capability: .command(
                intent: .custom(verb: "generate-courier-client",
                                description: "Write the client generated from a target's Discovery document into its folder"),
                // No network permission declared: SwiftPM would then demand --allow-network-connections
                // of every run, --api or not. Linux has no plugin sandbox; on macOS, --api needs
                // --disable-sandbox (Docs/Generator.md).
                permissions: [.writeToPackageDirectory(reason: "writes the generated client's Swift files into the target's folder")]
            ),
            dependencies: ["CourierGenerateTool"]
        ),
        // A pthread-based lock the sanitizers can see (Synchronization.Mutex uses raw futexes on Linux).
        .target(name: "CourierSync"),
        // Generated by `make generate` from Sources/*/discovery.json; CI checks they are current.
        .target(name: "GoogleStorage", dependencies: ["Courier", "COpenSSL"], exclude: ["discovery.json"]),
        .target(name: "GoogleTasks", dependencies: ["Courier"], exclude: ["discovery.json"]),
        // The generator's golden output for Tests/Golden/*.json, compiled as well as compared.
        .target(name: "GoldenNotes", dependencies: ["Courier"], path: "Tests/Golden/GoldenNotes"),
        // A client the build plugin generates from Cloud Storage's document (a link to GoogleStorage's).
        .target(name: "PluginStorage", dependencies: ["Courier"], path: "Tests/PluginStorage", plugins: ["CourierGeneratorPlugin"]),
        // The `courier` command line (load, merge, serve, generate), as a library so tests parse its arguments.
        .target(
            name: "CourierCommands",
            dependencies: [
                "Courier",
                "CourierSync",
                "CourierLoad",
                "CourierGenerator",
                "CourierTestServer",
                "GoogleStorage", // results to and from gs://
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"), // --metrics-port
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // CourierTransport: swift-openapi-generator's clients over a ServiceActor.
        .target(
            name: "CourierOpenAPI",
            dependencies: ["Courier", "CourierSync",
                           .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                           .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .executableTarget(
            name: "CourierCLI",
            dependencies: ["CourierCommands", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // A child process for the tests that must measure or kill a client of their own: memory
        // while streaming, crash-resume of uploads.
        .executableTarget(
            name: "CourierTestHelper",
            dependencies: ["Courier", "CourierTestServer", "CourierOpenAPI", "OpenAPINotes",
                           .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            path: "Tests/CourierTestHelper"
        ),
        // The test process's own set-up, before main: SIGPIPE ignored (Tests/CTestProcess/process.c).
        .target(name: "CTestProcess", path: "Tests/CTestProcess"),
        // Shared by every test target: server-and-service helpers, the suite's log, leak checks,
        // hand-written test models and the repository's paths. CTestProcess sets the test
        // process up (SIGPIPE ignored) whichever target's tests run.
        .target(
            name: "CourierTestSupport",
            dependencies: ["CTestProcess", "Courier", "CourierSync", "CourierTestServer",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "Subprocess", package: "swift-subprocess"),
                           .product(name: "SystemPackage", package: "swift-system")],
            path: "Tests/CourierTestSupport"
        ),
        // One test target per product module; inside CourierTests, folders mirror Sources/Courier.
        .testTarget(
            name: "CourierTests",
            dependencies: ["CourierTestSupport", "Courier", "CourierTesting", "CourierTestServer", "CourierTestHelper", "CourierSync",
                           "CourierOpenAPI", "OpenAPINotes", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                           .product(name: "MetricsTestKit", package: "swift-metrics"),
                           .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                           .product(name: "Subprocess", package: "swift-subprocess"),
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        // A client swift-openapi-generator made from the test server's Notes API
        // (`make openapi-generate`; committed, as building the generator takes minutes).
        .target(
            name: "OpenAPINotes",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            path: "Tests/OpenAPINotes",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml", "openapi.yaml.sha256"]
        ),
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: ["CourierTestSupport", "Courier", "CourierOpenAPI", "CourierTestServer", "OpenAPINotes",
                           .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), "COpenSSL"]
        ),
        .testTarget(
            name: "CourierLoadTests",
            dependencies: ["CourierTestSupport", "Courier", "CourierLoad", "CourierCommands", "CourierCLI", "CourierTestServer",
                           "GoogleStorage", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "CourierGeneratorTests",
            dependencies: ["CourierTestSupport", "Courier", "CourierGenerator", "GoldenNotes", "PluginStorage"]
        ),
        .testTarget(
            name: "GoogleClientTests",
            dependencies: ["CourierTestSupport", "Courier", "CourierTestServer", "GoogleStorage", "GoogleTasks", "GoldenNotes"]
        ),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: ["CourierTestSupport", "CTestProcess", "Courier", "CourierSync", "CourierTestServer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

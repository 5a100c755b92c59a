// swift-tools-version:6.1
import PackageDescription

// Measurements live here, apart from the tests: a separate package on the root by path.
//
// - `Benchmarks/CourierBenchmarks`: ordo-one/benchmark suites (`swift package benchmark`):
//   concurrent sends and typed executes at 1, 64 and 1,024 in flight, JSON, batches, uploads.
// - `CourierBench`: the comparison clients `make bench` runs side by side (Courier, and
//   AsyncHTTPClient and URLSession with the same loop), plus the 10,000-in-flight probe.
// - `Baselines/curl-multi.c`: C on libcurl multi, the limit for a curl-based client.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"), // AHC's TLS settings
        // The OpenAPI transports CourierTransport is measured against.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierBench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                // The tests' generated client (Tests/OpenAPINotes), whose getSample is nginx's file.
                .product(name: "OpenAPINotes", package: "Courier"),
                "CMallocStats",
            ]
        ),
        .target(name: "CMallocStats"),
        .executableTarget(
            name: "CourierBenchmarks",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CourierBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

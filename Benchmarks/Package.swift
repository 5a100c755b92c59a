// swift-tools-version:6.1
import PackageDescription

// Measurements live here, apart from the tests: a separate package on the root by path.
let package = Package(
    name: "CourierBenchmarks",
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "CourierBench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for parsers that need the Courier module (the JSON parser, URI templates),
// the public request surface (URLs, methods, headers, bodies users hand to `send`), what servers
// answer (statuses, headers, bodies, through every operation; and as raw bytes on a socket), `courier
// load`'s inputs (scenarios, data files, checks, thresholds, templated URLs), signed URLs and
// POST policies, a sign-in's loopback listener, or the generator (discovery documents). Build
// only through Fuzz/run.sh, which adds -sanitize=fuzzer,address; libFuzzer supplies `main`,
// hence -parse-as-library.
let fuzzer: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "CourierFuzz",
    dependencies: [.package(name: "Courier", path: "..")],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzURITemplate", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzRequest", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzResponse", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzWire", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzLoad", dependencies: ["FuzzDriver", .product(name: "CourierLoad", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzSigning", dependencies: ["FuzzDriver", .product(name: "Courier", package: "Courier"),
                                                            .product(name: "GoogleStorage", package: "Courier")],
                          swiftSettings: fuzzer),
        .executableTarget(name: "FuzzDiscovery", dependencies: ["FuzzDriver", .product(name: "CourierGenerator", package: "Courier")],
                          swiftSettings: fuzzer),
    ],
    swiftLanguageModes: [.v6]
)

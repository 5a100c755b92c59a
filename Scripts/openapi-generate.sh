#!/usr/bin/env bash
# Regenerates a committed swift-openapi-generator client: FOLDER holds openapi.yaml and
# openapi-generator-config.yaml; Types.swift and Client.swift are written beside them, and the
# document's SHA-256 into openapi.yaml.sha256, which a test compares with the document.
# The generator is built once in its own package under .build (swift-syntax takes minutes), so
# neither CI nor a package using CourierOpenAPI ever builds it.
set -euo pipefail
folder=${1:?usage: Scripts/openapi-generate.sh FOLDER}
tool=.build/openapi-generator
mkdir -p "$tool"
cat > "$tool/Package.swift" <<'SWIFT'
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "openapi-generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")],
    targets: []
)
SWIFT
swift build --package-path "$tool" --product swift-openapi-generator
"$tool/.build/debug/swift-openapi-generator" generate "$folder/openapi.yaml" \
    --config "$folder/openapi-generator-config.yaml" --output-directory "$folder"
# The generator writes `package import`/`public import` and silences "import not used" with
# @diagnose, which only Swift 6.4 knows: on 6.3 each file with an unused one warns. A plain
# import says the same to a module that does not opt into InternalImportsByDefault.
sed -i -E 's/^(@_spi\(Generated\) )?(package|public) import /\1import /' "$folder"/*.swift
sha256sum "$folder/openapi.yaml" | cut -d' ' -f1 > "$folder/openapi.yaml.sha256"
echo "generated $folder/Types.swift and $folder/Client.swift"

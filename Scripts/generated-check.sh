#!/usr/bin/env bash
# Generates a client from every discovery document in a folder and compiles each as its own
# module of a throwaway package that depends on Courier; prints lines and times per document.
set -euo pipefail
DOCS=${1:?usage: generated-check.sh FOLDER}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$ROOT/.build/generated-check}
rm -rf "$WORK" && mkdir -p "$WORK/Sources"
targets=""
for doc in "$DOCS"/*.json; do
    base=$(basename "$doc" .json)                       # storage.v1
    module="Gen$(echo "${base%%.*}" | sed 's/.*/\u&/')$(echo "${base#*.}" | tr -d '.' | sed 's/.*/\u&/')"
    start=$(date +%s%N)
    "$ROOT/.build/debug/courier" generate "$doc" --module "$module" --output "$WORK/Sources/$module" 2>/dev/null
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    lines=$(cat "$WORK/Sources/$module"/*.swift | wc -l)
    printf "%-22s %-18s %7d lines  generated in %4d ms (process start included)\n" "$base" "$module" "$lines" "$ms"
    targets="$targets        .target(name: \"$module\", dependencies: [.product(name: \"Courier\", package: \"$(basename "$ROOT" | tr A-Z a-z)\")]),\n"
done
printf '// swift-tools-version:6.0\nimport PackageDescription\nlet package = Package(\n    name: "GeneratedCheck",\n    dependencies: [.package(path: "%s")],\n    targets: [\n%b    ],\n    swiftLanguageModes: [.v6]\n)\n' "$ROOT" "$targets" > "$WORK/Package.swift"
start=$(date +%s)
status=0
swift build --package-path "$WORK" > "$WORK/build.log" 2>&1 || status=$?
grep -E "^$WORK/Sources/.*(error|warning):" "$WORK/build.log" | sort -u || true
echo "built every generated module in $(( $(date +%s) - start )) s (debug): exit status $status"
[ "$status" = 0 ] && ! grep -qE "^$WORK/Sources/.*(error|warning):" "$WORK/build.log"

#!/usr/bin/env bash
# Generates a client from every Discovery document of google-api-python-client's cache (~610) and
# compiles each as its own module against the debug build's Courier, two at a time; prints
# `compiled N/M` and every error or warning. Each module goes through type checking and SIL's
# mandatory passes (definite initialization, exclusivity, unreachable code: every diagnostic
# swiftc emits) but not LLVM, which finds no source errors and would take ~4 hours here.
#
#   Scripts/generated-corpus.sh [FOLDER]     # default: the documents of the wheel, downloaded once
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$ROOT/.build/generated-corpus}
DOCS=${1:-}
if [ -z "$DOCS" ]; then
    DOCS=$WORK/wheel/googleapiclient/discovery_cache/documents
    if [ ! -d "$DOCS" ]; then
        mkdir -p "$WORK/wheel"
        python3 -m pip download --quiet --no-deps --dest "$WORK/wheel" google-api-python-client
        (cd "$WORK/wheel" && python3 -m zipfile -e google_api_python_client-*.whl .)
    fi
fi
BIN=$(cd "$ROOT" && swift build --show-bin-path)
[ -x "$BIN/courier" ] && [ -f "$BIN/Modules/Courier.swiftmodule" ] || { echo "build first: swift build --product courier" >&2; exit 2; }
rm -rf "$WORK/modules" "$WORK/results" && mkdir -p "$WORK/modules" "$WORK/results"

# The flags SwiftPM gives a target that depends on Courier: every C module's map, found rather than
# listed, so a C target added to the package cannot be missed here (SwiftPM writes the maps of
# targets with an include/ folder into the build; system modules keep theirs in Sources).
C_MODULES=""
for dir in "$ROOT"/Sources/C*/; do
    name=$(basename "$dir")
    if [ -f "$BIN/$name.build/module.modulemap" ]; then
        C_MODULES="$C_MODULES -Xcc -fmodule-map-file=$BIN/$name.build/module.modulemap -Xcc -I -Xcc $dir/include"
    elif [ -f "$dir/module.modulemap" ]; then
        C_MODULES="$C_MODULES -Xcc -fmodule-map-file=$dir/module.modulemap"
    fi
done
export FLAGS="-parse-as-library -swift-version 6 -Onone -wmo -I $BIN/Modules $C_MODULES
  -I/usr/include/x86_64-linux-gnu -module-cache-path $WORK/module-cache"
export WORK BIN

compile_one() {
    doc=$1
    base=$(basename "$doc" .json)                                   # storage.v1
    module=Gen$(echo "$base" | tr -c 'A-Za-z0-9\n' '_')             # Genstorage_v1
    out=$WORK/results/$base
    if ! "$BIN/courier" generate "$doc" --module "$module" --output "$WORK/modules/$module" 2> "$out.log"; then
        echo "generate-failed" > "$out.status"; return 0
    fi
    # shellcheck disable=SC2086
    if swiftc -emit-sil -o /dev/null -module-name "$module" $FLAGS "$WORK/modules/$module"/*.swift > "$out.log" 2>&1; then
        if grep -q "warning:" "$out.log"; then echo "warnings" > "$out.status"; else echo "ok" > "$out.status"; fi
    else
        echo "failed" > "$out.status"
    fi
    rm -rf "$WORK/modules/$module"                                  # 3.8 M lines in all: keep the disk free
}
export -f compile_one

documents=$(find "$DOCS" -name '*.json' ! -name 'index.json' | sort)
total=$(echo "$documents" | wc -l)
start=$(date +%s)
echo "$documents" | xargs -P "${JOBS:-2}" -I{} bash -c 'compile_one "$@"' _ {}
ok=$( { grep -lx ok "$WORK"/results/*.status || true; } | wc -l)   # none ok must still reach the report
for status in warnings failed generate-failed; do
    for file in $(grep -lx "$status" "$WORK"/results/*.status || true); do
        echo "== $(basename "$file" .status): $status"
        grep -E "(error|warning):" "${file%.status}.log" | head -5
    done
done
echo "compiled $ok/$total with zero warnings in $(( $(date +%s) - start )) s"
[ "$ok" = "$total" ]

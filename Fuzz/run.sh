#!/usr/bin/env bash
# Builds each libFuzzer target with `-sanitize=fuzzer,address` (the multipart parser with
# swiftc alone, the others as the Fuzz/ package) and runs it for
# FUZZ_SECONDS against its committed corpus (FUZZ_CONFIGURATION: release, the default, or debug,
# which builds in half the time and runs about half as many inputs a second: `make test` uses it) (Fuzz/corpus/<name>). New interesting inputs are
# merged into the corpus only with FUZZ_MERGE=1. A crash fails the script and leaves the input
# in .fuzz/crashes/<name>.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
CONFIGURATION=${FUZZ_CONFIGURATION:-release}
case "$CONFIGURATION" in
    release) PACKAGE_FLAGS=(-c release); OPTIMIZE=-O ;;
    # Line tables only and no index store: a crash's stack needs no more (see the Makefile's LEAN_FLAGS).
    debug) PACKAGE_FLAGS=(-c debug --disable-index-store -Xswiftc -gline-tables-only); OPTIMIZE=-Onone ;;
    *) echo "FUZZ_CONFIGURATION is release or debug, not $CONFIGURATION" >&2; exit 64 ;;
esac
# Leaks in dependencies that are not Courier's (each explained there).
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mkdir -p .fuzz/crashes

build() { # name, sources...
    local name=$1; shift
    swiftc -sanitize=fuzzer,address -parse-as-library "$OPTIMIZE" "$@" -o ".fuzz/$name" 2> ".fuzz/$name.build.log" \
        || { cat ".fuzz/$name.build.log"; exit 1; }
}

run() { # name; a name ending in -newer-libcurl runs its target on the newer libcurl, with its corpus
    local name=$1 work=".fuzz/work-$1" corpus="Fuzz/corpus/${1%-newer-libcurl}" library=()
    if [ "$name" != "${name%-newer-libcurl}" ]; then library=(env LD_LIBRARY_PATH="$NEWER_LIBCURL"); fi
    rm -rf "$work" && mkdir -p "$work" ".fuzz/crashes/$name"
    echo "== fuzzing $name for ${SECONDS_PER_TARGET}s"
    # Work of FuzzResponse's calls can outlast them by moments (a token's background refresh, an
    # upload's finished hashing task the runtime has yet to release), and LeakSanitizer reports
    # what it holds in a Data as leaked. Its memory is measured instead: flat over 20,000-60,000
    # mocked calls of each operation (Docs/Reliability.md, "Fuzzing").
    local leaks=1
    if [ "$name" = response ]; then leaks=0; fi
    # An input that runs a minute is a hang, and a finding (FuzzResponse's services wait on scripted answers).
    ASAN_OPTIONS="detect_leaks=$leaks${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    "${library[@]}" ".fuzz/$name" -max_total_time="$SECONDS_PER_TARGET" -max_len=4096 -timeout=60 -detect_leaks=$leaks -print_final_stats=1 \
        -artifact_prefix=".fuzz/crashes/$name/" "$work" "$corpus" > ".fuzz/$name.log" 2>&1 || true
    grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)|ERROR|SUMMARY" ".fuzz/$name.log" || true
    # A leak, a hang (-timeout) or running out of memory is a finding as a crash is; libFuzzer
    # stops at the first and names its input by kind. The report (its stacks) is in the log.
    local findings
    findings=$(find ".fuzz/crashes/$name" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
    if [ -n "$findings" ]; then
        echo "error: $name failed; its inputs:" >&2
        echo "$findings" >&2
        sed -n '/ERROR:/,$p' ".fuzz/$name.log" | head -120 >&2
        exit 1
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then "${library[@]}" ".fuzz/$name" -merge=1 -max_len=4096 "$corpus" "$work" >/dev/null 2>&1; fi
}

cpu_of_times() { # the CPU seconds of finished children in a file `times` wrote (in this shell: not in $(…))
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"
}
timed() { # name, command...: the command's wall and CPU time into the phase log (Scripts/phase.sh)
    local name=$1 start status=0; shift
    start=$(date +%s.%N)
    times > .fuzz/times-before
    "$@" || status=$?
    times > .fuzz/times-after
    Scripts/phase.sh --record "$name" "$start" "$status" \
        "$(awk -v a="$(cpu_of_times .fuzz/times-before)" -v b="$(cpu_of_times .fuzz/times-after)" 'BEGIN { printf "%.1f", b - a }')"
    return $status
}
timed fuzz-build-multipart build multipart Fuzz/MultipartParser/FuzzTarget.swift Sources/Courier/Batch/MultipartParser.swift \
    Sources/Courier/Support/CourierError.swift Sources/Courier/Support/CodedError.swift
# The targets that need whole modules build as the Fuzz package, every module instrumented.
timed fuzz-build-package swift build --package-path Fuzz --scratch-path .build-fuzz "${PACKAGE_FLAGS[@]}" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library > .fuzz/package.build.log 2>&1 \
    || { tail -40 .fuzz/package.build.log; exit 1; }

# libFuzzer runs one thread: the targets run a core each, as many at a time as there are cores.
run_all() {
    local names=(multipart) batch=$(nproc) status=0 i name
    for target in json:FuzzJSON uritemplate:FuzzURITemplate discovery:FuzzDiscovery request:FuzzRequest response:FuzzResponse wire:FuzzWire load:FuzzLoad signing:FuzzSigning; do
        cp ".build-fuzz/$CONFIGURATION/${target#*:}" ".fuzz/${target%%:*}"
        names+=("${target%%:*}")
    done
    # The wire target again on the newest libcurl Debian has for this release (8.14.1 on Debian 12),
    # where one service's easy handles serve input after input: handle reuse under AddressSanitizer
    # and hostile responses. (curl/curl#11101, a reused handle's use-after-free, was found so.)
    if NEWER_LIBCURL=$(Scripts/newer-libcurl.sh .build/newer-libcurl); then
        export NEWER_LIBCURL
        cp .fuzz/wire .fuzz/wire-newer-libcurl
        names+=(wire-newer-libcurl)
    else
        echo "warning: no newer libcurl to fuzz the wire on (Scripts/newer-libcurl.sh failed)" >&2
    fi
    for ((i = 0; i < ${#names[@]}; i += batch)); do
        local pids=()
        for name in "${names[@]:i:batch}"; do
            run "$name" > ".fuzz/$name.out" 2>&1 &
            pids+=($!)
        done
        for pid in "${pids[@]}"; do wait "$pid" || status=1; done
        for name in "${names[@]:i:batch}"; do cat ".fuzz/$name.out"; done
    done
    return $status
}
timed fuzz-run run_all

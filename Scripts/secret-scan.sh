#!/usr/bin/env bash
# Scans everything the test suite logged (Tests/CourierTestSupport/SuiteLog.swift writes it: each
# service's log lines at trace level, each HTTP log file, each child process's output) for test
# credentials, and fails on any hit.
#
# Test credentials carry the mark `s3kr1t` (the test token server mints tokens with it);
# secrets that cannot, such as generated private keys, are listed in <dir>/secrets/*.txt.
# Signed JWTs (self-signed service-account tokens, assertions, ID tokens) are found by their
# shape, three base64url segments of which the first two are JSON objects (`eyJ…`).
#
# So that a broken capture cannot pass as clean, the scan also requires evidence that the suite
# really logged: at least MIN_LINES lines in all, HTTP log files, and credentials snipped to
# `_snip_` (proof that authorized traffic was logged, and redacted).
#
# usage: Scripts/secret-scan.sh [dir] (default .build/test-logs); MIN_LINES=0 drops the evidence checks
set -euo pipefail
dir=${1:-.build/test-logs}
min_lines=${MIN_LINES:-1000}
marker=s3kr1t

[ -d "$dir" ] || { echo "secret-scan: $dir does not exist: the suite logged nothing" >&2; exit 1; }

patterns=$(mktemp)
trap 'rm -f "$patterns"' EXIT
echo "$marker" > "$patterns"
if compgen -G "$dir/secrets/*.txt" > /dev/null; then
    sort -u "$dir"/secrets/*.txt | grep -v '^$' >> "$patterns" || true
fi

files=$(find "$dir" -type f -not -path "$dir/secrets/*" | wc -l)
http_files=$(find "$dir/http" -type f -name '*.txt' 2>/dev/null | wc -l)
lines=$(find "$dir" -type f -not -path "$dir/secrets/*" -exec cat {} + 2>/dev/null | wc -l)
snipped=$(grep -rl --exclude-dir=secrets -F "_snip_" "$dir" 2>/dev/null | wc -l)

if hits=$(grep -rn -i -F -f "$patterns" --exclude-dir=secrets "$dir"); then
    echo "secret-scan: FAILED: test credentials in what the suite logged:" >&2
    echo "$hits" | cut -c1-400 | head -50 >&2
    echo "($(echo "$hits" | wc -l) lines)" >&2
    exit 1
fi

jwt='eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}'
if hits=$(grep -rn -E "$jwt" --exclude-dir=secrets "$dir"); then
    echo "secret-scan: FAILED: signed JWTs in what the suite logged:" >&2
    echo "$hits" | cut -c1-400 | head -50 >&2
    echo "($(echo "$hits" | wc -l) lines)" >&2
    exit 1
fi

if [ "$min_lines" -gt 0 ]; then
    if [ "$lines" -lt "$min_lines" ] || [ "$http_files" -eq 0 ] || [ "$snipped" -eq 0 ]; then
        echo "secret-scan: FAILED: too little was logged to trust the scan" \
             "($lines lines, $http_files HTTP log files, $snipped files with snipped credentials)" >&2
        exit 1
    fi
fi

echo "secret-scan: clean: $lines lines in $files files ($http_files HTTP log files, $snipped with snipped credentials)," \
     "searched for the mark, signed JWTs and $(($(wc -l < "$patterns") - 1)) registered secrets"

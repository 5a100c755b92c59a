#!/usr/bin/env bash
# Scripts/phase.sh NAME COMMAND [ARG...]: runs COMMAND and appends its wall time to the phase log
# ($PHASE_LOG, default .build/phase-times.tsv) as "NAME<TAB>seconds<TAB>exit status<TAB>CPU
# seconds<TAB>MiB of build folders<TAB>MiB free", so a CI run can say where its time went, how busy
# the cores were meanwhile, and how much disk its builds held after each phase (CI's disk has no
# set size: one run failed with "No space left on device"). `Scripts/phase.sh --report` prints the
# table, and after it what each failed phase said went wrong (FAILURES below). A script times its
# own shell functions with `Scripts/phase.sh --record NAME START STATUS` (START from date +%s.%N).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log=${PHASE_LOG:-$root/.build/phase-times.tsv}
# A failed phase's own failure lines, printed again by --report: a CI service shows a failed run's
# last lines, and the suite runs its tests in parallel, so the line naming the failed test and its
# expectation came minutes before the end (one official ThreadSanitizer run showed only "851 tests
# ... failed ... with 1 issue", with no test named).
failures=${log%.tsv}-failures.txt
if [ "${1:-}" = --report ]; then
    [ -f "$log" ] || exit 0
    cores=$(nproc 2>/dev/null || echo 1)
    printf '  %-28s %7s %9s %6s %9s %9s\n' phase wall CPU busy builds free
    awk -F'\t' -v cores="$cores" '{ total += $2; cpu += $4; if ($5 > peak) peak = $5; if (NR == 1 || $6 < least) least = $6
        printf "  %-28s %6.0fs %8.0fs %5.0f%% %6.1fGiB %6.1fGiB%s\n", $1, $2, $4, ($2 > 0 ? 100 * $4 / ($2 * cores) : 0), $5 / 1024, $6 / 1024, ($3 == 0 ? "" : "  (exit " $3 ")") }
        END { printf "  %-28s %6.0fs %8.0fs %5.0f%% %6.1fGiB %6.1fGiB  (%d min; builds at most, free at least)\n", "total", total, cpu, (total > 0 ? 100 * cpu / (total * cores) : 0), peak / 1024, least / 1024, total / 60 }' "$log"
    if [ -s "$failures" ]; then echo "== what failed"; cat "$failures"; fi
    exit 0
fi
# MiB the checkout's build folders hold, and MiB free on its file system.
disk() {
    local used
    used=$(du -sm "$root"/.build* "$root"/.fuzz 2>/dev/null | awk '{ m += $1 } END { print m + 0 }')
    printf '%s\t%s' "$used" "$(df -Pm "$root" | awk 'NR == 2 { print $4 }')"
}
record() { # name start status [cpu seconds]
    mkdir -p "$(dirname "$log")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$(awk -v a="$2" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$3" "${4:-0}" "$(disk)" >> "$log"
}
# The CPU seconds (user + system) of this shell's finished children, from the `times` builtin.
# `times` must run in this shell itself: in a pipeline or $(…) it reports a subshell's children.
cpu_of_times() { # the file `times` wrote
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"
}
if [ "${1:-}" = --record ]; then record "$2" "$3" "$4" "${5:-0}"; exit 0; fi
name=$1; shift
start=$(date +%s.%N)
# The output goes on to the terminal as it comes and into a file, for the failure lines.
output=$(mktemp)
"$@" 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    # Swift Testing's issue lines (and the detail lines under them), XCTest's failures, compiler
    # errors, a sanitizer's verdict and Swift's runtime traps: at most 40 lines a phase.
    { echo "-- $name (exit $status)"
      awk '/recorded an issue/ { print; detail = 1; next }
           detail && /^[[:space:]]*↳/ { print; next }
           { detail = 0 }
           /: error: |error: .* failed|Fatal error|^SUMMARY: (Thread|Address)Sanitizer|Test run with .* failed|Executed .* with [1-9][0-9]* failure/' "$output" | head -n 40
    } >> "$failures"
fi
rm -f "$output"
times_file=$(mktemp)
times > "$times_file"
record "$name" "$start" "$status" "$(cpu_of_times "$times_file")"
rm -f "$times_file"
exit $status

#!/usr/bin/env bash
# Scripts/phase.sh NAME COMMAND [ARG...]: runs COMMAND and appends its wall time to the phase log
# ($PHASE_LOG, default .build/phase-times.tsv) as "NAME<TAB>seconds<TAB>exit status", so a CI
# run can say where its time went (`Scripts/phase.sh --report` prints the table). A script times
# its own shell functions with `Scripts/phase.sh --record NAME START STATUS` (START from date +%s.%N).
set -uo pipefail
log=${PHASE_LOG:-$(cd "$(dirname "$0")/.." && pwd)/.build/phase-times.tsv}
if [ "${1:-}" = --report ]; then
    [ -f "$log" ] || exit 0
    awk -F'\t' '{ total += $2; printf "  %-28s %7.0f s%s\n", $1, $2, ($3 == 0 ? "" : "  (exit " $3 ")") }
        END { printf "  %-28s %7.0f s (%d min)\n", "total", total, total / 60 }' "$log"
    exit 0
fi
record() { # name start status
    mkdir -p "$(dirname "$log")"
    printf '%s\t%s\t%s\n' "$1" "$(awk -v a="$2" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$3" >> "$log"
}
if [ "${1:-}" = --record ]; then record "$2" "$3" "$4"; exit 0; fi
name=$1; shift
start=$(date +%s.%N)
"$@"
status=$?
record "$name" "$start" "$status"
exit $status

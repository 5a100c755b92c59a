#!/usr/bin/env bash
# Compares Courier's two loop backends (epoll socket interface vs curl_multi_poll) at several
# depths against one URL; prints the median of RUNS runs for each. Used for Docs/Architecture.md.
set -euo pipefail
URL=${1:?usage: loop-backends.sh URL}
RUNS=${RUNS:-3}
BENCH=${BENCH:-.build/release/CourierBench}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-22s %-10s %12s %14s\n" "in flight/connections" backend "requests/s" "cpu-us/request"
for depth in "1 1" "64 64" "512 256" "2048 512"; do
    set -- $depth
    for backend in epoll multipoll; do
        results=$(for _ in $(seq "$RUNS"); do
            "$BENCH" load --url "$URL" -c "$1" --connections "$2" -d 3 --executor loop --backend "$backend"
        done)
        rps=$(echo "$results" | awk '{print $2}' | median)
        cpu=$(echo "$results" | awk '{print $4}' | median)
        printf "%-22s %-10s %12s %14s\n" "$1/$2" "$backend" "$rps" "$cpu"
    done
done

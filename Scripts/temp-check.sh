#!/usr/bin/env bash
# Fails if the suite left anything in its temporary folder (`make test` points TMPDIR there):
# key files, browser folders, servers' file stores. SwiftPM's own locks and folders are not ours.
set -euo pipefail
dir=${1:?usage: temp-check.sh FOLDER}
leftovers=$(find "$dir" -mindepth 1 -maxdepth 1 ! -name 'TemporaryDirectory.*' ! -name '*.lock' -printf '%f\n' | sort)
if [ -n "$leftovers" ]; then
    echo "temp-check: the suite left these in its temporary folder ($dir):"
    echo "$leftovers" | sed -E 's/^/  /'
    exit 1
fi
echo "temp-check: the suite left nothing behind"

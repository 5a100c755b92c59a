#!/usr/bin/env bash
# Makes a real load report and has headless Chromium check it (Scripts/report-check.py):
#   Scripts/report-check.sh [COURIER_BINARY] [OUT_DIR]
# A 6-second open-model run against `courier serve` (a mix with a slow endpoint, 503s and a
# create/read/delete flow with checks, so every chart and table has something to show; its rate
# ramps in stages, so the stage marks show), then the
# browser check in a light and a dark page; then a second run with the slow endpoint slower,
# and the `courier load compare` page of the two, checked the same way.
set -euo pipefail
courier=${1:-.build/debug/courier}
out=${2:-.build/report-check}
mkdir -p "$out"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$courier" serve --port "$port" > "$out/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "courier test server on" "$out/serve.log" && break; sleep 0.1; done
base="http://127.0.0.1:$port"
cat > "$out/mix.json" <<JSON
[{"name": "small", "url": "$base/json/256", "weight": 6},
 {"name": "slow", "url": "$base/delay/20", "weight": 2},
 {"name": "unavailable", "url": "$base/status/503", "weight": 1},
 {"name": "echo", "method": "POST", "url": "$base/echo", "body": "{\"x\": 1}", "weight": 1},
 {"name": "notes", "weight": 1, "flow": [
   {"name": "create", "method": "POST", "url": "$base/notes/v1/notes", "body": "{\"title\": \"{{uuid}}\"}",
    "extract": {"id": "json:\$.id"}, "checks": ["status==200"]},
   {"name": "read", "url": "$base/notes/v1/notes/{{id}}", "checks": ["json:\$.title"]},
   {"name": "delete", "method": "DELETE", "url": "$base/notes/v1/notes/{{id}}"}]}]
JSON
status=0
"$courier" load --scenario "$out/mix.json" --rate 100 --stage 2s:400/s --stage 4s:400/s -c 64 \
    --threshold 'p99<100ms' --threshold 'errors<5%' --threshold 'stage=2:p99<100ms' \
    --report "$out/report.html" --output "$out/result.json" || status=$?
[ "$status" = 0 ] || [ "$status" = 99 ] || { echo "report-check: courier load failed ($status)"; exit 1; }
python3 Scripts/report-check.py "$out/report.html" "$out" 2

# The same mix with the slow endpoint 20 ms slower: compare exits 99 (p99 got worse) and the
# page draws both runs in every chart.
sed 's|/delay/20"|/delay/40"|' "$out/mix.json" > "$out/mix-slower.json"
status=0
"$courier" load --scenario "$out/mix-slower.json" --rate 100 --stage 2s:400/s --stage 4s:400/s -c 64 \
    --output "$out/result-slower.json" > /dev/null || status=$?
[ "$status" = 0 ] || { echo "report-check: the second courier load failed ($status)"; exit 1; }
status=0
"$courier" load compare "$out/result.json" "$out/result-slower.json" --report "$out/compare.html" || status=$?
[ "$status" = 0 ] || [ "$status" = 99 ] || { echo "report-check: courier load compare failed ($status)"; exit 1; }
python3 Scripts/report-check.py "$out/compare.html" "$out" compare

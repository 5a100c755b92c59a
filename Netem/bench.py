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
import bench  # noqa: E402  (the harness's clients and parsers)

http_url, tls_url, server_url, files_url, site = sys.argv[1:6]
IN_FLIGHT = 1000
bench.PROTOCOLS["http"] = (http_url, [], [])
bench.PROTOCOLS["h2"] = (tls_url, ["--insecure", "--http-version", "2"], ["insecure", "http2"])
subprocess.run(["gcc", "-O2", "-o", bench.CURL_C, os.path.join(bench.ROOT, "Benchmarks", "Baselines", "curl-multi.c"), "-lcurl"],
               check=True)


def median(measure):
    runs = []
    for _ in range(bench.ROUNDS):
        try:
            runs.append(measure())
        except RuntimeError as error:
            bench.log(f"  failed: {error}")
    return tuple(statistics.median(r[i] for r in runs) for i in range(3)) if runs else None


def courier_load(protocol):
    """The `courier` CLI itself: on HTTP/2 with one connection, as the other clients."""
    url = bench.PROTOCOLS[protocol][0]
    flags = ["--http2", "-k", "--connections", "1"] if protocol == "h2" else []

    def measure():
        out, cpu, rss = bench.run_measured([bench.COURIER, "load", url, "-c", str(IN_FLIGHT), "-d", f"{bench.SECONDS:.0f}s",
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
    cases = [("C libcurl multi", bench.c_client(IN_FLIGHT, protocol)),
             ("Courier", bench.bench_client("courier", IN_FLIGHT, protocol=protocol)),
             ("AsyncHTTPClient", bench.bench_client("ahc", IN_FLIGHT, protocol=protocol)),
             ("courier load", courier_load(protocol))]
    results = {}
    for name, measure in cases:
        bench.log(f"netem bench: {name}, {IN_FLIGHT} in flight, {label}")
        results[name] = median(measure)
    c = results["C libcurl multi"]
    groups.append((label, [(name, result) for name, result in results.items() if result]))
    for name, result in results.items():
        if result:
            rows.append(f"| {label} | {name} | {result[0]:,.0f} | {result[0] / c[0]:.2f}× | {result[1]:.1f} | {result[2]:.0f} |" if c else
                        f"| {label} | {name} | {result[0]:,.0f} | – | {result[1]:.1f} | {result[2]:.0f} |")
        else:
            rows.append(f"| {label} | {name} | failed | | | |")

print(f"Across 25 ms RTT (no loss), {IN_FLIGHT} requests in flight, median of {bench.ROUNDS} runs of {bench.SECONDS:.0f} s:\n")
print("| protocol | client | requests/s | vs C | CPU µs/request | peak RSS MiB |")
print("|---|---|---:|---:|---:|---:|")
print("\n".join(rows))
if groups and not ONLY:
    chart = os.environ.get("NETEM_BENCH_CHART", os.path.join(bench.ROOT, "Docs", "netem-bench.svg"))
    bench.render_chart(groups, chart, title=f"Across 25 ms RTT, {IN_FLIGHT} requests in flight (median of {bench.ROUNDS} runs)")
    bench.log(f"chart: {chart}")

# 1 GiB each way.
if ONLY and ONLY != "transfers":
    sys.exit(0)
big = os.path.join(site, "files", "1g.bin")
os.makedirs(os.path.dirname(big), exist_ok=True)
subprocess.run(["head", "-c", str(1 << 30), "/dev/urandom"], stdout=open(big, "wb"), check=True)
print()
for argv in ([bench.BENCH, "upload", "--url", server_url, "--mebibytes", "1024", "--runs", "1"],
             [bench.BENCH, "download", "--url", f"{files_url}/files/1g.bin", "--runs", "1", "--slices", "4"]):
    bench.log("netem bench: " + " ".join(argv[1:2]))
    process = subprocess.run(argv, capture_output=True, text=True)
    print(process.stdout.strip().splitlines()[-1] if process.returncode == 0 and process.stdout.strip() else
          f"{argv[1]} failed ({process.returncode}): {process.stderr[-500:]}")
os.remove(big)

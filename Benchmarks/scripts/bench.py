#!/usr/bin/env python3
"""`make bench`: Courier against libcurl in C, AsyncHTTPClient, URLSession and wrk, in one run.

Starts nginx (Debian's) on 127.0.0.1 serving a 1 KB JSON file with keep-alive, then runs every
client against it, interleaved, BENCH_ROUNDS times (default 3) for BENCH_SECONDS each (default 5),
and prints medians: requests/s, client CPU µs per request, peak RSS, and ratios to Courier.
Then the 10,000-in-flight probe against the test server in its own process.

Results also go to bench-results/ (git-ignored) as JSON and Markdown.
"""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
PORT = int(os.environ.get("BENCH_PORT", "18080"))
URL = f"http://127.0.0.1:{PORT}/data.json"
WORK = os.path.join(ROOT, ".build", "bench")
BENCH = os.path.join(ROOT, "Benchmarks", ".build", "release", "CourierBench")
COURIER = os.path.join(ROOT, ".build", "release", "courier")
CURL_C = os.path.join(WORK, "curl-multi")


def log(message):
    print(message, file=sys.stderr, flush=True)


def build():
    os.makedirs(WORK, exist_ok=True)
    if os.environ.get("BENCH_SKIP_BUILD"):  # reuse the release binaries already built
        subprocess.run(["gcc", "-O2", "-o", CURL_C, os.path.join(ROOT, "Benchmarks", "Baselines", "curl-multi.c"), "-lcurl"],
                       check=True)
        return
    log("building: courier (release), CourierBench (release), the C baseline")
    subprocess.run(["swift", "build", "-c", "release", "--product", "courier"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["swift", "build", "-c", "release", "--product", "CourierBench"], cwd=os.path.join(ROOT, "Benchmarks"),
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["gcc", "-O2", "-o", CURL_C, os.path.join(ROOT, "Benchmarks", "Baselines", "curl-multi.c"), "-lcurl"],
                   check=True)


def start_nginx():
    """One worker process, so the client under test keeps the other core."""
    prefix = tempfile.mkdtemp(prefix="courier-nginx-")
    os.chmod(prefix, 0o755)  # nginx's worker runs as nobody when started by root
    body = '{"kind":"courier#sample","items":[' + ",".join(
        '{"id":"note-%d","title":"A note"}' % i for i in range(20)) + '],"padding":"'
    body += "x" * (1024 - len(body) - 2) + '"}'
    assert len(body) == 1024
    with open(os.path.join(prefix, "data.json"), "w") as f:
        f.write(body)
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{PORT} backlog=4096;
        root {prefix};
        location / {{ default_type application/json; }}
    }}
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen([nginx, "-p", prefix, "-c", conf, "-g", "daemon off;"])
    for _ in range(100):
        try:
            out = subprocess.run(["curl", "-s", URL], capture_output=True, timeout=2).stdout
            if len(out) == 1024:
                return process, prefix
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.05)
    process.terminate()
    raise SystemExit("nginx did not start (see %s/error.log)" % prefix)


def run(argv):
    """Runs a command to completion; returns its stdout."""
    process = subprocess.run(argv, capture_output=True, text=True)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}): {process.stderr[-2000:]}")
    return process.stdout


def run_measured(argv):
    """Like run(), but reaps the child itself to read its own CPU time and peak RSS."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}")
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


SELF_REPORTED = re.compile(r"requests/s (\d+)\s+cpu-us/request ([\d.]+)\s+peak-rss-MiB ([\d.]+)")


def self_reported(argv):
    out, _, rss = run_measured(argv)
    match = SELF_REPORTED.search(out)
    if not match:
        raise RuntimeError(f"unexpected output from {argv[0]}: {out}")
    return float(match.group(1)), float(match.group(2)), rss


def wrk(connections):
    def measure():
        out, cpu, rss = run_measured(["wrk", "-t1", f"-c{connections}", f"-d{int(SECONDS)}s", URL])
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        total = int(re.search(r"(\d+) requests in", out).group(1))
        return rps, cpu / total * 1e6, rss
    return measure


def courier_load(in_flight):
    def measure():
        out, cpu, rss = run_measured([COURIER, "load", URL, "-c", str(in_flight), "-d", f"{SECONDS}s", "--json"])
        result = json.loads(out)
        if result["errors"]:
            raise RuntimeError(f"courier load saw errors: {result['statusCodes']} {result['errorKinds']}")
        return result["requestsPerSecond"], cpu / result["requests"] * 1e6, rss
    return measure


def bench_client(client, in_flight, executor="loop"):
    argv = [BENCH, "load", "--url", URL, "-c", str(in_flight), "--connections", str(in_flight), "-d", str(SECONDS),
            "--client", client, "--executor", executor]
    return lambda: self_reported(argv)


def c_client(in_flight):
    return lambda: self_reported([CURL_C, URL, str(in_flight), str(SECONDS)])


CASES = [
    # (label, in flight, measure)
    ("Courier (loop executor)", 64, bench_client("courier", 64)),
    ("Courier (default executor)", 64, bench_client("courier", 64, "default")),
    ("C libcurl multi", 64, c_client(64)),
    ("AsyncHTTPClient", 64, bench_client("ahc", 64)),
    ("URLSession", 64, bench_client("urlsession", 64)),
    ("wrk -t1", 64, wrk(64)),
    ("courier load", 64, courier_load(64)),
    ("Courier (loop executor)", 1, bench_client("courier", 1)),
    ("Courier (default executor)", 1, bench_client("courier", 1, "default")),
    ("C libcurl multi", 1, c_client(1)),
    ("AsyncHTTPClient", 1, bench_client("ahc", 1)),
    ("URLSession", 1, bench_client("urlsession", 1)),
]


def inflight_probe():
    server = subprocess.Popen([BENCH, "serve"], stdout=subprocess.PIPE, text=True)
    try:
        base = server.stdout.readline().strip()
        out = run([BENCH, "inflight", "--url", f"{base}/delay/2000", "--queries", "10000", "--connections", "1000"])
        return out.strip()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()


def main():
    build()
    nginx, prefix = start_nginx()
    samples = {(label, n): [] for label, n, _ in CASES}
    try:
        for round_number in range(1, ROUNDS + 1):
            for label, n, measure in CASES:
                log(f"round {round_number}/{ROUNDS}: {label}, {n} in flight")
                samples[(label, n)].append(measure())
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(prefix, ignore_errors=True)

    medians = {key: tuple(statistics.median(s[i] for s in values) for i in range(3)) for key, values in samples.items()}
    lines = [f"GET {URL} (1 KB JSON, nginx, 1 worker, keep-alive); median of {ROUNDS} runs of {SECONDS:g} s; "
             f"{os.cpu_count()} cores",
             "",
             "| client | in flight | requests/s | CPU µs/request | peak RSS MiB | req/s vs Courier | CPU vs Courier |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, n, _ in CASES:
        rps, cpu, rss = medians[(label, n)]
        base_rps, base_cpu, _ = medians[("Courier (loop executor)", n)]
        lines.append(f"| {label} | {n} | {rps:,.0f} | {cpu:.1f} | {rss:.1f} | {rps / base_rps:.2f}× | {cpu / base_cpu:.2f}× |")
    lines.append("")
    lines.append("CPU for wrk and `courier load` is the whole process (start-up included); the others measure their "
                 "measured window after a 1 s warm-up. Peak RSS is the whole process.")

    def ratio(a, b, column=0):
        return medians[a][column] / medians[b][column]
    courier64, c64 = ("Courier (loop executor)", 64), ("C libcurl multi", 64)
    targets = [
        ("64 in flight: Courier ≥ 0.9× C req/s", ratio(courier64, c64), 0.9, True),
        ("64 in flight: Courier ≥ 1.6× AsyncHTTPClient req/s", ratio(courier64, ("AsyncHTTPClient", 64)), 1.6, True),
        ("64 in flight: Courier CPU/request ≤ 1.3× C", ratio(courier64, c64, 1), 1.3, False),
        ("1 in flight: Courier ≥ 0.9× C req/s", ratio(("Courier (loop executor)", 1), ("C libcurl multi", 1)), 0.9, True),
        ("courier load ≥ 0.9× C req/s", ratio(("courier load", 64), c64), 0.9, True),
        ("courier load ≥ 0.65× wrk req/s", ratio(("courier load", 64), ("wrk -t1", 64)), 0.65, True),
    ]
    lines += ["", "| target | measured | holds |", "|---|---:|:---:|"]
    for name, value, limit, at_least in targets:
        holds = value >= limit if at_least else value <= limit
        lines.append(f"| {name} | {value:.2f}× | {'yes' if holds else 'NO'} |")

    log("10,000 queries in flight (test server in its own process, /delay/2000, 1,000 connections)")
    probe = inflight_probe()
    fields = dict(re.findall(r"([a-z/-]+) ([\d.-]+)", probe))
    lines += ["", "10,000 in flight: " + probe]
    if fields:
        threads_before = int(fields.get("threads-before", 0))
        during = fields.get("threads-during", "0-0").split("-")
        lines.append(f"completed: {fields.get('succeeded') == '10000'}; thread count constant: "
                     f"{int(during[0]) == threads_before == int(during[1])}; "
                     f"≤ 4 KiB per query: {float(fields.get('bytes/query', 1e9)) <= 4096}")

    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(ROOT, "bench-results"), exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(ROOT, "bench-results", f"bench-{stamp}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(ROOT, "bench-results", f"bench-{stamp}.json"), "w") as f:
        json.dump({"rounds": ROUNDS, "seconds": SECONDS,
                   "samples": {f"{label} @{n}": values for (label, n), values in samples.items()},
                   "inflight": probe}, f, indent=2)


if __name__ == "__main__":
    main()

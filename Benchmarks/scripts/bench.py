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
TLS_PORT = int(os.environ.get("BENCH_TLS_PORT", "18443"))
URL = f"http://127.0.0.1:{PORT}/data.json"
TLS_URL = f"https://127.0.0.1:{TLS_PORT}/data.json"
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
    os.makedirs(os.path.join(prefix, "json"))  # the same file where the ordo-one suite asks for it
    with open(os.path.join(prefix, "json", "1024"), "w") as f:
        f.write(body)
    # A self-signed certificate: every client skips verification, which costs only at the handshake.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-keyout", os.path.join(prefix, "key.pem"), "-out", os.path.join(prefix, "cert.pem")],
                   check=True, capture_output=True)
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
    server {{
        listen 127.0.0.1:{TLS_PORT} ssl http2 backlog=4096;
        ssl_certificate {prefix}/cert.pem;
        ssl_certificate_key {prefix}/key.pem;
        http2_max_concurrent_streams 256;
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
            tls = subprocess.run(["curl", "-sk", TLS_URL], capture_output=True, timeout=2).stdout
            if len(out) == 1024 and len(tls) == 1024:
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


SELF_REPORTED = re.compile(r"requests/s (\d+)\s+cpu-us/request ([\d.]+)\s+peak-rss-MiB ([\d.]+)\s+requests \d+\s+errors (\d+)")


def self_reported(argv):
    out, _, rss = run_measured(argv)
    match = SELF_REPORTED.search(out)
    if not match:
        raise RuntimeError(f"unexpected output from {argv[0]}: {out}")
    if int(match.group(4)):
        raise RuntimeError(f"{argv[0]} saw {match.group(4)} errors: {out}")
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


# The protocols: plain HTTP/1.1; HTTPS/1.1 with a connection per request in flight; HTTP/2 over TLS
# with every stream multiplexed on one connection.
PROTOCOLS = {
    "http": (URL, [], []),
    "https/1.1": (TLS_URL, ["--insecure", "--http-version", "1.1"], ["insecure", "http1"]),
    "h2": (TLS_URL, ["--insecure", "--http-version", "2"], ["insecure", "http2"]),
}


def bench_client(client, in_flight, executor="loop", protocol="http"):
    url, flags, _ = PROTOCOLS[protocol]
    connections = 1 if protocol == "h2" else in_flight
    argv = [BENCH, "load", "--url", url, "-c", str(in_flight), "--connections", str(connections), "-d", str(SECONDS),
            "--client", client, "--executor", executor, *flags]
    return lambda: self_reported(argv)


def c_client(in_flight, protocol="http"):
    url, _, args = PROTOCOLS[protocol]
    return lambda: self_reported([CURL_C, url, str(in_flight), str(SECONDS), *args])


LOOP, DEFAULT, C, AHC, LOAD = ("Courier (loop executor)", "Courier (default executor)", "C libcurl multi",
                               "AsyncHTTPClient", "courier load")
GLOBAL = "Courier (global pool)"  # tasks that inherit nothing from the service: a server's handlers
CASES = [
    # (label, in flight, protocol, measure)
    (LOOP, 64, "http", bench_client("courier", 64)),
    (DEFAULT, 64, "http", bench_client("courier", 64, "default")),
    (GLOBAL, 64, "http", bench_client("courier", 64, "global")),
    (C, 64, "http", c_client(64)),
    (AHC, 64, "http", bench_client("ahc", 64)),
    ("URLSession", 64, "http", bench_client("urlsession", 64)),
    ("wrk -t1", 64, "http", wrk(64)),
    (LOAD, 64, "http", courier_load(64)),
    (LOOP, 1, "http", bench_client("courier", 1)),
    (DEFAULT, 1, "http", bench_client("courier", 1, "default")),
    (GLOBAL, 1, "http", bench_client("courier", 1, "global")),
    (C, 1, "http", c_client(1)),
    (AHC, 1, "http", bench_client("ahc", 1)),
    ("URLSession", 1, "http", bench_client("urlsession", 1)),
    (LOAD, 1, "http", courier_load(1)),
    (LOOP, 64, "https/1.1", bench_client("courier", 64, protocol="https/1.1")),
    (DEFAULT, 64, "https/1.1", bench_client("courier", 64, "default", protocol="https/1.1")),
    (C, 64, "https/1.1", c_client(64, "https/1.1")),
    (AHC, 64, "https/1.1", bench_client("ahc", 64, protocol="https/1.1")),
    (LOOP, 64, "h2", bench_client("courier", 64, protocol="h2")),
    (DEFAULT, 64, "h2", bench_client("courier", 64, "default", protocol="h2")),
    (C, 64, "h2", c_client(64, "h2")),
    (AHC, 64, "h2", bench_client("ahc", 64, protocol="h2")),
]
if os.environ.get("BENCH_ONLY"):  # a comma-separated subset of protocols, for quick comparisons
    CASES = [case for case in CASES if case[2] in os.environ["BENCH_ONLY"].split(",")]


def inflight_probe():
    """QUERIES queries at once in one task group, 1,000 connections, against a route that answers
    after DELAY ms: every query exists at once (the rest wait in the admission queue)."""
    queries = int(os.environ.get("BENCH_INFLIGHT_QUERIES", "100000"))
    delay = int(os.environ.get("BENCH_INFLIGHT_DELAY_MS", "200"))
    server = subprocess.Popen([BENCH, "serve"], stdout=subprocess.PIPE, text=True)
    try:
        base = server.stdout.readline().strip()
        out = run([BENCH, "inflight", "--url", f"{base}/delay/{delay}", "--queries", str(queries), "--connections", "1000"])
        return queries, out.strip()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()


PROTOCOL_TITLES = {"http": "HTTP/1.1, plain", "https/1.1": "HTTPS/1.1 (TLS, a connection per request in flight)",
                   "h2": "HTTP/2 over TLS (every stream on one connection)"}


def per_request_counts():
    """Voluntary context switches (getrusage of the child) and system calls (`strace -f -c`)
    per request, over fixed runs: C, the plain path and the loop path, 1 and 64 in flight."""
    requests = int(os.environ.get("BENCH_COUNT_REQUESTS", "20000"))
    traced = max(1000, requests // 4)  # strace slows every call: fewer requests
    counts = {}
    for n in (1, 64):
        runs = [(C, [CURL_C, URL, str(n), "0", f"requests={{}}"]),
                (DEFAULT, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "default",
                           "--requests", "{}"]),
                (LOOP, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "loop",
                        "--requests", "{}"])]
        for label, template in runs:
            argv = [part.format(requests) for part in template]
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, usage = os.wait4(process.pid, 0)
            switches = usage.ru_nvcsw / requests
            calls = None
            if shutil.which("strace"):
                summary = os.path.join(WORK, "strace.txt")
                subprocess.run(["strace", "-f", "-c", "-o", summary, *[part.format(traced) for part in template]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                with open(summary) as f:
                    total = [line.split() for line in f if line.rstrip().endswith("total")]
                calls = int(total[0][3]) / traced if total else None
            counts[(label, n)] = (switches, calls)
    return counts


def idle_cpu():
    """CPU of a service that sends nothing for 10 s, in percent of one core."""
    out = run([BENCH, "idle", "--url", URL, "--seconds", os.environ.get("BENCH_IDLE_SECONDS", "10")])
    return float(re.search(r"cpu-percent ([\d.]+)", out).group(1))


def targets(medians, counts, probe, per_request=None, idle=None):
    """The issue's targets: (name, measured text, holds)."""
    def ratio(a, b, column=0):
        if a not in medians or b not in medians:
            return None
        return medians[a][column] / medians[b][column]

    rows = []

    def at_least(name, value, limit):
        if value is not None:
            rows.append((name, f"{value:.2f}×", value >= limit))

    def at_most(name, value, limit):
        if value is not None:
            rows.append((name, f"{value:.2f}×", value <= limit))

    at_least("`send` from ordinary tasks (default executor), 64 in flight: ≥ 0.85× C req/s",
             ratio((DEFAULT, 64, "http"), (C, 64, "http")), 0.85)
    at_least("same, 1 in flight: ≥ 0.8× C", ratio((DEFAULT, 1, "http"), (C, 1, "http")), 0.8)
    for n in (64, 1):
        at_least(f"plain path against AsyncHTTPClient, {n} in flight: ≥ 1.6×",
                 ratio((DEFAULT, n, "http"), (AHC, n, "http")), 1.6)
    at_most("plain path, CPU per request, 64 in flight: ≤ 1.3× C", ratio((DEFAULT, 64, "http"), (C, 64, "http"), 1), 1.3)
    for n in (64, 1):
        at_least(f"loop executor, {n} in flight: ≥ 0.95× C", ratio((LOOP, n, "http"), (C, n, "http")), 0.95)
        at_least(f"courier load, {n} in flight: ≥ 0.95× C", ratio((LOAD, n, "http"), (C, n, "http")), 0.95)
    if per_request:
        for n, switch_limit, call_limit in ((1, 1.5, 7), (64, 0.05, 4.5)):
            switches, _ = per_request[(DEFAULT, n)]
            rows.append((f"context switches per request, plain path, {n} in flight: ≤ {switch_limit}",
                         f"{switches:.2f} (C {per_request[(C, n)][0]:.2f})", switches <= switch_limit))
            for label, path in ((DEFAULT, "plain path"), (LOOP, "loop path")):
                _, calls = per_request[(label, n)]
                if calls is not None:
                    rows.append((f"system calls per request, {path}, {n} in flight: ≤ {call_limit}",
                                 f"{calls:.1f} (C {per_request[(C, n)][1]:.1f})", calls <= call_limit))
    for protocol, title in (("https/1.1", "HTTPS/1.1"), ("h2", "HTTP/2 over TLS, 64 streams")):
        at_least(f"{title}: ≥ 0.9× C", ratio((LOOP, 64, protocol), (C, 64, protocol)), 0.9)
        at_least(f"{title}: ≥ 1.6× AsyncHTTPClient", ratio((LOOP, 64, protocol), (AHC, 64, protocol)), 1.6)
    at_most("HTTP/2 over TLS: CPU per request within 10% of HTTPS/1.1's (loop executor, 64)",
            ratio((LOOP, 64, "h2"), (LOOP, 64, "https/1.1"), 1), 1.1)
    if counts:
        for label, mode in ((LOOP, "loop executor"), (DEFAULT, "default executor")):
            value = counts[(label, 64)] / counts[(C, 64)]
            rows.append((f"instructions per request, {mode}, 64: ≤ 1.25× C", f"{value:.2f}×", value <= 1.25))
    if probe:
        queries, text = probe
        fields = dict(re.findall(r"([a-z/-]+) ([\d.-]+)", text))
        during = fields.get("threads-during", "0-0").split("-")
        flat = int(during[0]) == int(fields.get("threads-before", -1)) == int(during[1])
        per_query = float(fields.get("bytes/query", 1e9))
        complete = fields.get("succeeded") == str(queries)
        rows.append((f"{queries:,} in flight (1,000 connections): all succeed, threads flat, ≤ 3 KiB per query",
                     f"{fields.get('succeeded')} ok, threads {fields.get('threads-before')} → {during[0]}–{during[1]}, "
                     f"{per_query / 1024:.1f} KiB", complete and flat and per_query <= 3072))
    if idle is not None:
        rows.append(("idle service (no requests for 10 s): ≤ 1% of one core", f"{idle:.3f}%", idle <= 1.0))
    return rows


def chart(medians, path):
    """Requests/s and CPU µs per request for each client and case, as a self-contained SVG."""
    groups = []
    for protocol in PROTOCOLS:
        for n in (64, 1):
            bars = [(label, medians[(label, m, p)]) for (label, m, p) in medians if m == n and p == protocol]
            if bars:
                groups.append((f"{PROTOCOL_TITLES[protocol].split(' (')[0]}, {n} in flight", bars))
    render_chart(groups, path)


CHART_COLORS = {LOOP: "#1f77b4", DEFAULT: "#6baed6", GLOBAL: "#9ecae1", LOAD: "#08519c", C: "#d62728", AHC: "#2ca02c",
                "URLSession": "#9467bd", "wrk -t1": "#7f7f7f", "C libcurl multi": "#d62728", "Courier": "#1f77b4",
                "AsyncHTTPClient": "#2ca02c", "courier load": "#08519c"}


def render_chart(groups, path, title=""):
    """Two bar panels (requests/s, CPU µs per request) for `groups`: [(group title, [(client,
    (requests/s, CPU µs, RSS))])]. Also used by Netem/bench.py for the 25 ms figures."""
    row, label_width, panel_width, gap = 15, 190, 330, 40
    top = 40 + (18 if title else 0)
    height = top + sum(25 + row * len(bars) for _, bars in groups)
    width = label_width + 2 * panel_width + gap + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11"><rect width="100%" height="100%" fill="white"/>']
    if title:
        out.append(f'<text x="4" y="16" font-weight="bold" font-size="12">{title}</text>')
    out += [f'<text x="{label_width}" y="{top - 22}" font-weight="bold">requests/s (higher is better)</text>',
            f'<text x="{label_width + panel_width + gap}" y="{top - 22}" font-weight="bold">CPU µs per request (lower is better)</text>']
    y = top
    for group_title, bars in groups:
        out.append(f'<text x="4" y="{y + 10}" font-weight="bold">{group_title}</text>')
        y += 16
        top_rps = max(v[0] for _, v in bars)
        top_cpu = max(v[1] for _, v in bars)
        for label, (rps, cpu, _) in bars:
            color = CHART_COLORS.get(label, "#999")
            out.append(f'<text x="{label_width - 6}" y="{y + 10}" text-anchor="end">{label}</text>')
            w = (panel_width - 60) * rps / top_rps
            out.append(f'<rect x="{label_width}" y="{y + 1}" width="{w:.1f}" height="{row - 3}" fill="{color}"/>')
            out.append(f'<text x="{label_width + w + 4:.1f}" y="{y + 10}">{rps:,.0f}</text>')
            x = label_width + panel_width + gap
            w = (panel_width - 60) * cpu / top_cpu
            out.append(f'<rect x="{x}" y="{y + 1}" width="{w:.1f}" height="{row - 3}" fill="{color}"/>')
            out.append(f'<text x="{x + w + 4:.1f}" y="{y + 10}">{cpu:.1f}</text>')
            y += row
        y += 9
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    build()
    nginx, prefix = start_nginx()
    samples = {(label, n, protocol): [] for label, n, protocol, _ in CASES}
    try:
        for round_number in range(1, ROUNDS + 1):
            for label, n, protocol, measure in CASES:
                log(f"round {round_number}/{ROUNDS}: {label}, {n} in flight, {protocol}")
                samples[(label, n, protocol)].append(measure())
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(prefix, ignore_errors=True)

    medians = {key: tuple(statistics.median(s[i] for s in values) for i in range(3)) for key, values in samples.items()}
    lines = [f"GET of a 1 KB JSON file from nginx (1 worker, keep-alive); median of {ROUNDS} runs of {SECONDS:g} s; "
             f"{os.cpu_count()} cores"]
    for protocol, title in PROTOCOL_TITLES.items():
        keys = [key for key in medians if key[2] == protocol]
        if not keys:
            continue
        lines += ["", f"**{title}**", "",
                  "| client | in flight | requests/s | CPU µs/request | peak RSS MiB | req/s vs C | CPU vs C |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for key in keys:
            label, n, _ = key
            rps, cpu, rss = medians[key]
            c = medians.get((C, n, protocol))
            versus = f"{rps / c[0]:.2f}× | {cpu / c[1]:.2f}×" if c else " | "
            lines.append(f"| {label} | {n} | {rps:,.0f} | {cpu:.1f} | {rss:.1f} | {versus} |")
    lines.append("")
    lines.append("CPU for wrk and `courier load` is the whole process (start-up included); the others measure their "
                 "measured window after a 1 s warm-up. Peak RSS is the whole process.")

    counts = None
    if not os.environ.get("BENCH_SKIP_INSTRUCTIONS"):
        import instructions  # after the timed cases: callgrind is slow, and its counts need no quiet machine
        nginx, prefix = start_nginx()
        try:
            counts = instructions.measure(URL)
        finally:
            nginx.terminate()
            nginx.wait()
            shutil.rmtree(prefix, ignore_errors=True)
        lines += ["", instructions.table(counts)]

    probe = None
    if not os.environ.get("BENCH_SKIP_INFLIGHT"):
        log("the in-flight probe (test server in its own process, 1,000 connections)")
        probe = inflight_probe()
        lines += ["", f"{probe[0]:,} in flight: " + probe[1]]

    per_request = idle = None
    if not os.environ.get("BENCH_SKIP_COUNTS"):
        log("context switches and system calls per request (fixed runs), and an idle service")
        nginx, prefix = start_nginx()
        try:
            per_request = per_request_counts()
            idle = idle_cpu()
        finally:
            nginx.terminate()
            nginx.wait()
            shutil.rmtree(prefix, ignore_errors=True)
        lines += ["", "| client | in flight | context switches per request | system calls per request |",
                  "|---|---:|---:|---:|"]
        for (label, n), (switches, calls) in per_request.items():
            lines.append(f"| {label} | {n} | {switches:.2f} | {'' if calls is None else f'{calls:.1f}'} |")
        lines += ["", f"Idle service, 10 s without requests: {idle:.3f}% of one core."]

    lines += ["", "| target | measured | holds |", "|---|---:|:---:|"]
    for name, measured, holds in targets(medians, counts, probe, per_request, idle):
        lines.append(f"| {name} | {measured} | {'yes' if holds else 'NO'} |")

    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(ROOT, "bench-results"), exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(ROOT, "bench-results", f"bench-{stamp}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(ROOT, "bench-results", f"bench-{stamp}.json"), "w") as f:
        json.dump({"rounds": ROUNDS, "seconds": SECONDS,
                   "samples": {f"{label} @{n} {protocol}": values for (label, n, protocol), values in samples.items()},
                   "instructions": {f"{label} @{n}": value for (label, n), value in (counts or {}).items()},
                   "inflight": probe and probe[1]}, f, indent=2)
    chart_path = os.environ.get("BENCH_CHART", os.path.join(ROOT, "Docs", "bench.svg"))
    chart(medians, chart_path)
    log(f"chart: {chart_path}")


if __name__ == "__main__":
    main()

"""What every benchmark script shares: paths, the binaries and their build, nginx, the clients
(C, CourierBench's, wrk, `courier load`) and how one run is measured, and the bar chart.

Imported by bench.py, instructions.py, ordo.py, flamegraph.py and Netem/bench.py; it imports
none of them.
"""
import contextlib
import functools
import json
import os
import re
import shutil
import signal
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


def build_c():
    """The C baseline on libcurl multi."""
    os.makedirs(WORK, exist_ok=True)
    subprocess.run(["gcc", "-O2", "-o", CURL_C, os.path.join(ROOT, "Benchmarks", "Baselines", "curl-multi.c"), "-lcurl"],
                   check=True)


def build():
    if os.environ.get("BENCH_SKIP_BUILD"):  # reuse the release binaries already built
        build_c()
        return
    log("building: courier (release), CourierBench (release), the C baseline")
    subprocess.run(["swift", "build", "-c", "release", "--product", "courier"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    build_bench()
    build_c()


def launch_nginx(prefix, servers, worker_connections=1024):
    """nginx with one worker in `prefix` (its files, logs and temporary folders), running the
    `servers` part of its http block; returns the process, which the caller waits for."""
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections {worker_connections}; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{servers}
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    return subprocess.Popen([nginx, "-p", prefix, "-c", conf, "-g", "daemon off;"])


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
    process = launch_nginx(prefix, f"""
    keepalive_requests 100000000;
    keepalive_timeout 300s;
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
    }}""", worker_connections=16384)
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


def run_measured(argv, env=None):
    """Like run(), but reaps the child itself to read its own CPU time and peak RSS."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}")
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


SELF_REPORTED = re.compile(r"requests/s (\d+)\s+cpu-us/request ([\d.]+)\s+peak-rss-MiB ([\d.]+)\s+requests \d+\s+errors (\d+)")


def self_reported(argv, env=None):
    out, _, rss = run_measured(argv, env)
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


def ab(connections):
    """ApacheBench with keep-alive: -n is set far beyond what -t allows, so the time ends the run."""
    def measure():
        out, cpu, rss = run_measured(["ab", "-k", "-q", f"-c{connections}", f"-t{int(SECONDS)}", "-n", "100000000", URL])
        total = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
        if int(re.search(r"Failed requests:\s+(\d+)", out).group(1)):
            raise RuntimeError(f"ab saw failed requests: {out[-500:]}")
        return float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1)), cpu / total * 1e6, rss
    return measure


def h2load(connections):
    """nghttp2's load generator over HTTP/1.1, one thread, for SECONDS."""
    def measure():
        out, cpu, rss = run_measured(["h2load", "--h1", "-t1", f"-c{connections}", "-D", str(int(SECONDS)), URL])
        done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
        if int(done.group(1)) != int(done.group(2)):
            raise RuntimeError(f"h2load saw failed requests: {out[-500:]}")
        return float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", out).group(1)), cpu / int(done.group(2)) * 1e6, rss
    return measure


def courier_load(in_flight, protocol="http"):
    # Plain HTTP only, on the system's libcurl or the newer one: the TLS protocols' flags are
    # CourierBench's and would not reach `courier load`.
    if protocol not in ("http", NEWER_LIBCURL):
        raise ValueError(f"courier_load measures plain HTTP, not {protocol}")
    url = PROTOCOLS[protocol][0]
    def measure():
        out, cpu, rss = run_measured([COURIER, "load", url, "-c", str(in_flight), "-d", f"{SECONDS}s", "--json"],
                                     environment(protocol))
        result = json.loads(out)
        if result["errors"]:
            raise RuntimeError(f"courier load saw errors: {result['statusCodes']} {result['errorKinds']}")
        return result["requestsPerSecond"], cpu / result["requests"] * 1e6, rss
    return measure


# The protocols: plain HTTP/1.1; HTTPS/1.1 with a connection per request in flight; HTTP/2 over TLS
# with every stream multiplexed on one connection; plain HTTP/1.1 again with the newest libcurl
# Debian has for this release loaded first, C and Courier alike (below).
NEWER_LIBCURL = "http-newer-libcurl"
PROTOCOLS = {
    "http": (URL, [], []),
    "https/1.1": (TLS_URL, ["--insecure", "--http-version", "1.1"], ["insecure", "http1"]),
    "h2": (TLS_URL, ["--insecure", "--http-version", "2"], ["insecure", "http2"]),
    NEWER_LIBCURL: (URL, [], []),
}

@functools.cache
def newer_libcurl():
    """(folder, version) of Debian's newest libcurl for this release, unpacked by
    Scripts/newer-libcurl.sh (8.14.1 for Debian 12, where the system's is 7.88.1): on it Courier
    reuses easy handles (libcurl 8.1.0 and later). None when it cannot be had (no network)."""
    process = subprocess.run([os.path.join(ROOT, "Scripts", "newer-libcurl.sh"), os.path.join(ROOT, ".build", "newer-libcurl")],
                             capture_output=True, text=True)
    version = re.search(r"newer libcurl: libcurl/(\S+)", process.stderr)
    if process.returncode != 0 or not version:
        log(f"no newer libcurl: {process.stderr.strip()[-500:]}")
        return None
    return process.stdout.strip(), version.group(1)


def environment(protocol):
    """The environment a client runs in for `protocol`: None (this one's) but for NEWER_LIBCURL."""
    if protocol != NEWER_LIBCURL:
        return None
    folder, _ = newer_libcurl()
    return {**os.environ, "LD_LIBRARY_PATH": folder}


def bench_client(client, in_flight, executor="loop", protocol="http", pattern="workers"):
    url, flags, _ = PROTOCOLS[protocol]
    connections = 1 if protocol == "h2" else in_flight
    argv = [BENCH, "load", "--url", url, "-c", str(in_flight), "--connections", str(connections), "-d", str(SECONDS),
            "--client", client, "--executor", executor, "--pattern", pattern, *flags]
    return lambda: self_reported(argv, environment(protocol))


def c_client(in_flight, protocol="http", socket=False, fresh=False):
    url, _, args = PROTOCOLS[protocol]
    return lambda: self_reported([CURL_C, url, str(in_flight), str(SECONDS), *args, *(["socket"] if socket else []),
                                  *(["fresh"] if fresh else [])], environment(protocol))


# The clients' labels in tables and charts.
LOOP, DEFAULT, C, AHC, LOAD = ("Courier (loop executor)", "Courier (default executor)", "C libcurl multi",
                               "AsyncHTTPClient", "courier load")
GLOBAL = "Courier (global pool)"  # tasks that inherit nothing from the service: a server's handlers
# Many requests at once without long-lived workers, as users write it (no executor preference):
# a task group with a child task per request, and service.sendAll.
CHILD, SENDALL = "Courier (child task per request)", "Courier sendAll"
# C driven the way Courier drives libcurl (its socket interface over epoll, curl-multi.c's
# "socket"): what that interface itself costs in libcurl 7.88, apart from Courier.
C_SOCKET = "C libcurl multi, socket interface"
# C with a new easy handle per transfer, as Courier has on libcurl 7.84.0 to 8.0.1 (curl/curl#11101):
# what the same safety costs a C program there.
C_FRESH = "C libcurl multi, fresh handles"


@contextlib.contextmanager
def nginx():
    """nginx serving the 1 KB JSON file for the length of a `with` block."""
    process, prefix = start_nginx()
    try:
        yield process
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(prefix, ignore_errors=True)


def build_bench():
    """CourierBench in release (its `serve` is the test server in a process of its own)."""
    subprocess.run(["swift", "build", "-c", "release", "--product", "CourierBench"], cwd=os.path.join(ROOT, "Benchmarks"),
                   check=True, stdout=subprocess.DEVNULL)


@contextlib.contextmanager
def test_server():
    """`CourierBench serve` (the test server) in its own process for a `with` block; yields its base
    URL, without a trailing slash. Its own work then stays out of the client's figures."""
    server = subprocess.Popen([BENCH, "serve"], stdout=subprocess.PIPE, text=True)
    try:
        yield server.stdout.readline().strip()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()


CHART_COLORS = {CHILD: "#c6dbef", SENDALL: "#3182bd", LOOP: "#1f77b4", DEFAULT: "#6baed6", GLOBAL: "#9ecae1", LOAD: "#08519c", C: "#d62728", C_SOCKET: "#ff9896", C_FRESH: "#e377c2", AHC: "#2ca02c",
                "URLSession": "#9467bd", "wrk -t1": "#7f7f7f", "ab -k": "#bcbddc", "h2load --h1 -t1": "#dadaeb", "Courier": "#1f77b4"}


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

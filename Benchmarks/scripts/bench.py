#!/usr/bin/env python3
"""`make bench`: Courier against libcurl in C, AsyncHTTPClient, URLSession, wrk, ab and h2load, in one run.

Starts nginx (Debian's) on 127.0.0.1 serving a 1 KB JSON file with keep-alive, then runs every
client against it, interleaved, BENCH_ROUNDS times (default 3) for BENCH_SECONDS each (default 5),
and prints medians: requests/s, client CPU µs per request, peak RSS, and ratios to Courier.
Then the 100,000-in-flight probes (a task group, and sendAll) against the test server in its own process.

Results also go to bench-results/ (git-ignored) as JSON and Markdown. A full run (no BENCH_ONLY,
no BENCH_SKIP_*) also writes its tables into Docs/Performance.md, between the two `make bench`
markers, with the date, the machine and the versions it ran with: the doc's table is always the
last full run's, never copied by hand.
"""
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import time

import instructions
from harness import (AHC, BENCH, C, C_FRESH, C_SOCKET, CHILD, CURL_C, DEFAULT, GLOBAL, NEWER_LIBCURL, SENDALL, LOAD, LOOP, PROTOCOLS, ROOT, ROUNDS,
                     SECONDS, URL, WORK, ab, bench_client, build, c_client, courier_load, h2load, log, newer_libcurl, nginx, render_chart,
                     run, test_server, wrk)

CASES = [
    # (label, in flight, protocol, measure)
    (LOOP, 64, "http", bench_client("courier", 64)),
    (DEFAULT, 64, "http", bench_client("courier", 64, "default")),
    (GLOBAL, 64, "http", bench_client("courier", 64, "global")),
    (CHILD, 64, "http", bench_client("courier", 64, "default", pattern="child")),
    (SENDALL, 64, "http", bench_client("courier", 64, "default", pattern="sendall")),
    (C, 64, "http", c_client(64)),
    (C_SOCKET, 64, "http", c_client(64, socket=True)),
    (C_FRESH, 64, "http", c_client(64, fresh=True)),
    (AHC, 64, "http", bench_client("ahc", 64)),
    ("URLSession", 64, "http", bench_client("urlsession", 64)),
    ("wrk -t1", 64, "http", wrk(64)),
    ("ab -k", 64, "http", ab(64)),
    ("h2load --h1 -t1", 64, "http", h2load(64)),
    (LOAD, 64, "http", courier_load(64)),
    (LOOP, 1, "http", bench_client("courier", 1)),
    (DEFAULT, 1, "http", bench_client("courier", 1, "default")),
    (GLOBAL, 1, "http", bench_client("courier", 1, "global")),
    (CHILD, 1, "http", bench_client("courier", 1, "default", pattern="child")),
    (SENDALL, 1, "http", bench_client("courier", 1, "default", pattern="sendall")),
    (C, 1, "http", c_client(1)),
    (C_FRESH, 1, "http", c_client(1, fresh=True)),
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
] + [(label, n, NEWER_LIBCURL, measure(n)) for n in (64, 1) for label, measure in (
    (C, lambda n: c_client(n, NEWER_LIBCURL)),
    (LOOP, lambda n: bench_client("courier", n, protocol=NEWER_LIBCURL)),
    (CHILD, lambda n: bench_client("courier", n, "default", protocol=NEWER_LIBCURL, pattern="child")),
    (SENDALL, lambda n: bench_client("courier", n, "default", protocol=NEWER_LIBCURL, pattern="sendall")),
    (LOAD, lambda n: courier_load(n, NEWER_LIBCURL)))]
if os.environ.get("BENCH_ONLY"):  # a comma-separated subset of protocols, for quick comparisons
    CASES = [case for case in CASES if case[2] in os.environ["BENCH_ONLY"].split(",")]


def inflight_probe(pattern):
    """QUERIES queries at once, 1,000 connections, against a route that answers after DELAY ms:
    every query exists at once (the rest wait in the admission queue). `pattern`: `group` (a child
    task per query in one task group) or `sendall` (service.sendAll with all of them in flight)."""
    queries = int(os.environ.get("BENCH_INFLIGHT_QUERIES", "100000"))
    delay = int(os.environ.get("BENCH_INFLIGHT_DELAY_MS", "200"))
    with test_server() as base:
        out = run([BENCH, "inflight", "--url", f"{base}/delay/{delay}", "--queries", str(queries), "--connections", "1000",
                   "--pattern", pattern])
        return queries, out.strip()


PROTOCOL_TITLES = {"http": "HTTP/1.1, plain", "https/1.1": "HTTPS/1.1 (TLS, a connection per request in flight)",
                   "h2": "HTTP/2 over TLS (every stream on one connection)"}


def perf_can_count_syscalls():
    """Whether `perf stat` may read the system-call tracepoint here (root, or a low perf_event_paranoid)."""
    if not shutil.which("perf"):
        return False
    probe = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "true"], capture_output=True, text=True)
    return probe.returncode == 0 and "not supported" not in probe.stderr and "<not counted>" not in probe.stderr


def syscalls_by_perf(argv, requests):
    """System calls per request of a whole run, from the kernel's tracepoint: every thread, nothing slowed."""
    result = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    for line in result.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].endswith("raw_syscalls:sys_enter") and fields[0].isdigit():
            return int(fields[0]) / requests
    return None


def per_request_counts():
    """Voluntary context switches (getrusage of the child) and system calls per request, over
    fixed runs: C, the plain path and the loop path, 1 and 64 in flight.

    System calls are counted twice. `perf stat` on the kernel's `raw_syscalls:sys_enter`
    tracepoint counts a run as it runs (when perf may read it). `strace -f -c` stops every thread
    at every call, which slows the loop and changes how many transfers each turn finds and how
    often pool threads park (futex calls): it is kept beside it, as earlier tables used it.
    Returns {(label, n): (switches, calls by perf or None, calls under strace or None)}."""
    requests = int(os.environ.get("BENCH_COUNT_REQUESTS", "20000"))
    traced = max(1000, requests // 4)  # strace slows every call: fewer requests
    use_perf = perf_can_count_syscalls()
    counts = {}
    for n in (1, 64):
        runs = [(C, [CURL_C, URL, str(n), "0", f"requests={{}}"]),
                (DEFAULT, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "default",
                           "--requests", "{}"]),
                (LOOP, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "loop",
                        "--requests", "{}"]),
                (CHILD, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "default",
                         "--pattern", "child", "--requests", "{}"]),
                (SENDALL, [BENCH, "load", "--url", URL, "-c", str(n), "--connections", str(n), "--executor", "default",
                           "--pattern", "sendall", "--requests", "{}"])]
        for label, template in runs:
            argv = [part.format(requests) for part in template]
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, usage = os.wait4(process.pid, 0)
            switches = usage.ru_nvcsw / requests
            calls = syscalls_by_perf(argv, requests) if use_perf else None
            traced_calls = None
            if shutil.which("strace"):
                summary = os.path.join(WORK, "strace.txt")
                subprocess.run(["strace", "-f", "-c", "-o", summary, *[part.format(traced) for part in template]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                with open(summary) as f:
                    total = [line.split() for line in f if line.rstrip().endswith("total")]
                traced_calls = int(total[0][3]) / traced if total else None
            counts[(label, n)] = (switches, calls, traced_calls)
    return counts


def idle_cpu():
    """CPU of a service that sends nothing for 10 s, in percent of one core."""
    out = run([BENCH, "idle", "--url", URL, "--seconds", os.environ.get("BENCH_IDLE_SECONDS", "10")])
    return float(re.search(r"cpu-percent ([\d.]+)", out).group(1))


def targets(medians, counts, probes, per_request=None, idle=None):
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
    # Many requests at once without workers (issue 53): sendAll and a child task per request.
    at_least("sendAll, 64 in flight: ≥ 0.9× C", ratio((SENDALL, 64, "http"), (C, 64, "http")), 0.9)
    at_least("sendAll, 1 in flight: ≥ 0.85× C", ratio((SENDALL, 1, "http"), (C, 1, "http")), 0.85)
    at_least("a child task per request, 1 in flight: ≥ 0.7× C", ratio((CHILD, 1, "http"), (C, 1, "http")), 0.7)
    # The same on Debian's newest libcurl, where Courier reuses easy handles (C on the same library).
    if (C, 64, NEWER_LIBCURL) in medians:
        version = newer_libcurl()[1]
        at_least(f"sendAll on libcurl {version}, 64 in flight: ≥ 0.9× C", ratio((SENDALL, 64, NEWER_LIBCURL), (C, 64, NEWER_LIBCURL)), 0.9)
        at_least(f"sendAll on libcurl {version}, 1 in flight: ≥ 0.85× C", ratio((SENDALL, 1, NEWER_LIBCURL), (C, 1, NEWER_LIBCURL)), 0.85)
        at_least(f"a child task per request on libcurl {version}, 1 in flight: ≥ 0.7× C",
                 ratio((CHILD, 1, NEWER_LIBCURL), (C, 1, NEWER_LIBCURL)), 0.7)
        for n in (64, 1):
            at_least(f"courier load on libcurl {version}, {n} in flight: ≥ 0.95× C",
                     ratio((LOAD, n, NEWER_LIBCURL), (C, n, NEWER_LIBCURL)), 0.95)
        # wrk does not use libcurl: its run on the system's stands for both.
        at_least(f"courier load on libcurl {version} against wrk, 64 connections: ≥ 0.8× req/s",
                 ratio((LOAD, 64, NEWER_LIBCURL), ("wrk -t1", 64, "http")), 0.8)
        at_most(f"courier load on libcurl {version} against wrk, 64 connections: CPU per request ≤ 1.5×",
                ratio((LOAD, 64, NEWER_LIBCURL), ("wrk -t1", 64, "http"), 1), 1.5)
    # `courier load` beside the load generators people use: requests per core is what a load test buys.
    at_least("courier load against wrk, 64 connections: ≥ 0.8× req/s", ratio((LOAD, 64, "http"), ("wrk -t1", 64, "http")), 0.8)
    at_most("courier load against wrk, 64 connections: CPU per request ≤ 1.5×",
            ratio((LOAD, 64, "http"), ("wrk -t1", 64, "http"), 1), 1.5)
    if per_request:
        for label, name, limits in ((SENDALL, "sendAll", ((1, 1.2), (64, 0.02))), (CHILD, "a child task per request", ((1, 3),))):
            for n, limit in limits:
                if (label, n) in per_request:
                    switches = per_request[(label, n)][0]
                    rows.append((f"context switches per request, {name}, {n} in flight: ≤ {limit}",
                                 f"{switches:.2f} (C {per_request[(C, n)][0]:.2f})", switches <= limit))
        for n, switch_limit, call_limit in ((1, 1.5, 7), (64, 0.05, 4.5)):
            switches = per_request[(DEFAULT, n)][0]
            rows.append((f"context switches per request, plain path, {n} in flight: ≤ {switch_limit}",
                         f"{switches:.2f} (C {per_request[(C, n)][0]:.2f})", switches <= switch_limit))
            # The run as it runs (perf) when perf may count; else under strace, which slows it.
            column, how = (1, "perf") if per_request[(C, n)][1] is not None else (2, "strace")
            for label, path in ((DEFAULT, "plain path"), (LOOP, "loop path")):
                calls = per_request[(label, n)][column]
                if calls is not None:
                    rows.append((f"system calls per request ({how}), {path}, {n} in flight: ≤ {call_limit}",
                                 f"{calls:.1f} (C {per_request[(C, n)][column]:.1f})", calls <= call_limit))
    for protocol, title in (("https/1.1", "HTTPS/1.1"), ("h2", "HTTP/2 over TLS, 64 streams")):
        at_least(f"{title}: ≥ 0.9× C", ratio((LOOP, 64, protocol), (C, 64, protocol)), 0.9)
        at_least(f"{title}: ≥ 1.6× AsyncHTTPClient", ratio((LOOP, 64, protocol), (AHC, 64, protocol)), 1.6)
    at_most("HTTP/2 over TLS: CPU per request within 10% of HTTPS/1.1's (loop executor, 64)",
            ratio((LOOP, 64, "h2"), (LOOP, 64, "https/1.1"), 1), 1.1)
    if counts:
        for label, mode in ((LOOP, "loop executor"), (DEFAULT, "default executor")):
            value = counts[(label, 64)] / counts[(C, 64)]
            rows.append((f"instructions per request, {mode}, 64: ≤ 1.25× C", f"{value:.2f}×", value <= 1.25))
    for label, (queries, text) in (probes or {}).items():
        fields = dict(re.findall(r"([a-z/-]+) ([\d.-]+)", text))
        during = fields.get("threads-during", "0-0").split("-")
        # Flat: no thread added while the queries wait (the pool may retire idle workers).
        flat = int(during[1]) <= int(fields.get("threads-before", -1))
        per_query = float(fields.get("bytes/query", 1e9))
        complete = fields.get("succeeded") == str(queries)
        rows.append((f"{queries:,} in flight through {label} (1,000 connections): all succeed, threads flat, ≤ 3 KiB per query",
                     f"{fields.get('succeeded')} ok, threads {fields.get('threads-before')} → {during[0]}–{during[1]}, "
                     f"{per_query / 1024:.1f} KiB", complete and flat and per_query <= 3072))
    if idle is not None:
        rows.append(("idle service (no requests for 10 s): ≤ 1% of one core", f"{idle:.3f}%", idle <= 1.0))
    return rows


DOC = os.path.join(ROOT, "Docs", "Performance.md")
DOC_BEGIN = "<!-- make bench writes from here: do not edit by hand -->"
DOC_END = "<!-- make bench writes up to here -->"


def first_line(argv, stream="stdout"):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (done.stdout if stream == "stdout" else done.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def machine():
    """Where and with what the figures were measured: one line for the doc."""
    cpu = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    system = "Linux"
    with contextlib.suppress(OSError), open("/etc/os-release") as f:
        system = next((line.split("=", 1)[1].strip().strip('"') for line in f if line.startswith("PRETTY_NAME=")), system)
    curl = first_line(["curl-config", "--version"]).replace("libcurl ", "")
    swift = re.sub(r"^.*?Swift version ([^ ]+).*$", r"\1", first_line(["swift", "--version"]))
    nginx_version = first_line(["nginx", "-v"], stream="stderr").replace("nginx version: nginx/", "")
    return (f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} × {cpu}, {system}, libcurl {curl}, Swift {swift}, "
            f"nginx {nginx_version}")


def write_doc(text):
    """Replaces the generated block of Docs/Performance.md with `text`."""
    with open(DOC) as f:
        doc = f.read()
    if DOC_BEGIN not in doc or DOC_END not in doc:
        log(f"{DOC} has no `make bench` markers: not written")
        return
    head, rest = doc.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    with open(DOC, "w") as f:
        f.write(f"{head}{DOC_BEGIN}\n{text}\n{DOC_END}{tail}")
    log(f"wrote the table into {DOC}")


def chart(medians, path):
    """Requests/s and CPU µs per request for each client and case, as a self-contained SVG."""
    groups = []
    for protocol in PROTOCOLS:
        for n in (64, 1):
            bars = [(label, medians[(label, m, p)]) for (label, m, p) in medians if m == n and p == protocol]
            if bars:
                groups.append((f"{PROTOCOL_TITLES[protocol].split(' (')[0]}, {n} in flight", bars))
    render_chart(groups, path)


def main():
    global CASES
    build()
    if any(case[2] == NEWER_LIBCURL for case in CASES):
        newer = newer_libcurl()
        if newer:
            PROTOCOL_TITLES[NEWER_LIBCURL] = (f"HTTP/1.1, plain, on libcurl {newer[1]} (Debian's newest for this release, loaded "
                                              "first for C and Courier alike; Courier reuses easy handles on it)")
        else:
            CASES = [case for case in CASES if case[2] != NEWER_LIBCURL]
    samples = {(label, n, protocol): [] for label, n, protocol, _ in CASES}
    with nginx():
        for round_number in range(1, ROUNDS + 1):
            for label, n, protocol, measure in CASES:
                log(f"round {round_number}/{ROUNDS}: {label}, {n} in flight, {protocol}")
                samples[(label, n, protocol)].append(measure())

    medians = {key: tuple(statistics.median(s[i] for s in values) for i in range(3)) for key, values in samples.items()}
    lines = [f"Measured {machine()}.", "",
             f"GET of a 1 KB JSON file from nginx (1 worker, keep-alive); median of {ROUNDS} runs of {SECONDS:g} s; "
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
        with nginx():  # after the timed cases: callgrind is slow, and its counts need no quiet machine
            counts = instructions.measure(URL)
        lines += ["", instructions.table(counts)]

    probes = {}
    if not os.environ.get("BENCH_SKIP_INFLIGHT"):
        log("the in-flight probes (test server in its own process, 1,000 connections)")
        for label, pattern in (("a task group", "group"), ("sendAll", "sendall")):
            probes[label] = inflight_probe(pattern)
            lines += ["", f"{probes[label][0]:,} in flight through {label}: " + probes[label][1]]

    per_request = idle = None
    if not os.environ.get("BENCH_SKIP_COUNTS"):
        log("context switches and system calls per request (fixed runs), and an idle service")
        with nginx():
            per_request = per_request_counts()
            idle = idle_cpu()
        lines += ["", "| client | in flight | context switches per request | system calls per request (perf) "
                  "| system calls per request under `strace -f` |", "|---|---:|---:|---:|---:|"]
        shown = lambda value: "" if value is None else f"{value:.1f}"
        for (label, n), (switches, calls, traced_calls) in per_request.items():
            lines.append(f"| {label} | {n} | {switches:.2f} | {shown(calls)} | {shown(traced_calls)} |")
        lines += ["", f"Idle service, 10 s without requests: {idle:.3f}% of one core."]

    lines += ["", "| target | measured | holds |", "|---|---:|:---:|"]
    for name, measured, holds in targets(medians, counts, probes, per_request, idle):
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
                   "inflight": {label: text for label, (_, text) in probes.items()}}, f, indent=2)
    partial = [name for name in os.environ if name == "BENCH_ONLY" or name.startswith("BENCH_SKIP_") and name != "BENCH_SKIP_BUILD"]
    # Only a full run replaces the page's chart; a partial one draws its own beside its tables.
    default_chart = os.path.join(ROOT, "bench-results", f"bench-{stamp}.svg") if partial else os.path.join(ROOT, "Docs", "bench.svg")
    chart_path = os.environ.get("BENCH_CHART", default_chart)
    chart(medians, chart_path)
    log(f"chart: {chart_path}")
    if partial:
        log(f"not written into {DOC}: a partial run ({', '.join(sorted(partial))})")
    else:
        write_doc(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Instructions per request, Courier against C on libcurl multi: the noise-free figure.

Requests per second move ±30% between runs on the shared 2-core machine, and hardware counters
are not available (`perf stat -e instructions`: not supported). Valgrind counts every
instruction a process executes, on every thread, whatever the load on the machine:

    instructions per request = (I(N2) - I(N1)) / (N2 - N1)

for runs of the same client with N1 < N2 requests (start-up, connection set-up and shutdown
cancel out). Each client runs under `valgrind --tool=callgrind` against nginx on loopback, at
three sizes; the figure is the median of the three pairwise slopes. The counts are exact, but
not all of a client's work is per request: timers and idle wake-ups follow the wall clock,
which valgrind stretches fifty-fold and the machine's load stretches further, so a single pair
can be off by a few percent (the three slopes and their spread are printed).

Two things stood between valgrind 3.19 and Courier's binaries (Docs/Performance.md):
- every Swift program with an async main crashes valgrind at its end: libdispatch parks the
  main thread in sigsuspend with a read-only mask, which valgrind writes to
  (valgrind-sigsuspend.c beside this file is preloaded to hand it a writable copy);
- valgrind's DWARF reader gives up on the DWARF 5 forms in Swift's debug info ("unhandled
  dwarf2 abbrev form code 0x25", then "I can't recover"), so each binary runs from a copy
  without debug sections (its symbols stay, so the annotated profiles keep function names).

Valgrind counts each iteration of a `rep stosb` or `rep movsb` as an instruction, so a memset or
memcpy that glibc does with one of them (from 2 KiB) counts a byte as an instruction, where the
hardware does it in a few dozen cycles. Zeroing a new libcurl easy handle (about 5 KB) read as
about 5,000 instructions. The clients run with glibc's tunables set so that memset and memcpy use
their vector loops at every size under callgrind (`STRING_TUNABLES`), which counts what those
loops execute; INSTRUCTIONS_REP_STRINGS=1 leaves glibc's choice, as runs before 2026-11-30 did.

Usage: instructions.py (or `make instructions`); also run by `make bench`.
INSTRUCTIONS_REQUESTS="2000,4000,6000" sets the sizes; INSTRUCTIONS_ONLY="executor" keeps the clients
whose label contains one of the comma-separated words (and C); INSTRUCTIONS_PROFILE=1 also writes callgrind_annotate
tables per client to bench-results/ (inclusive, and each function's own as *-self.txt), and each
function's own instructions per request (*-per-request.txt, the smallest run taken from the largest)
and the blocks allocated per request by allocation site (*-allocations.txt, from valgrind's DHAT).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402  (paths, binaries, nginx, clients)

SIZES = [int(n) for n in os.environ.get("INSTRUCTIONS_REQUESTS", "2000,4000,6000").split(",")]
# Clients whose label contains one of these words (C always runs, as the reference).
ONLY = [word for word in os.environ.get("INSTRUCTIONS_ONLY", "").split(",") if word]
VG = os.path.join(harness.WORK, "valgrind")
SHIM = os.path.join(VG, "valgrind-sigsuspend.so")
STRING_TUNABLES = "glibc.cpu.x86_rep_stosb_threshold=1099511627776:glibc.cpu.x86_rep_movsb_threshold=1099511627776"
COLLECTED = re.compile(r"Collected : (\d+)")
ERRORS = re.compile(r"errors\W+(\d+)")


def prepare():
    """The shim, and copies of the Swift binaries without debug sections."""
    os.makedirs(VG, exist_ok=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", SHIM,
                    os.path.join(os.path.dirname(__file__), "valgrind-sigsuspend.c")], check=True)
    copies = {}
    for name, path in (("CourierBench", harness.BENCH), ("courier", harness.COURIER)):
        copy = os.path.join(VG, name)
        subprocess.run(["objcopy", "--strip-debug", path, copy], check=True)
        copies[name] = copy
    return copies


def clients(copies, url, in_flight):
    """(label, argv for a run of n requests)."""
    bench_argv = lambda client, executor, pattern="workers": lambda n: [
        copies["CourierBench"], "load", "--url", url, "-c", str(in_flight), "--connections", str(in_flight),
        "--client", client, "--executor", executor, "--pattern", pattern, "--requests", str(n)]
    return [
        ("C libcurl multi", lambda n: [harness.CURL_C, url, str(in_flight), "0", f"requests={n}"]),
        (harness.C_SOCKET, lambda n: [harness.CURL_C, url, str(in_flight), "0", f"requests={n}", "socket"]),
        (harness.C_FRESH, lambda n: [harness.CURL_C, url, str(in_flight), "0", f"requests={n}", "fresh"]),
        ("Courier (loop executor)", bench_argv("courier", "loop")),
        ("Courier (default executor)", bench_argv("courier", "default")),
        (harness.CHILD, bench_argv("courier", "default", "child")),
        (harness.SENDALL, bench_argv("courier", "default", "sendall")),
        ("courier load", lambda n: [copies["courier"], "load", url, "-c", str(in_flight), "-n", str(n), "--json"]),
        ("AsyncHTTPClient", bench_argv("ahc", "loop")),
    ]


def count(argv, out_file):
    """Instructions executed by the whole process (every thread), as callgrind counts them."""
    env = dict(os.environ, LD_PRELOAD=SHIM)
    if not os.environ.get("INSTRUCTIONS_REP_STRINGS"):
        env["GLIBC_TUNABLES"] = STRING_TUNABLES
    process = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *argv],
                             capture_output=True, text=True, env=env)
    match = COLLECTED.search(process.stderr)
    if process.returncode != 0 or not match:
        raise RuntimeError(f"{' '.join(argv)} under callgrind failed ({process.returncode}): {process.stderr[-2000:]}")
    errors = ERRORS.search(process.stdout)
    if errors and int(errors.group(1)):
        raise RuntimeError(f"{' '.join(argv)} saw {errors.group(1)} errors: {process.stdout[-500:]}")
    return int(match.group(1))


def measure(url, depths=(64,), profile=False):
    """{(label, in flight): instructions per request}; the slopes go to the log."""
    copies = prepare()
    results = {}
    work = tempfile.mkdtemp(prefix="courier-callgrind-")
    try:
        for in_flight in depths:
            for label, argv in clients(copies, url, in_flight):
                if ONLY and label != "C libcurl multi" and not any(word in label for word in ONLY):
                    continue
                harness.log(f"instructions: {label}, {in_flight} in flight ({', '.join(map(str, SIZES))} requests under callgrind)")
                counts = []
                for size in SIZES:
                    out_file = os.path.join(work, f"{size}.out")
                    counts.append((size, count(argv(size), out_file)))
                if profile:
                    annotate(work, label, in_flight)
                    allocations(argv, work, label, in_flight)
                slopes = [(b - a) / (m - n) for i, (n, a) in enumerate(counts) for (m, b) in counts[i + 1:]]
                results[(label, in_flight)] = statistics.median(slopes)
                harness.log("  slopes: " + ", ".join(f"{slope:,.0f}" for slope in slopes))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


ANNOTATED = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+?)\s*$")


def own_instructions(out_file):
    """{function: its own instructions} from one callgrind run, every function, and the table."""
    table = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out_file],
                           capture_output=True, text=True).stdout
    own = {}
    for line in table.splitlines():
        match = ANNOTATED.match(line)
        if match and "PROGRAM TOTALS" not in match.group(2):
            own[match.group(2)] = own.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    return own, table


def result_path(label, in_flight, suffix):
    """bench-results/callgrind-<label>-<in flight><suffix>.txt, its folder made."""
    os.makedirs(os.path.join(harness.ROOT, "bench-results"), exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    return os.path.join(harness.ROOT, "bench-results", f"callgrind-{slug}-{in_flight}{suffix}.txt")


def annotate(work, label, in_flight):
    """Where the instructions go, kept in bench-results/: callgrind_annotate's inclusive table
    (callgrind-*.txt) and its table of each function's own instructions (callgrind-*-self.txt) for
    the largest run, and each function's own instructions per request (callgrind-*-per-request.txt):
    the difference between the largest and the smallest run over the requests between them, so
    start-up (protocol conformance scans, symbol binding) falls out as it does from the figure."""
    path = lambda suffix: result_path(label, in_flight, suffix)
    last = os.path.join(work, f"{SIZES[-1]}.out")
    with open(path(""), "w") as f:
        f.write(subprocess.run(["callgrind_annotate", "--inclusive=yes", last], capture_output=True, text=True).stdout)
    small, _ = own_instructions(os.path.join(work, f"{SIZES[0]}.out"))
    large, table = own_instructions(last)
    with open(path("-self"), "w") as f:
        f.write(table)
    requests = SIZES[-1] - SIZES[0]
    rows = sorted(((large.get(name, 0) - small.get(name, 0)) / requests, name) for name in set(small) | set(large))
    rows = [(value, name) for value, name in reversed(rows) if abs(value) >= 1]
    with open(path("-per-request"), "w") as f:
        f.write(f"Each function's own instructions per request: ({SIZES[-1]} requests - {SIZES[0]}) / {requests}; "
                f"total {sum(value for value, _ in rows):,.0f}\n\n")
        f.writelines(f"{value:10,.0f}  {name}\n" for value, name in rows)


def allocations(argv, work, label, in_flight):
    """Blocks allocated per request by where they were allocated (callgrind-*-allocations.txt):
    DHAT's totals per allocation stack at the smallest and the largest size, the one taken from
    the other over the requests between them, as for the instructions."""
    env = dict(os.environ, LD_PRELOAD=SHIM)
    totals = []
    for size in (SIZES[0], SIZES[-1]):
        out_file = os.path.join(work, f"{size}.dhat.json")
        process = subprocess.run(["valgrind", "--tool=dhat", f"--dhat-out-file={out_file}", *argv(size)],
                                 capture_output=True, text=True, env=env)
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(argv(size))} under DHAT failed: {process.stderr[-2000:]}")
        with open(out_file) as f:
            profile = json.load(f)
        frames, sites = profile["ftbl"], {}
        for point in profile["pps"]:
            # Six frames name a site well enough; the allocator's own frame comes first.
            stack = " <- ".join(re.sub(r"^0x[0-9A-Fa-f]+: | \(in .*\)$| \([^)]*:\d+\)$", "", frames[i])
                                for i in point["fs"][:6])
            blocks, size_total = sites.get(stack, (0, 0))
            sites[stack] = (blocks + point["tbk"], size_total + point["tb"])
        totals.append(sites)
    requests = SIZES[-1] - SIZES[0]
    rows = []
    for stack in set(totals[0]) | set(totals[1]):
        (b0, s0), (b1, s1) = totals[0].get(stack, (0, 0)), totals[1].get(stack, (0, 0))
        if (b1 - b0) / requests >= 0.05:
            rows.append(((b1 - b0) / requests, (s1 - s0) / max(b1 - b0, 1), stack))
    rows.sort(reverse=True)
    with open(result_path(label, in_flight, "-allocations"), "w") as f:
        f.write(f"Blocks allocated per request (DHAT, ({SIZES[-1]} requests - {SIZES[0]}) / {requests}): "
                f"{sum(row[0] for row in rows):.1f}, {sum(row[0] * row[1] for row in rows):,.0f} bytes\n\n")
        f.writelines(f"{blocks:6.2f} {size:8,.0f} B  {stack}\n" for blocks, size, stack in rows)


def table(results):
    lines = [f"Instructions per request (callgrind, every thread; median slope over {', '.join(map(str, SIZES))} requests):", "",
             "| client | in flight | instructions/request | vs C |", "|---|---:|---:|---:|"]
    for (label, in_flight), value in results.items():
        c = results.get(("C libcurl multi", in_flight))
        lines.append(f"| {label} | {in_flight} | {value:,.0f} | {value / c:.2f}× |" if c else
                     f"| {label} | {in_flight} | {value:,.0f} | |")
    return "\n".join(lines)


def main():
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (make instructions installs it)")
    harness.build()
    with harness.nginx():
        results = measure(harness.URL, profile=bool(os.environ.get("INSTRUCTIONS_PROFILE")))
    print(table(results))


if __name__ == "__main__":
    main()

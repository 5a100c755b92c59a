#!/usr/bin/env python3
"""`make soak`: SOAK_MINUTES (10) of mixed load with faults; samples RSS, descriptors, threads,
transfers and easy handles every 5 s, then judges growth after warm-up and draws Docs/soak.svg.

The load (CourierBench soak): 256 operations in flight — 1 KB GETs, queries that meet a 503
once, wire batches, paged lists, 300 KB resumable uploads, and requests to the raw fault server
(resets, truncation, bad chunking, stalls, huge headers) that must fail.
"""
import csv
import io
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "Benchmarks", ".build", "release", "CourierBench")
MINUTES = float(os.environ.get("SOAK_MINUTES", "10"))
WARMUP_SECONDS = 60


def main():
    if not os.environ.get("SOAK_SKIP_BUILD"):
        subprocess.run(["swift", "build", "-c", "release", "--product", "CourierBench"], cwd=os.path.join(ROOT, "Benchmarks"),
                       check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen([BENCH, "serve"], stdout=subprocess.PIPE, text=True)
    try:
        base = server.stdout.readline().strip()
        fault = server.stdout.readline().strip()
        print(f"soak: {MINUTES:g} min against {base} (faults at {fault})", file=sys.stderr, flush=True)
        run = subprocess.run([BENCH, "soak", "--url", base, "--fault-url", fault, "--minutes", str(MINUTES)],
                             capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            raise SystemExit(f"soak failed ({run.returncode})")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    os.makedirs(os.path.join(ROOT, "bench-results"), exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(ROOT, "bench-results", f"soak-{stamp}.csv"), "w") as f:
        f.write(run.stdout)
    after = [r for r in rows if int(r["seconds"]) >= min(WARMUP_SECONDS, MINUTES * 30)]
    rss0, rss1 = int(after[0]["rss_kib"]), int(after[-1]["rss_kib"])
    peak = max(int(r["rss_kib"]) for r in after)
    growth = (rss1 - rss0) / rss0 * 100
    fds = [int(r["fds"]) for r in after]
    threads = sorted({int(r["threads"]) for r in rows})
    handles = [int(r["easy_handles"]) for r in after]
    last = rows[-1]
    summary = [
        f"{len(rows)} samples over {last['seconds']} s; {last['ok']} operations succeeded, "
        f"{last['expected_failures']} failed as their fault required, {last['unexpected_failures']} failed unexpectedly",
        f"RSS after warm-up: {rss0 / 1024:.1f} MiB -> {rss1 / 1024:.1f} MiB ({growth:+.1f}%), peak {peak / 1024:.1f} MiB",
        f"descriptors {min(fds)}-{max(fds)}; threads {threads}; easy handles {min(handles)}-{max(handles)}",
        f"RSS growth under 5% after warm-up: {'yes' if growth < 5 else 'NO'}",
    ]
    print("\n".join(summary))
    with open(os.path.join(ROOT, "Docs", "soak.svg"), "w") as f:
        f.write(svg(rows))


def svg(rows):
    """RSS (MiB), descriptors and easy handles over time, as three polylines."""
    width, height, pad = 720, 300, 40
    seconds = [int(r["seconds"]) for r in rows]
    series = [("RSS MiB", [int(r["rss_kib"]) / 1024 for r in rows], "#1f77b4"),
              ("open descriptors", [int(r["fds"]) for r in rows], "#ff7f0e"),
              ("easy handles", [int(r["easy_handles"]) for r in rows], "#2ca02c")]
    top = max(max(values) for _, values, _ in series) * 1.1 or 1
    span = max(seconds[-1], 1)
    def x(s): return pad + (width - 2 * pad) * s / span
    def y(v): return height - pad - (height - 2 * pad) * v / top
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">seconds (0 - {span})</text>',
             f'<text x="{pad + 4}" y="{pad - 6}">0 - {top:.0f}</text>']
    for index, (name, values, color) in enumerate(series):
        points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(seconds, values))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}"/>')
        parts.append(f'<text x="{width - pad - 140}" y="{pad + 14 * index}" fill="{color}">{name}</text>')
    parts.append("</svg>\n")
    return "\n".join(parts)


if __name__ == "__main__":
    main()

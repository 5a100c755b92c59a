#!/usr/bin/env python3
"""`make soak`: SOAK_MINUTES (10) of mixed load with faults; samples RSS, malloc's bytes in use,
descriptors, threads, transfers and easy handles every 5 s, then judges growth after warm-up and draws Docs/soak.svg.

The load (CourierBench soak): 256 operations in flight — 1 KB GETs, queries that meet a 503
once, wire batches, paged lists, 300 KB resumable uploads, and requests to the raw fault server
(resets, truncation, bad chunking, stalls, huge headers) that must fail.
"""
import csv
import io
import os
import signal
import statistics
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
    # RSS saws as uploads' buffers come and go, so a single first and last sample are
    # arbitrary points of the saw: compare the medians of the first and the last minute after
    # warm-up instead, and fit a line through all of it for the trend.
    window = max(1, min(12, len(after) // 3))
    def growth_of(column):
        first = statistics.median(int(r[column]) for r in after[:window])
        last = statistics.median(int(r[column]) for r in after[-window:])
        xs = [int(r["seconds"]) / 60 for r in after]
        ys = [int(r[column]) / 1024 for r in after]
        slope = statistics.linear_regression(xs, ys).slope if len(after) > 1 else 0.0
        return first, last, (last - first) / first * 100, slope
    rss0, rss1, growth, rss_slope = growth_of("rss_kib")
    heap0, heap1, heap_growth, heap_slope = growth_of("heap_kib")
    peak = max(int(r["rss_kib"]) for r in after)
    fds = [int(r["fds"]) for r in after]
    threads = sorted({int(r["threads"]) for r in rows})
    handles = [int(r["easy_handles"]) for r in after]
    last = rows[-1]
    summary = [
        f"{len(rows)} samples over {last['seconds']} s; {last['ok']} operations succeeded, "
        f"{last['expected_failures']} failed as their fault required, {last['unexpected_failures']} failed unexpectedly",
        f"RSS after warm-up (median of the first and of the last minute): {rss0 / 1024:.1f} MiB -> {rss1 / 1024:.1f} MiB "
        f"({growth:+.1f}%), trend {rss_slope:+.2f} MiB/min, peak {peak / 1024:.1f} MiB",
        f"malloc in use after warm-up: {heap0 / 1024:.1f} MiB -> {heap1 / 1024:.1f} MiB ({heap_growth:+.1f}%), "
        f"trend {heap_slope:+.2f} MiB/min",
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
              ("malloc in use MiB", [int(r["heap_kib"]) / 1024 for r in rows], "#9467bd"),
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

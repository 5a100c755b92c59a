#!/usr/bin/env python3
"""`make bench-check` / `make bench-thresholds`: the ordo-one suites against the same nginx as `make bench`.

check: runs every benchmark and compares its p90 figures with Benchmarks/Thresholds/ under the
tolerances in CourierBenchmarks.swift; exits non-zero on a regression (package-benchmark's
code 2; 4 means improvements only, which passes).
update: runs them and writes new thresholds there (commit them when the change is intended).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402  (paths, binaries, nginx, clients)

# The metrics kept in Thresholds/: the ones CourierBenchmarks.swift gives tolerances to.
KEPT = ("mallocCountTotal", "cpuTotal", "voluntaryContextSwitchesPer1000Requests")


# Linux reports a process's CPU time in 10 ms ticks, and a short benchmark's p90 is often one or
# two of them: against a stored 10 ms, one more tick is +100% and failed the check with nothing
# changed (wire-batch-100-GETs did, in the run that showed the check failing on a real hop). A
# stored CPU figure is at least this many nanoseconds, five ticks, so only a real doubling fails.
CPU_FLOOR_NS = 50_000_000


def prune(directory):
    """Keeps only the metrics with tolerances: the rest (wall clock, throughput, RSS) would be
    checked with package-benchmark's strict default, and they follow the machine's load. Raises
    CPU figures to CPU_FLOOR_NS."""
    import json
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        with open(path) as f:
            values = json.load(f)
        kept = {metric: value for metric, value in values.items() if metric in KEPT}
        if "cpuTotal" in kept:
            kept["cpuTotal"] = max(kept["cpuTotal"], CPU_FLOOR_NS)
        if kept:
            with open(path, "w") as f:
                json.dump(kept, f, indent=2, sort_keys=True)
                f.write("\n")
        else:
            os.remove(path)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode == "prune":  # apply the rules above to the stored thresholds without a run
        prune(os.path.join(harness.ROOT, "Benchmarks", "Thresholds"))
        return
    env = dict(os.environ, COURIER_BENCH_URL=harness.URL.rsplit("/", 1)[0] + "/",
               COURIER_BENCH_TLS_URL=harness.TLS_URL)
    package = os.path.join(harness.ROOT, "Benchmarks")
    thresholds = os.path.join(package, "Thresholds")
    with harness.nginx():
        if mode == "update":
            os.makedirs(thresholds, exist_ok=True)
            subprocess.run(["swift", "package", "--allow-writing-to-package-directory", "benchmark", "thresholds",
                            "update", "--path", thresholds, "--no-progress"], cwd=package, env=env, check=True)
            prune(thresholds)
            code = 0
        else:
            code = subprocess.run(["swift", "package", "benchmark", "thresholds", "check", "--path", thresholds,
                                   "--no-progress"], cwd=package, env=env).returncode
            if code == 4:
                print("only improvements: consider `make bench-thresholds` to keep them")
                code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()

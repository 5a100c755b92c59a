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
import bench  # noqa: E402  (nginx)

# The metrics kept in Thresholds/: the ones CourierBenchmarks.swift gives tolerances to.
KEPT = ("mallocCountTotal", "cpuTotal", "voluntaryContextSwitchesPer1000Requests")


def prune(directory):
    """Keeps only the metrics with tolerances: the rest (wall clock, throughput, RSS) would be
    checked with package-benchmark's strict default, and they follow the machine's load."""
    import json
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        with open(path) as f:
            values = json.load(f)
        kept = {metric: value for metric, value in values.items() if metric in KEPT}
        if kept:
            with open(path, "w") as f:
                json.dump(kept, f, indent=2, sort_keys=True)
                f.write("\n")
        else:
            os.remove(path)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    nginx, _ = bench.start_nginx()
    env = dict(os.environ, COURIER_BENCH_URL=bench.URL.rsplit("/", 1)[0] + "/",
               COURIER_BENCH_TLS_URL=bench.TLS_URL)
    package = os.path.join(bench.ROOT, "Benchmarks")
    thresholds = os.path.join(package, "Thresholds")
    try:
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
    finally:
        nginx.terminate()
        nginx.wait()
    sys.exit(code)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`make bench-check` / `make bench-thresholds`: the ordo-one suites against the same nginx as `make bench`.

check: runs every benchmark and compares its p90 figures with Benchmarks/Thresholds/ under the
tolerances in CourierBenchmarks.swift; exits non-zero on a regression, and only on one:
improvements alone pass (with a hint to store them).
update: runs them and writes new thresholds there (commit them when the change is intended).

CPU time follows the machine (its load, its libcurl and OpenSSL), not only the code: one
day's TLS suites took twice the CPU of the stored figures on the code that had stored them,
because C's own TLS cost had grown as much. So `update` also stores what the C client on libcurl
multi spends per request, per protocol, in the same hour (REFERENCE), and `check` measures it
again and scales each stored CPU figure by C's change on that protocol before comparing:
a regression is then Courier's CPU growing against C's, as `make bench` reports it.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

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


REFERENCE = os.path.join(harness.ROOT, "Benchmarks", "ThresholdsReference.json")


def c_cpu_per_request():
    """C's CPU µs per request at 64 in flight, per protocol: the median of three runs."""
    return {protocol: statistics.median(harness.c_client(64, protocol)()[1] for _ in range(3))
            for protocol in harness.PROTOCOLS if protocol != harness.NEWER_LIBCURL}


def protocol_of(threshold_file):
    """The protocol a suite's CPU follows: its TLS cases by name, plain HTTP for the rest."""
    if "HTTPS1.1" in threshold_file:
        return "https/1.1"
    return "h2" if "HTTP2" in threshold_file else "http"


def scaled(thresholds, factors, directory):
    """A copy of the thresholds with each CPU figure times C's change on its protocol."""
    for name in os.listdir(thresholds):
        with open(os.path.join(thresholds, name)) as f:
            values = json.load(f)
        if "cpuTotal" in values:
            values["cpuTotal"] = int(values["cpuTotal"] * factors[protocol_of(name)])
        with open(os.path.join(directory, name), "w") as f:
            json.dump(values, f, indent=2, sort_keys=True)
    return directory



def run_streaming(command, cwd, env):
    """Runs command, printing its output as it comes, and returns (exit status, the output)."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               encoding="utf-8", errors="replace")  # its tables can split a character
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    return process.wait(), "".join(lines)


def only_improvements(output):
    """Whether a failed check failed on improvements alone. The benchmark tool exits 4 for those
    and 2 for a regression, but the command plugin that runs it turns both into an error and exit
    status 1, naming which (`benchmarkThresholdImprovement`): so the output decides. A regression
    anywhere wins, as in the tool itself."""
    regressed = "benchmarkThresholdRegression" in output or "WORSE than" in output
    improved = "benchmarkThresholdImprovement" in output or "BETTER than" in output
    return improved and not regressed

def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode == "prune":  # apply the rules above to the stored thresholds without a run
        prune(os.path.join(harness.ROOT, "Benchmarks", "Thresholds"))
        return
    env = dict(os.environ, COURIER_BENCH_URL=harness.URL.rsplit("/", 1)[0] + "/",
               COURIER_BENCH_TLS_URL=harness.TLS_URL)
    package = os.path.join(harness.ROOT, "Benchmarks")
    thresholds = os.path.join(package, "Thresholds")
    harness.build_c()
    harness.build_bench()
    # The batch and upload suites need the test server's endpoints: in a process of its own, so
    # its allocations stay out of the counts (in the benchmark's process they moved a wire batch's
    # count by over 1.5 % between runs of unchanged code, and failed the check on nothing).
    with harness.nginx(), harness.test_server() as server:
        env["COURIER_BENCH_SERVER_URL"] = server
        if mode == "update":
            os.makedirs(thresholds, exist_ok=True)
            subprocess.run(["swift", "package", "--allow-writing-to-package-directory", "benchmark", "thresholds",
                            "update", "--path", thresholds, "--no-progress"], cwd=package, env=env, check=True)
            prune(thresholds)
            with open(REFERENCE, "w") as f:
                json.dump({"cUsPerRequest": c_cpu_per_request()}, f, indent=2, sort_keys=True)
                f.write("\n")
            code = 0
        else:
            path = thresholds
            work = tempfile.mkdtemp(prefix="courier-thresholds-")
            if os.path.exists(REFERENCE):
                with open(REFERENCE) as f:
                    stored = json.load(f)["cUsPerRequest"]
                now = c_cpu_per_request()
                factors = {protocol: now[protocol] / stored[protocol] for protocol in stored}
                print("C's CPU per request against the stored reference: " + ", ".join(
                    f"{protocol} {stored[protocol]:.1f} -> {now[protocol]:.1f} µs (CPU thresholds x{factors[protocol]:.2f})"
                    for protocol in stored))
                path = scaled(thresholds, factors, work)
            try:
                code, output = run_streaming(["swift", "package", "benchmark", "thresholds", "check", "--path", path,
                                              "--no-progress"], package, env)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if code != 0 and only_improvements(output):
                print("only improvements: consider `make bench-thresholds` to keep them")
                code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()

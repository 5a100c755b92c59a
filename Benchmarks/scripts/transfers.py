#!/usr/bin/env python3
"""Large transfers: a 1 GiB upload (curl -T, Courier's single PUT, resumable with adaptive and
fixed chunks, resumable with checksums) against the test server in its own process, then a large
download from nginx with a per-connection rate limit: curl, Courier in one stream, Courier in
slices. Prints both result lines (Docs/Uploads.md quotes them)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402  (paths, nginx)

ROOT, BENCH = harness.ROOT, harness.BENCH
PORT = int(os.environ.get("BENCH_TRANSFER_PORT", "18090"))
RATE = os.environ.get("BENCH_RATE", "32m")          # nginx limit_rate: bytes/s per connection
MEBIBYTES = int(os.environ.get("BENCH_DOWNLOAD_MIB", "256"))
RUNS = os.environ.get("BENCH_ROUNDS", "3")


def bench(argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout.strip()


def upload():
    server = subprocess.Popen([BENCH, "serve"], stdout=subprocess.PIPE, text=True)
    try:
        base = server.stdout.readline().strip()
        print(bench([BENCH, "upload", "--url", base, "--runs", RUNS]), flush=True)
    finally:
        server.terminate()
        server.wait()


def download():
    prefix = tempfile.mkdtemp(prefix="courier-transfers-")
    os.chmod(prefix, 0o755)  # nginx's workers read as another user
    try:
        with open(os.path.join(prefix, "big.bin"), "wb") as f:
            block = bytes(range(256)) * 4096
            for _ in range(MEBIBYTES):
                f.write(block)
        process = harness.launch_nginx(prefix, f"""
    server {{
        listen 127.0.0.1:{PORT};
        root {prefix};
        location / {{ limit_rate {RATE}; }}
    }}""")
        try:
            url = f"http://127.0.0.1:{PORT}/big.bin"
            for _ in range(100):
                if subprocess.run(["curl", "-sI", url], capture_output=True).returncode == 0:
                    break
                time.sleep(0.05)
            print(f"(nginx limit_rate {RATE} per connection) " + bench([BENCH, "download", "--url", url, "--runs", RUNS]), flush=True)
        finally:
            process.terminate()
            process.wait()
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    if os.environ.get("BENCH_SKIP_BUILD") != "1":
        subprocess.run(["swift", "build", "-c", "release", "--product", "CourierBench"], cwd=os.path.join(ROOT, "Benchmarks"), check=True)
    which = sys.argv[1:] or ["upload", "download"]
    if "upload" in which:
        upload()
    if "download" in which:
        download()

#!/usr/bin/env python3
"""The same swift-openapi-generator client (Tests/OpenAPINotes, the one the tests use) over three transports,
interleaved in each round: CourierTransport, swift-openapi-async-http-client and
swift-openapi-urlsession.

- get: the 1 KB JSON GET from nginx, decoded, at 64 and at 1 in flight: req/s, CPU per request
  (the client's own) and peak RSS, medians of BENCH_ROUNDS runs of BENCH_SECONDS s.
- stream: 64 MiB up as a streamed body and 64 MiB down as one, against `courier serve`: seconds
  each way and peak RSS, medians of BENCH_ROUNDS runs.

Ratios are Courier's over each other transport in the same round. `make bench-openapi`.
"""
import contextlib
import re
import statistics
import subprocess
import time

import harness

TRANSPORTS = {"courier": "CourierTransport", "ahc": "AsyncHTTPClientTransport", "urlsession": "URLSessionTransport"}
STREAM_PORT = harness.PORT + 7
STREAM = re.compile(r"upload-s ([\d.]+)\s+download-s ([\d.]+)\s+cpu-s ([\d.]+)\s+peak-rss-MiB ([\d.]+)")


def get(transport, in_flight):
    out = harness.run([harness.BENCH, "openapi", "--transport", transport, "--url", f"http://127.0.0.1:{harness.PORT}",
                       "-c", str(in_flight), "-d", str(harness.SECONDS)])
    match = harness.SELF_REPORTED.search(out)
    if not match or int(match.group(4)):
        raise RuntimeError(f"openapi get over {transport}: {out}")
    return float(match.group(1)), float(match.group(2)), float(match.group(3))


def stream(transport):
    out = harness.run([harness.BENCH, "openapi", "--transport", transport, "--url", f"http://127.0.0.1:{STREAM_PORT}",
                       "--mode", "stream"])
    match = STREAM.search(out)
    if not match:
        raise RuntimeError(f"openapi stream over {transport}: {out}")
    return tuple(float(value) for value in match.groups())


@contextlib.contextmanager
def test_server():
    process = subprocess.Popen([harness.COURIER, "serve", "--port", str(STREAM_PORT)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        yield
    finally:
        process.terminate()
        process.wait()


def median(values, index):
    return statistics.median(value[index] for value in values)


def main():
    harness.build()
    gets, streams = {}, {}
    with harness.nginx():
        for round_number in range(harness.ROUNDS):
            for in_flight in (64, 1):
                for transport in TRANSPORTS:
                    gets.setdefault((transport, in_flight), []).append(get(transport, in_flight))
            harness.log(f"get round {round_number + 1} of {harness.ROUNDS} done")
    with test_server():
        for round_number in range(harness.ROUNDS):
            for transport in TRANSPORTS:
                streams.setdefault(transport, []).append(stream(transport))
    print("| 1 KB JSON GET | in flight | req/s | CPU µs/request | peak RSS MiB | Courier's req/s over it |")
    print("|---|---|---|---|---|---|")
    for in_flight in (64, 1):
        courier = median(gets[("courier", in_flight)], 0)
        for transport, name in TRANSPORTS.items():
            runs = gets[(transport, in_flight)]
            ratio = "" if transport == "courier" else f"{courier / median(runs, 0):.2f}×"
            print(f"| {name} | {in_flight} | {median(runs, 0):,.0f} | {median(runs, 1):.0f} | {median(runs, 2):.1f} | {ratio} |")
    print()
    print("| 64 MiB streamed | upload s | download s | CPU s (both) | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for transport, name in TRANSPORTS.items():
        runs = streams[transport]
        print(f"| {name} | {median(runs, 0):.3f} | {median(runs, 1):.3f} | {median(runs, 2):.3f} | {median(runs, 3):.1f} |")


if __name__ == "__main__":
    main()

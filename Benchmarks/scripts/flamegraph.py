#!/usr/bin/env python3
"""`make flamegraphs`: where the CPU goes, for Courier and for C on libcurl multi, side by side.

Samples each client (64 in flight against the same nginx as `make bench`, BENCH_SECONDS each)
with `perf record` (the cpu-clock software event: hardware counters are not available on every
machine) and DWARF unwinding (Debian's libcurl and libc keep no frame pointers), folds the
stacks, demangles Swift names with `swift demangle`, and draws one SVG flame graph per client:
Docs/flame-c.svg, Docs/flame-courier.svg. Width is the share of the client's samples.

Needs the release binaries `make bench` builds (BENCH_SKIP_BUILD=1 reuses them).
"""
import collections
import html
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402  (paths, binaries, nginx, clients)

SECONDS = int(harness.SECONDS)
FREQUENCY = int(os.environ.get("FLAME_FREQUENCY", "499"))
MIN_WIDTH = 0.002  # frames under 0.2% of the samples are merged into their parent's width


def record(argv, data):
    subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", str(FREQUENCY), "--call-graph", "dwarf,16384",
                    "-o", data, "--", *argv], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def folded(data):
    """`perf script` stacks, leaf last, as {('root', …, 'leaf'): samples}; only the client's own threads."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso"], capture_output=True,
                         text=True, errors="replace", check=True).stdout
    stacks = collections.Counter()
    frames, pending = [], []
    for line in out.splitlines() + [""]:
        if not line.strip():
            if frames:
                stacks[tuple(reversed(frames))] += 1
            frames, pending = [], []
            continue
        if line[0] not in " \t":
            continue  # the sample's header line (comm, tid)
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        symbol = parts[1].rsplit(" (", 1)
        name = symbol[0].split("+0x")[0].strip()
        library = os.path.basename(symbol[1].rstrip(")")) if len(symbol) > 1 else "?"
        if name in ("[unknown]", ""):
            name = f"[{library}]"
        if library == "inlined":  # inlined into the function listed next (same address): its library
            pending.append(name)
            continue
        frames += [f"{inlined}\t{library}" for inlined in pending] + [f"{name}\t{library}"]
        pending = []
    return stacks


def demangle(stacks):
    names = sorted({frame.split("\t")[0] for stack in stacks for frame in stack if frame.startswith(("$s", "_$s", "$S"))})
    if not names:
        return stacks
    out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    table = dict(zip(names, out))

    def readable(frame):
        name, library = frame.split("\t")
        return f"{table.get(name, name)}\t{library}"
    result = collections.Counter()
    for stack, count in stacks.items():
        result[tuple(readable(frame) for frame in stack)] += count
    return result


def kind(library):
    """Which part of the process a library is, for colours and the summary."""
    if library.startswith(("[kernel", "[vdso")):
        return "kernel"
    if "libcurl" in library:
        return "libcurl"
    if library.startswith(("libc.so", "libc-", "ld-linux", "libm.so")):
        return "libc"
    if library.startswith(("libssl", "libcrypto", "libnghttp2", "libz")):
        return "TLS, HTTP/2, zlib"
    if library.startswith(("libswift", "libdispatch", "libFoundation", "lib_Foundation", "libBlocksRuntime")):
        return "Swift runtime, concurrency, Foundation"
    return "the client's own code"


def summary(stacks):
    """Self samples (the leaf frame) per part of the process, as shares."""
    parts = collections.Counter()
    for stack, count in stacks.items():
        parts[kind(stack[-1].split("\t")[1]) if stack else "?"] += count
    total = sum(parts.values())
    return {part: count / total for part, count in parts.most_common()}


def tree(stacks):
    root = {"name": "all", "value": 0, "children": {}}
    for stack, count in stacks.items():
        root["value"] += count
        node = root
        for frame in stack:
            node = node["children"].setdefault(frame, {"name": frame, "value": 0, "children": {}})
            node["value"] += count
    return root


PALETTE = {
    "kernel": (150, 150, 160), "libcurl": (70, 170, 90), "libc": (80, 130, 210), "TLS, HTTP/2, zlib": (150, 110, 200),
    "Swift runtime, concurrency, Foundation": (230, 160, 40), "the client's own code": (225, 90, 60),
}


def color(frame):
    """One hue per part of the process (see PALETTE), varied a little per frame."""
    name, _, library = frame.partition("\t")
    red, green, blue = PALETTE.get(kind(library), (200, 200, 200))
    seed = sum(map(ord, name)) % 30 - 15
    return f"rgb({min(255, max(0, red + seed))},{min(255, max(0, green + seed))},{min(255, max(0, blue + seed))})"


def svg(root, title, path, width=1200, row=16):
    total = root["value"]
    rects = []
    depth_max = [0]

    def walk(node, x, depth):
        depth_max[0] = max(depth_max[0], depth)
        share = node["value"] / total
        w = share * width
        label, _, library = node["name"].partition("\t")
        text = html.escape(label[: int(w / 6.5)] if w > 25 else "")
        tip = html.escape(f"{label} ({library or 'all'}) — {node['value']} samples, {share:.1%}")
        rects.append((x, depth, w, f'<g><title>{tip}</title><rect x="{x:.1f}" y="{{y}}" width="{max(w - 0.5, 0.5):.1f}" '
                                   f'height="{row - 1}" fill="{color(node["name"])}"/>'
                                   f'<text x="{x + 3:.1f}" y="{{ty}}">{text}</text></g>'))
        child_x = x
        for child in sorted(node["children"].values(), key=lambda c: -c["value"]):
            if child["value"] / total < MIN_WIDTH:
                continue
            walk(child, child_x, depth + 1)
            child_x += child["value"] / total * width

    walk(root, 0, 0)
    height = (depth_max[0] + 1) * row + 60
    body = []
    for x, depth, w, element in rects:
        y = height - (depth + 1) * row - 4  # the root at the bottom, leaves on top
        body.append(element.replace("{y}", f"{y}").replace("{ty}", f"{y + row - 4}"))
    document = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                f'font-family="monospace" font-size="11">\n'
                f'<rect width="100%" height="100%" fill="#fafafa"/>\n'
                f'<text x="6" y="18" font-size="14">{html.escape(title)}</text>\n' + legend(width) + "\n".join(body)
                + "\n</svg>\n")
    with open(path, "w") as handle:
        handle.write(document)


def legend(width):
    items, x = [], 6
    for part, (red, green, blue) in PALETTE.items():
        items.append(f'<rect x="{x}" y="28" width="10" height="10" fill="rgb({red},{green},{blue})"/>'
                     f'<text x="{x + 14}" y="37">{html.escape(part)}</text>')
        x += 24 + 7 * len(part)
    return "\n".join(items) + "\n"


def main():
    harness.build()
    clients = {
        "c": ("C on libcurl multi, 64 in flight", [harness.CURL_C, harness.URL, "64", str(SECONDS)]),
        "courier": ("Courier, service.send from ordinary tasks (default executor), 64 in flight",
                    [harness.BENCH, "load", "--url", harness.URL, "-c", "64", "--connections", "64", "-d", str(SECONDS),
                     "--client", "courier", "--executor", "default"]),
    }
    with harness.nginx():
        with tempfile.TemporaryDirectory() as scratch:
            for key, (title, argv) in clients.items():
                data = os.path.join(scratch, f"{key}.data")
                harness.log(f"sampling {title}")
                record(argv, data)
                stacks = demangle(folded(data))
                path = os.path.join(harness.ROOT, "Docs", f"flame-{key}.svg")
                svg(tree(stacks), f"{title}: {sum(stacks.values())} samples at {FREQUENCY} Hz", path)
                shares = ", ".join(f"{part} {share:.0%}" for part, share in summary(stacks).items())
                print(f"{path}: self time by part: {shares}")


if __name__ == "__main__":
    main()

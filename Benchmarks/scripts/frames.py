#!/usr/bin/env python3
"""The frame size of each async function in a binary, largest first: what a suspended call holds.

Every async function has an "async function pointer" record (symbol suffix `Tu`): a relative
pointer to its entry and, in the next four bytes, the size of the context (the frame) that its
caller allocates for it from the task's allocator. A request in flight keeps the frames of every
function on its path, so these sizes are what a waiting request costs (Docs/Pipeline.md).

Usage: frames.py BINARY [SUBSTRING [COUNT]]: only mangled names containing SUBSTRING (default
7Courier, Courier's module), at most COUNT rows (default 40). Reads the file; runs nothing of it.
"""
import re
import struct
import subprocess
import sys


def sections(binary):
    """(name, virtual address, file offset, size) of each section."""
    table = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in table.splitlines():
        match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if match:
            found.append((match.group(1), int(match.group(2), 16), int(match.group(3), 16), int(match.group(4), 16)))
    return found


def frame_sizes(binary, substring):
    """[(frame bytes, mangled name)] of the async functions whose names contain `substring`."""
    with open(binary, "rb") as f:
        data = f.read()
    layout = sections(binary)

    def read(address, count):
        for name, start, offset, size in layout:
            if start <= address < start + size and name != ".bss":
                return data[offset + address - start:offset + address - start + count]
        return None

    sizes = []
    symbols = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in symbols.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].endswith("Tu") and substring in parts[2]:
            record = read(int(parts[0], 16), 8)
            if record and len(record) == 8:
                sizes.append((struct.unpack("<iI", record)[1], parts[2]))
    return sorted(sizes, reverse=True)


def main():
    binary = sys.argv[1]
    substring = sys.argv[2] if len(sys.argv) > 2 else "7Courier"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rows = frame_sizes(binary, substring)[:count]
    names = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(name for _, name in rows),
                           capture_output=True, text=True, check=True).stdout.splitlines()
    for (size, _), name in zip(rows, names):
        print(f"{size:6d}  {name.removeprefix('async function pointer to ')}")


if __name__ == "__main__":
    main()

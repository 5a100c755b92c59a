#!/usr/bin/env python3
"""Measures a link the harness built: `serve PORT` in the far namespace, `send HOST PORT SECONDS`
in the near one prints the megabits per second the receiver counted (after the first half second,
so slow start does not count against the link)."""
import socket
import sys
import time

if sys.argv[1] == "serve":
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", int(sys.argv[2])))
    listener.listen()
    print("listening", flush=True)
    while True:
        connection, _ = listener.accept()
        start, counted, total = time.time(), None, 0
        while True:
            data = connection.recv(1 << 20)
            if not data:
                break
            total += len(data)
            if counted is None and time.time() - start > 0.5:
                counted = (time.time(), total)
        if counted:
            seconds = time.time() - counted[0]
            connection.close()
            print(f"{(total - counted[1]) * 8 / max(seconds, 1e-6) / 1e6:.1f}", flush=True)
else:
    host, port, seconds = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    connection = socket.create_connection((host, port))
    chunk = b"x" * 65536
    end = time.time() + seconds
    while time.time() < end:
        connection.sendall(chunk)
    connection.close()

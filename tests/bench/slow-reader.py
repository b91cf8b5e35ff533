#!/usr/bin/env python3
"""Reads one identity answer at a steady rate and says when the server closed and how much arrived,
against its Content-Length (issue 17: a 128 KiB/s reader of /client/items was cut off at 8 s).

    python3 tests/bench/slow-reader.py PORT [KIB_PER_SECOND=128] [PATH=/client/items]

Start the server first, e.g. `modhost gen-db --items 3000 --out R/db.json; modhost serve --root R`.
"""
import socket, sys, time

port = int(sys.argv[1])
rate = int(sys.argv[2] if len(sys.argv) > 2 else 128) * 1024
path = sys.argv[3] if len(sys.argv) > 3 else "/client/items"
s = socket.create_connection(("127.0.0.1", port))
s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n".encode())
started, data = time.time(), bytearray()
while time.time() - started < 600:
    chunk = s.recv(16384)
    if not chunk:
        break
    data += chunk
    ahead = len(data) / rate - (time.time() - started)
    if ahead > 0:
        time.sleep(ahead)
head, _, body = bytes(data).partition(b"\r\n\r\n")
length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")), None)
print(f"EOF at {time.time() - started:.1f} s: {len(body)} of {length} body bytes")

#!/usr/bin/env python3
"""Idle connections against a server's connection limits (Weir issue 26, finding 4).

Opens COUNT connections from --source (default 127.0.0.2: all of 127/8 is loopback on
Linux; --sources N spreads them over N addresses from there) to HOST:PORT that never finish their handshake (--kind idle: send nothing;
--kind slow-http: half a request's headers), then checks from 127.0.0.1 that a user is
still served (--probe http: GET PATH answered; --probe data: the data protocol's hello
answered) and, with --pid, counts the server process's open descriptors (1 s after the probe).

    python3 scripts/conn-flood.py 127.0.0.1:8081 600 --kind slow-http --probe http --path /overview
    python3 scripts/conn-flood.py 127.0.0.1:9249 2000 --probe http --path /metrics --pid 1234
    python3 scripts/conn-flood.py 127.0.0.1:40123 1000 --probe data

Prints one line: connections opened, how many the server had closed by the time the
probe was answered, the probe's outcome and the descriptors. Exits 1 when the probe is
not answered within --probe-timeout seconds (the finding: locked out).
"""

import argparse
import os
import select
import socket
import struct
import sys
import time

DATA_HELLO = b"WEIR" + struct.pack(">H", 3) + b"\0\0"


def open_flood(host, port, count, sources, kind):
    conns = []
    for i in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((sources[i % len(sources)], 0))
        s.connect((host, port))
        if kind == "slow-http":
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    return conns


def closed(conns):
    """Connections the server has closed (readable with nothing to read, or reset)."""
    n = 0
    poller = select.poll()
    for s in conns:
        poller.register(s, select.POLLIN)
    readable = {fd for fd, _ in poller.poll(0)}
    for s in conns:
        if s.fileno() not in readable:
            continue
        try:
            if s.recv(4096, socket.MSG_PEEK) == b"":
                n += 1
        except ConnectionResetError:
            n += 1
    return n


def probe(host, port, kind, path, timeout):
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        if kind == "http":
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
            return head.split(b"\r\n")[0].decode(errors="replace") or "closed without an answer"
        s.sendall(DATA_HELLO)
        hello = s.recv(8)
        return "hello answered" if hello == DATA_HELLO else f"no hello ({hello!r})"
    except (socket.timeout, OSError) as e:
        return f"not answered ({e})"
    finally:
        s.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("address", help="HOST:PORT of the server")
    p.add_argument("count", type=int, help="idle connections to open")
    p.add_argument("--source", default="127.0.0.2")
    p.add_argument("--sources", type=int, default=1, help="spread over this many addresses from --source up")
    p.add_argument("--kind", choices=["idle", "slow-http"], default="idle")
    p.add_argument("--probe", choices=["http", "data"], default="http")
    p.add_argument("--path", default="/")
    p.add_argument("--pid", type=int, help="count this process's open descriptors")
    p.add_argument("--probe-timeout", type=float, default=20.0)
    a = p.parse_args()
    host, port = a.address.rsplit(":", 1)
    port = int(port)
    first = a.source.rsplit(".", 1)
    sources = [f"{first[0]}.{int(first[1]) + i}" for i in range(a.sources)]
    conns = open_flood(host, port, a.count, sources, a.kind)
    outcome = probe(host, port, a.probe, a.path, a.probe_timeout)
    time.sleep(1)  # let the server finish closing what it evicted before counting
    fds = len(os.listdir(f"/proc/{a.pid}/fd")) if a.pid else None
    print(
        f"opened={len(conns)} closed_by_server={closed(conns)} probe={outcome!r}"
        + (f" server_fds={fds}" if fds is not None else "")
    )
    ok = outcome.startswith("HTTP/1.1 200") or outcome == "hello answered"
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

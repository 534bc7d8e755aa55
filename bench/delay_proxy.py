"""A TCP proxy that delays every byte by a fixed time each way: a database a network round
trip away, on one machine (this machine's kernel has no netem to do it on loopback).

Each direction of each connection has a reader thread, which stamps what it reads, and a
writer thread, which sends it on once the stamp is ``delay`` old (threads and time.sleep:
asyncio rounds its timers up to whole milliseconds, which would double a 0.5 ms delay).
Order is kept; a round trip costs twice the delay plus the proxy's own ~0.1 ms.

    python bench/delay_proxy.py --to-unix /tmp/pgdata/.s.PGSQL.5432 --delay-ms 0.5

prints the port it listens on (127.0.0.1), then serves until killed.
"""

from __future__ import annotations

import argparse
import queue
import socket
import sys
import threading
import time


def _pump(source: socket.socket, target: socket.socket, delay: float) -> None:
    """Copy ``source`` to ``target``, each chunk ``delay`` seconds after it was read."""
    chunks: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def send() -> None:
        while True:
            due, data = chunks.get()
            if not data:
                break
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            try:
                target.sendall(data)
            except OSError:
                break
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    while True:
        try:
            data = source.recv(65536)
        except OSError:
            data = b""
        chunks.put((time.perf_counter() + delay, data))
        if not data:
            break
    sender.join()


def _serve_one(client: socket.socket, connect_to: tuple[int, object], delay: float) -> None:
    family, address = connect_to
    upstream = socket.socket(family, socket.SOCK_STREAM)
    try:
        upstream.connect(address)
    except OSError:
        client.close()
        return
    for sock in (client, upstream):
        if sock.family == socket.AF_INET:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(upstream, client, delay), daemon=True)
    back.start()
    _pump(client, upstream, delay)
    back.join()
    client.close()
    upstream.close()


def serve(listener: socket.socket, connect_to: tuple[int, object], delay: float) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve_one, args=(client, connect_to, delay), daemon=True).start()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--to-unix", help="the server's Unix socket")
    where.add_argument("--to-tcp", help="the server's HOST:PORT")
    parser.add_argument("--delay-ms", type=float, required=True, help="each way (a round trip is twice it)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.to_unix:
        connect_to: tuple[int, object] = (socket.AF_UNIX, args.to_unix)
    else:
        host, _, port = args.to_tcp.rpartition(":")
        connect_to = (socket.AF_INET, (host, int(port)))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    print(listener.getsockname()[1], flush=True)
    serve(listener, connect_to, args.delay_ms / 1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A TCP proxy on loopback that delays, drops or resets the connections it forwards (fault tests).

``FaultProxy(upstream_port)`` listens on a free loopback port and forwards each connection to
``127.0.0.1:upstream_port``. ``mode`` may change at any time and applies to every byte after:
``"pass"`` forwards, ``"delay"`` holds each reply chunk ``delay`` seconds, ``"drop"`` reads and
forwards nothing (a server that hangs), ``"reset"`` closes every connection at once with an RST
(a server that went away). Threads are daemons; ``close()`` stops them.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.mode = "pass"
        self.delay = 0.0
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = int(self._server.getsockname()[1])
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="fault-proxy-accept", daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def set(self, mode: str, delay: float = 0.0) -> None:
        self.mode, self.delay = mode, delay
        if mode == "reset":
            self._reset_all()

    def close(self) -> None:
        self._closed.set()
        self._server.close()
        self._reset_all()

    def _reset_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _reset(sock)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _addr = self._server.accept()
            except OSError:
                return
            if self.mode == "reset":
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                _reset(client)  # the server itself is down
                continue
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, reply: bool) -> None:
        try:
            while not self._closed.is_set():
                ready, _, _ = select.select([source], [], [], 0.1)
                if not ready:
                    continue
                if self.mode == "drop":
                    time.sleep(0.05)  # hold the bytes: the peer waits for an answer
                    continue
                data = source.recv(65536)
                if not data:
                    break
                if reply and self.mode == "delay" and self.delay > 0:
                    time.sleep(self.delay)
                sink.sendall(data)
        except (OSError, ValueError):  # the other side was reset meanwhile (fd closed)
            pass
        finally:
            _reset(source)
            _reset(sink)


def _reset(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass

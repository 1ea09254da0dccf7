"""Run a host CLI with no network but loopback, its fake model server still reachable.

``python offline.py PORT SOCKET -- ARGV…`` is started inside a fresh network namespace
(``unshare --net``): it brings up ``lo`` (the only interface there), listens on 127.0.0.1:PORT
and relays each connection to the fake model server's Unix socket (a path in the file system,
which a network namespace does not hide), runs ARGV and exits with its status.  So the host,
and every hook it spawns, can reach 127.0.0.1:PORT and nothing else: a lookup or a connection
to any other address fails at once.  Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def available() -> bool:
    """Whether this machine lets us make a network namespace (root, or user namespaces)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True)
    return probe.returncode == 0


def wrap(argv: list[str], port: int, sock: str) -> list[str]:
    return ["unshare", "--net", "--", sys.executable, "-I", os.path.abspath(__file__),
            str(port), sock, "--", *argv]


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _relay(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


def main(args: list[str]) -> int:
    port, path, sep, argv = int(args[0]), args[1], args[2], args[3:]
    assert sep == "--" and argv
    _loopback_up()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_relay, args=(listener, path), daemon=True).start()
    return subprocess.run(argv).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

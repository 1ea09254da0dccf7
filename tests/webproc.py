"""Run the real server (``aletheia serve``) as a subprocess on 127.0.0.1 and an ephemeral port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
_LISTENING = re.compile(r"Uvicorn running on http://([\d.]+):(\d+)")


@dataclass
class Server:
    url: str
    port: int
    token: str
    proc: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    def client(self, *, auth: bool = True, **kw: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if auth else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kw)  # type: ignore[arg-type]


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["ALETHEIA_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO)
    env.pop("ALETHEIA_API_KEY", None)
    env.update(extra)
    return env


@contextmanager
def running_server(home: Path, *args: str, env: dict[str, str] | None = None,
                   timeout: float = 60,
                   preexec_fn: Callable[[], None] | None = None) -> Iterator[Server]:
    """Start ``aletheia serve --port 0``, wait for uvicorn's "running on" line, yield, stop.
    (``timeout`` is a hang guard for a loaded machine, not a speed check.)"""
    cmd = [sys.executable, "-m", "aletheia", "serve", "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env or server_env(home), cwd=str(home), preexec_fn=preexec_fn)
    log: list[str] = []
    found: list[tuple[str, int]] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.append(line)
            m = _LISTENING.search(line)
            if m and not found:
                found.append((m.group(1), int(m.group(2))))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while not found and proc.poll() is None and time.monotonic() < deadline:
            ready.wait(0.1)
        if not found:
            raise RuntimeError("server did not start:\n" + "".join(log))
        host, port = found[0]
        token = (home / "keys" / "api-token").read_text().strip() if (env or {}).get(
            "ALETHEIA_API_KEY") is None else (env or {})["ALETHEIA_API_KEY"]
        yield Server(f"http://{host}:{port}", port, token, proc, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

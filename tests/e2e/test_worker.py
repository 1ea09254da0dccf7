"""Real worker processes: honcho with the Procfile, SIGKILL mid-job, SIGTERM, compress beside a
worker, and two workers sharing a real Redis queue."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia import db, store
from aletheia.store import MemoryIn
from tests import sessions
from tests.hookproc import run_hook

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
T0 = sessions.T0


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


def query(sql: str, *params: Any) -> list[sqlite3.Row]:
    conn = db.connect()
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def jobs_done(n: int) -> Callable[[], bool]:
    return lambda: query("SELECT count(*) FROM job WHERE state = 'done'")[0][0] >= n


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"ALETHEIA_HOME": str(home), "PYTHONPATH": str(REPO),
                "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


class Proc:
    """A child process with its output in a file (shown when a test fails)."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, cwd: Path = REPO) -> None:
        self.log = log
        self._fh = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.popen = subprocess.Popen(args, env=env, cwd=cwd, stdout=self._fh,
                                      stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            os.kill(self.popen.pid, sig)

    def stop(self, timeout: float = 30) -> int:
        if self._fh.closed:
            return int(self.popen.returncode)
        self.signal(signal.SIGTERM)
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            code = self.popen.wait(10)
        self._fh.close()
        return code


def worker(home: Path, log: Path, *args: str, **env: str) -> Proc:
    return Proc([sys.executable, "-m", "aletheia", "worker", *args], env_for(home, **env), log)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        p.stop()


def some_sessions(conn: sqlite3.Connection, n: int, project: str = "/srv/app") -> None:
    for s in range(n):
        for k in range(3):
            store.write_memory(conn, MemoryIn(
                project=project, kind="tool_event", session_id=f"sess-{s}", source="hook",
                title=f"Bash: $ pytest -q tests/test_mod{s}.py", subtitle="Bash",
                narrative=f'input: {{"command": "pytest -q tests/test_mod{s}.py"}}\n\noutput:\n{k + 3} passed in 0.1s',
                created_at=T0 + s * 1000 + k, event_key=f"{s}-{k}",
            ))
        store.queue_stop(conn, f"sess-{s}", project, "claude-code", now=T0 + s * 1000 + 5)


# --- honcho, real hooks, search ---------------------------------------------------------------


def test_honcho_worker_turns_hook_events_into_searchable_facts(
    aletheia_home: Path, tmp_path: Path, procs: list[Proc]
) -> None:
    project = tmp_path / "textkit"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    root = os.path.realpath(project)
    env = env_for(aletheia_home)
    honcho = Proc([str(BIN / "honcho"), "-f", str(REPO / "Procfile"), "-d", str(REPO), "start", "worker"],
                  env, tmp_path / "honcho.log")
    procs.append(honcho)
    wait_for(lambda: "worker" in honcho.output() and "queue" in honcho.output(), 30, "the worker to start")
    hook_env = dict(env, HOOK_CWD=root)
    for name, payload in sessions.events(root, "sess-e2e", sessions.fake_token(3)):
        assert run_hook("claude-code", name, payload, hook_env).code == 0
    last_hook = time.monotonic()
    wait_for(lambda: query("SELECT count(*) FROM job WHERE state = 'done' AND session_id = 'sess-e2e'")[0][0]
             and not query("SELECT 1 FROM job WHERE state != 'done'")
             and not query("SELECT 1 FROM stop_queue"), 30, "the session's jobs")
    print(f"\nlast hook (SessionEnd) → every job done: {time.monotonic() - last_hook:.2f} s")

    def cli(*args: str) -> Any:
        out = subprocess.run([sys.executable, "-m", "aletheia", *args], env=env, cwd=root,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    hits = cli("search", "--json", "types-PyYAML stubs")
    # Facts and memories are one ranking: a fact about the stubs is on the first page (the
    # CLI's 10), beside the commands.  (Any of them, anywhere on the page: the error fix "…
    # pip install types-PyYAML" is sometimes superseded by the worker, and with term frequency
    # counted the mypy runs whose output repeats the words rank above the facts.)
    assert any(h["type"] == "fact" and "types-PyYAML" in h["title"] for h in hits[:10])
    summary = cli("search", "--json", "--kind", "summary", "slugify separators")
    assert summary and summary[0]["kind"] == "summary"
    facts = cli("facts", "--json")
    assert any(f["text"] == "Run the tests with `pytest -q`." for f in facts)
    assert all(sessions.fake_token(3) not in f["text"] for f in facts)
    assert honcho.stop() is not None
    assert "stopped" in honcho.output()


# --- a worker killed mid-job --------------------------------------------------------------------


def test_sigkill_mid_job_then_a_second_worker_reclaims_it_once(
    conn: sqlite3.Connection, aletheia_home: Path, tmp_path: Path, procs: list[Proc]
) -> None:
    sessions.write(conn, "/home/dev/textkit", "s-kill")
    lease = "2"
    first = worker(aletheia_home, tmp_path / "first.log", "--tick-seconds", "0.3",
                   ALETHEIA_LEASE_SECONDS=lease, ALETHEIA_JOB_FAULT="sleep:120")
    procs.append(first)
    wait_for(lambda: query("SELECT 1 FROM job WHERE state = 'running'"), 30, "the first claim")
    first.signal(signal.SIGKILL)
    first.popen.wait(10)
    job = query("SELECT * FROM job")[0]
    assert job["state"] == "running" and job["attempts"] == 1
    second = worker(aletheia_home, tmp_path / "second.log", "--tick-seconds", "0.3",
                    ALETHEIA_LEASE_SECONDS=lease)
    procs.append(second)
    wait_for(jobs_done(1), 60, "the second worker to finish the job")
    job = query("SELECT * FROM job")[0]
    assert job["attempts"] == 2
    result = json.loads(job["result"])
    assert result["worker"].endswith(f":{second.pid}")
    assert query("SELECT count(*) FROM memory WHERE kind = 'summary'")[0][0] == 1
    assert query("SELECT count(*) FROM memory WHERE kind = 'project_summary'")[0][0] == 1
    n_facts = query("SELECT count(*) FROM fact")[0][0]
    assert n_facts == result["facts"]["added"] and n_facts >= 10
    assert second.stop() == 0


def test_sigterm_lets_the_running_job_finish(
    conn: sqlite3.Connection, aletheia_home: Path, tmp_path: Path, procs: list[Proc]
) -> None:
    sessions.write(conn, "/home/dev/textkit", "s-term")
    w = worker(aletheia_home, tmp_path / "w.log", "--tick-seconds", "0.3",
               ALETHEIA_JOB_FAULT="sleep:1.5")
    procs.append(w)
    wait_for(lambda: query("SELECT 1 FROM job WHERE state = 'running'"), 30, "the claim")
    assert w.stop() == 0
    job = query("SELECT state, attempts FROM job")[0]
    assert (job["state"], job["attempts"]) == ("done", 1), w.output()


# --- compress beside a worker -------------------------------------------------------------------


def test_compress_and_a_running_worker_run_every_job_once(
    conn: sqlite3.Connection, aletheia_home: Path, tmp_path: Path, procs: list[Proc]
) -> None:
    n = 40
    some_sessions(conn, n)
    slow = {"ALETHEIA_JOB_FAULT": "sleep:0.05"}
    w = worker(aletheia_home, tmp_path / "w.log", "--tick-seconds", "0.2", **slow)
    procs.append(w)
    wait_for(lambda: query("SELECT 1 FROM job"), 30, "the first jobs")
    compress = subprocess.Popen([sys.executable, "-m", "aletheia", "compress", "--json"],
                                env=env_for(aletheia_home, **slow), cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stdout, _ = compress.communicate(timeout=120)
    assert compress.returncode == 0
    summary = json.loads(stdout)
    wait_for(jobs_done(n), 60, "every job")
    rows = query("SELECT session_id, attempts, state, result FROM job")
    assert len(rows) == n and {r["session_id"] for r in rows} == {f"sess-{s}" for s in range(n)}
    assert {(r["attempts"], r["state"]) for r in rows} == {(1, "done")}
    ran_by = [json.loads(r["result"])["worker"].rsplit(":", 1)[1] for r in rows]
    assert set(ran_by) <= {str(w.pid), str(compress.pid)}
    assert ran_by.count(str(compress.pid)) == summary["done"]
    assert query("SELECT count(*) FROM memory WHERE kind = 'summary'")[0][0] == n
    print(f"\ncompress ran {summary['done']} of {n} jobs, the worker the rest")
    assert w.stop() == 0


# --- Redis: two workers, one queue ----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (CI installs it: scripts/ci-system-deps)")
    import redis

    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen([exe, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                                 "--appendonly", "no", "--dir", str(tmp_path)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            wait_for(lambda c=client: _pings(c), 10, "redis")  # type: ignore[misc]
        except AssertionError:
            proc.kill()
            proc.wait()
            continue
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            client.close()
            proc.terminate()
            proc.wait(10)
        return
    pytest.fail("could not start redis-server")


def _pings(client: Any) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False


def test_two_workers_share_a_redis_queue(
    conn: sqlite3.Connection, aletheia_home: Path, tmp_path: Path, procs: list[Proc],
    redis_url: str,
) -> None:
    n = 30
    some_sessions(conn, n)
    extra = {"ALETHEIA_QUEUE_URL": redis_url, "ALETHEIA_JOB_FAULT": "sleep:0.1"}
    a = worker(aletheia_home, tmp_path / "a.log", "--tick-seconds", "0.3", **extra)
    b = worker(aletheia_home, tmp_path / "b.log", "--tick-seconds", "0.3", **extra)
    procs.extend([a, b])
    wait_for(jobs_done(n), 90, "every job")
    rows = query("SELECT attempts, state, result FROM job")
    assert len(rows) == n and {(r["attempts"], r["state"]) for r in rows} == {(1, "done")}
    owners = [json.loads(r["result"])["worker"].rsplit(":", 1)[1] for r in rows]
    assert set(owners) == {str(a.pid), str(b.pid)}, (a.output()[-2000:], b.output()[-2000:])
    assert "queue redis://" in a.output()
    assert not (aletheia_home / "queue.db").exists()  # nothing went to the SQLite queue
    print(f"\nworker a ran {owners.count(str(a.pid))} jobs, worker b {owners.count(str(b.pid))}")
    assert a.stop() == 0 and b.stop() == 0

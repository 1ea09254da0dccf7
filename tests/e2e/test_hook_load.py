"""Real hook processes under load and under a held lock: delay is allowed, loss is not."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from aletheia import db, paths, spool
from tests.hookproc import claude_tool, run_hook

pytestmark = pytest.mark.slow

PROCS = 8
RUNS = int(__import__("os").environ.get("HOOK_LOAD_RUNS", "250"))


def _hook_loop(worker: int, env: dict[str, str], cwd: str) -> list[int]:
    codes = []
    for i in range(RUNS):
        payload = claude_tool(f"load-{worker}", cwd, f"echo {worker}-{i}", f"{worker}-{i}", f"toolu_{worker}_{i}")
        codes.append(run_hook("claude-code", "PostToolUse", payload, env).code)
    return codes


def test_8_processes_x_250_runs(hook_env: dict[str, str], tmp_path: Path) -> None:
    cwd = str(tmp_path)
    db.connect().close()
    with ThreadPoolExecutor(PROCS) as pool:
        results = list(pool.map(lambda w: _hook_loop(w, hook_env, cwd), range(PROCS)))
    codes = [c for r in results for c in r]
    conn = db.connect()
    spool.replay(conn)
    titles = {r[0] for r in conn.execute("SELECT title FROM memory")}
    missing = [f"Bash: $ echo {w}-{i}" for w in range(PROCS) for i in range(RUNS)
               if f"Bash: $ echo {w}-{i}" not in titles]
    assert not missing, (missing, sorted(p.name for p in paths.spool_dir().iterdir()))
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == PROCS * RUNS
    assert conn.execute("SELECT count(DISTINCT content_hash) FROM memory").fetchone()[0] == PROCS * RUNS
    assert conn.execute("SELECT count(DISTINCT title) FROM memory").fetchone()[0] == PROCS * RUNS
    assert spool.pending_size() == 0
    conn.close()
    assert len(codes) == PROCS * RUNS and set(codes) == {0}, [c for c in codes if c]


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("CREATE TABLE IF NOT EXISTS lock_probe(x)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
conn.close()
"""


def test_exclusive_lock_for_3s(hook_env: dict[str, str], tmp_path: Path) -> None:
    cwd = str(tmp_path)
    db.connect().close()
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(paths.hub_db()), "3"],
                              stdout=subprocess.PIPE, text=True)
    assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
    started = time.monotonic()
    runs = []
    i = 0
    while time.monotonic() - started < 2.5:
        payload = claude_tool("lk", cwd, f"echo {i}", str(i), f"toolu_lk_{i}")
        runs.append(run_hook("claude-code", "PostToolUse", payload, hook_env))
        i += 1
    locker.wait(timeout=10)
    locker.stdout.close()
    assert runs and all(r.code == 0 for r in runs)
    seconds = sorted(r.seconds for r in runs)
    p90 = seconds[int(0.9 * (len(seconds) - 1))]
    print(f"{len(runs)} hook runs under the lock; p90 {p90 * 1000:.0f} ms, slowest {seconds[-1] * 1000:.0f} ms")
    # Whole-process wall time on a shared 2-core machine: the target (200 ms) holds for the
    # 90th percentile; the slowest must still be far from the 3 s the lock is held.
    assert p90 < 0.200
    assert seconds[-1] < 1.0
    spooled = sum(1 for line in paths.spool_file().read_text().splitlines() if line.strip())
    assert spooled == len(runs)
    # The next hook after the lock is released replays them all.
    run_hook("claude-code", "PostToolUse", claude_tool("lk", cwd, "after", "x", "toolu_after"), hook_env)
    conn = db.connect()
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == len(runs) + 1
    conn.close()
    assert spool.pending_size() == 0

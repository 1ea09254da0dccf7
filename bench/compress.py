"""Compression throughput: N synthetic sessions × M events through ``aletheia compress`` and
through one ``aletheia worker`` process; jobs per second, per-job time (median, p95) and peak
memory (RSS high-water mark).

    .venv/bin/python bench/compress.py [--sessions 1000] [--events 50] [--seed 3]

Fixed seed; each run starts from a copy of the same generated hub.db in a temp home.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

T0 = 1_700_000_000_000
MODULES = ["parser", "lexer", "render", "config", "cache", "auth", "export", "cli", "models", "api"]
ERRORS = [
    ("AssertionError: assert {a} == {b}", "FAILED tests/test_{m}.py::test_{m}_{n} - AssertionError: assert {a} == {b}\n1 failed, {p} passed in 0.4s"),
    ("KeyError: '{m}'", "Traceback (most recent call last):\n  File \"src/app/{m}.py\", line {n}, in load\nKeyError: '{m}'\n1 failed, {p} passed"),
    ("TypeError", "E       TypeError: unsupported operand type(s) for +: 'int' and 'str'\nFAILED tests/test_{m}.py::test_add - TypeError: unsupported operand\n1 failed"),
]


def session_events(rng: random.Random, s: int, project: str, n: int) -> list[dict[str, Any]]:
    """A plausible session: a request, reads, a failing run, edits, passing runs, lint, a reply."""
    from aletheia.store import MemoryIn

    root = project
    m = rng.choice(MODULES)
    sid = f"bench-{s:05d}"
    out: list[MemoryIn] = []
    at = T0 + s * 3_600_000

    def add(**kw: Any) -> None:
        nonlocal at
        at += rng.randint(2_000, 40_000)
        out.append(MemoryIn(project=project, session_id=sid, tool="claude-code", source="hook",
                            created_at=at, event_key=f"{sid}-{len(out)}", **kw))

    def bash(cmd: str, output: str, failed: bool = False) -> None:
        add(kind="tool_event", title=f"Bash: $ {cmd}" + (" (failed)" if failed else ""), subtitle="Bash",
            narrative=f"input: {json.dumps({'command': cmd})}\n\noutput:\n{output}",
            concepts=["Bash"] + (["error"] if failed else []))

    def tool(name: str, path: str, tool_input: dict[str, Any], output: str) -> None:
        add(kind="tool_event", title=f"{name} {root}/{path}", subtitle=name,
            narrative=f"input: {json.dumps(tool_input)}\n\noutput:\n{output}", files=[f"{root}/{path}"],
            concepts=[name])

    request = f"Fix the failing test for {m} (issue #{rng.randint(100, 999)}). Always keep the public API of {m} stable."
    add(kind="prompt", title=request, narrative=request)
    err, template = rng.choice(ERRORS)
    fields = {"m": m, "n": rng.randint(1, 40), "a": rng.randint(1, 9), "b": rng.randint(10, 99), "p": rng.randint(5, 80)}
    while len(out) < n - 2:
        step = len(out) % 8
        if step == 1:
            tool("Read", f"src/app/{m}.py", {"file_path": f"{root}/src/app/{m}.py"},
                 f'"""The {m} module: {rng.choice(["loads", "parses", "renders", "caches"])} things."""\n\nimport os\n' + "x = 1\n" * rng.randint(5, 60))
        elif step == 2:
            bash("pytest -q", template.format(**fields), failed=True)
        elif step == 3:
            tool("Edit", f"src/app/{m}.py", {"file_path": f"{root}/src/app/{m}.py",
                 "old_string": f"    return a + {fields['a']}", "new_string": f"    return a + {fields['b']}"}, "ok")
        elif step == 4:
            bash("pytest -q", f"{fields['p'] + 1} passed in 0.{rng.randint(1, 9)}s")
        elif step == 5:
            bash("ruff check .", "All checks passed!")
        elif step == 6:
            bash(f"grep -rn {m} src", "\n".join(f"src/app/{m}.py:{i}: {m}" for i in range(rng.randint(1, 30))))
        elif step == 7:
            tool("Read", f"tests/test_{m}.py", {"file_path": f"{root}/tests/test_{m}.py"},
                 f'"""Tests for app.{m}."""\n' + "def test_x():\n    assert True\n" * rng.randint(2, 20))
        else:
            bash("mypy src", "Success: no issues found in 12 source files")
    reply = (f"Fixed it. The root cause was an off-by-one in `{m}.load()`; I chose to keep the "
             f"signature and fix the arithmetic instead of adding a parameter. All tests pass.")
    add(kind="response", title=reply, narrative=reply)
    add(kind="prompt", title=f"Thanks, that is all for {m}.", narrative=f"Thanks, that is all for {m}.")
    return [{"m": x, "session": sid, "project": project, "at": at} for x in out]


def generate(home: Path, sessions: int, events: int, seed: int) -> tuple[int, float]:
    os.environ["ALETHEIA_HOME"] = str(home)
    from aletheia import db, store

    rng = random.Random(seed)
    conn = db.connect()
    projects = [f"/home/dev/project-{i:02d}" for i in range(20)]
    started = time.monotonic()
    total = 0
    for s in range(sessions):
        items = session_events(rng, s, rng.choice(projects), events)
        rows = [store.prepare(i["m"]) for i in items]
        store.insert_rows(conn, rows)
        store.queue_stop(conn, items[0]["session"], items[0]["project"], "claude-code", now=items[-1]["at"])
        total += len(rows)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return total, time.monotonic() - started


def job_times(home: Path) -> list[float]:
    conn = sqlite3.connect(home / "hub.db")
    try:
        rows = conn.execute("SELECT finished_at - started_at FROM job WHERE state = 'done'").fetchall()
        return [float(r[0]) for r in rows]
    finally:
        conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def child_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ALETHEIA_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO)
    for name in ("ALETHEIA_PROVIDER", "ALETHEIA_QUEUE_URL", "ALETHEIA_JOB_FAULT"):
        env.pop(name, None)
    return env


def run_compress(home: Path) -> dict[str, Any]:
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "aletheia", "compress", "--json"],
                            env=child_env(home), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    summary = json.loads(out)
    return {"jobs": summary["done"], "wall": wall, "drain": summary["seconds"],
            "rss_mb": usage.ru_maxrss / 1024, "facts": summary["facts_added"],
            "merged": summary["facts_merged"], "status": status, "times": job_times(home)}


def _hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_worker(home: Path, expected: int) -> dict[str, Any]:
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "aletheia", "worker"], env=child_env(home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = home / "hub.db"
    peak = 0.0
    done = 0
    while done < expected and proc.poll() is None:
        time.sleep(0.25)
        peak = max(peak, _hwm_mb(proc.pid))
        conn = sqlite3.connect(db, timeout=10)
        try:
            done = conn.execute("SELECT count(*) FROM job WHERE state = 'done'").fetchone()[0]
        finally:
            conn.close()
    wall = time.monotonic() - started
    conn = sqlite3.connect(db)
    first, last = conn.execute("SELECT min(created_at), max(finished_at) FROM job").fetchone()
    conn.close()
    peak = max(peak, _hwm_mb(proc.pid))
    proc.terminate()
    proc.wait(60)
    return {"jobs": done, "wall": wall, "busy": (last - first) / 1000, "rss_mb": peak,
            "times": job_times(home)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="aletheia-bench-"))
    try:
        seed_home = base / "seed"
        memories, gen_s = generate(seed_home, args.sessions, args.events, args.seed)
        print(f"generated {args.sessions} sessions × {args.events} events = {memories} memories "
              f"in {gen_s:.1f} s (seed {args.seed}); hub.db {(seed_home / 'hub.db').stat().st_size / 1e6:.1f} MB")
        homes = {}
        for name in ("compress", "worker"):
            homes[name] = base / name
            shutil.copytree(seed_home, homes[name])
        c = run_compress(homes["compress"])
        w = run_worker(homes["worker"], args.sessions)
        print()
        print(f"{'path':<22}{'jobs':>6}{'seconds':>10}{'jobs/s':>9}{'job ms p50':>12}{'job ms p95':>12}{'peak RSS MB':>13}")
        print(f"{'compress (in-process)':<22}{c['jobs']:>6}{c['drain']:>10.1f}{c['jobs'] / c['drain']:>9.1f}"
              f"{statistics.median(c['times']):>12.1f}{pct(c['times'], 0.95):>12.1f}{c['rss_mb']:>13.1f}")
        print(f"{'one worker process':<22}{w['jobs']:>6}{w['busy']:>10.1f}{w['jobs'] / w['busy']:>9.1f}"
              f"{statistics.median(w['times']):>12.1f}{pct(w['times'], 0.95):>12.1f}{w['rss_mb']:>13.1f}")
        print()
        print(f"compress: {c['facts']} facts added, {c['merged']} merged; wall {c['wall']:.1f} s "
              f"including start-up. worker: first job created → last job done {w['busy']:.1f} s "
              f"(wall {w['wall']:.1f} s from process start; the ticker runs every 2 s).")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

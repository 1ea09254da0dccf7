"""Whole-process latency of ``aletheia hook claude-code PostToolUse`` with a realistic 8 KB payload.

Each round runs, in the same loop, the baseline (``sys.executable -c pass`` — the interpreter
that runs the hook, never a PATH shim) and the hook in both forms a host can be given: the
console script and the direct ``python -I -S hooks/run.py`` command the installers write.
Prints p50/p95 and the p95 ratio against the baseline.  Fixed seed; a temp ALETHEIA_HOME.

The hook's modules are byte-compiled first, as ``pip install`` does: with
PYTHONDONTWRITEBYTECODE set (as on CI machines) an editable checkout would otherwise
recompile every module on every run, which no installed hook does.

    python bench/hook_latency.py [--rounds 200] [--locked] [--compare CHECKOUT]

``--locked`` holds an exclusive lock on hub.db for the whole run (a process in ``BEGIN
EXCLUSIVE``): every hook then waits its 50 ms and spools.  The figure to read is how long a
host waits for a hook while the store is locked (the target: p90 under 200 ms, the slowest
far below the lock's hold); this was a timed test before (tests must not time).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def payload(rng: random.Random, i: int, cwd: str) -> bytes:
    lines = []
    while sum(len(x) + 1 for x in lines) < 7600:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        lines.append(f"tests/test_{word}.py::test_{word}_{rng.randint(1, 99)} PASSED [{rng.randint(1, 99)}%]")
    body = {
        "session_id": "bench-session", "transcript_path": "/dev/null", "cwd": cwd,
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests/", "description": "run the tests"},
        "tool_response": {"stdout": "\n".join(lines), "stderr": "", "interrupted": False},
        "tool_use_id": f"toolu_{i:06d}", "duration_ms": 1234,
    }
    return json.dumps(body).encode()


def timed(cmd: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s: user + system of the child, what a shared machine distorts least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, input=data, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--locked", action="store_true",
                        help="hold an exclusive lock on hub.db for the whole run")
    parser.add_argument("--compare", type=Path, default=None, metavar="CHECKOUT",
                        help="another checkout (git worktree add /tmp/base REF): its direct hook "
                             "runs in the same loop, on a store of its own")
    args = parser.parse_args()
    rng = random.Random(42)
    for tree in (REPO, args.compare) if args.compare else (REPO,):
        for package in ("aletheia", "hooks"):
            compileall.compile_dir(str(tree / package), quiet=1)
    script = Path(sys.executable).parent / "aletheia"
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd, \
            tempfile.TemporaryDirectory() as other_home:
        env = {**os.environ, "ALETHEIA_HOME": home}
        forms = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "aletheia hook (console script)": [str(script), "hook", "claude-code", "PostToolUse"],
            "python -I -S hooks/run.py": [sys.executable, "-I", "-S", str(REPO / "hooks" / "run.py"),
                                          "claude-code", "PostToolUse"],
        }
        if not script.exists():
            forms["aletheia hook (console script)"] = [sys.executable, "-m", "aletheia", "hook",
                                                       "claude-code", "PostToolUse"]
        envs = {name: env for name in forms}
        if args.compare:
            name = f"{args.compare}/hooks/run.py"
            forms[name] = [sys.executable, "-I", "-S", str(args.compare / "hooks" / "run.py"),
                           "claude-code", "PostToolUse"]
            envs[name] = {**os.environ, "ALETHEIA_HOME": other_home}  # its own schema
        times: dict[str, list[float]] = {k: [] for k in forms}
        cpu: dict[str, list[float]] = {k: [] for k in forms}
        data0 = payload(rng, 0, cwd)
        for name, cmd in forms.items():  # warm caches and create the schema
            timed(cmd, data0, envs[name])
        locker = None
        if args.locked:
            locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(Path(home) / "hub.db")],
                                      stdout=subprocess.PIPE, text=True)
            assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        try:
            for i in range(args.rounds):
                data = payload(rng, i + 1, cwd)
                for name, cmd in forms.items():
                    wall, used = timed(cmd, data, envs[name])
                    times[name].append(wall)
                    cpu[name].append(used)
        finally:
            if locker is not None:
                locker.kill()
                locker.wait()
        spooled = 0
        spool_dir = Path(home) / "spool"
        if spool_dir.exists():
            spooled = sum(p.read_bytes().count(b"\n") for p in spool_dir.glob("hook-spool*"))
        base = times["python -c pass"]
        print(f"uptime: {os.getloadavg()}")
        print(f"payload {len(data0)} bytes, {args.rounds} rounds, {sys.executable}"
              + (f"; store locked throughout: {spooled} items spooled" if args.locked else ""))
        print(f"{'command':34} {'p50 ms':>8} {'p95 ms':>8} {'p95 ratio':>10}   "
              f"{'CPU p50':>8} {'CPU p95':>8}")
        for name, values in times.items():
            ratio = pct(values, 0.95) / pct(base, 0.95)
            print(f"{name:34} {statistics.median(values) * 1000:8.1f} {pct(values, 0.95) * 1000:8.1f} "
                  f"{ratio:10.2f}   {statistics.median(cpu[name]) * 1000:8.1f} "
                  f"{pct(cpu[name], 0.95) * 1000:8.1f}   p90 {pct(values, 0.90) * 1000:.1f}, "
                  f"max {max(values) * 1000:.1f}")


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("CREATE TABLE IF NOT EXISTS lock_probe(x)")
print("locked", flush=True)
time.sleep(3600)
"""


if __name__ == "__main__":
    main()

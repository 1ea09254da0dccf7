"""CLI start-up: `aletheia search`, `context` and `get` against the bare interpreter.

Each command runs as a fresh process (what a user or an agent's shell pays), round-robin with
``python -c pass`` in the same loop so the machine's load hits all of them alike; the figures
are the median and p95 wall time and CPU time (user + system: what a shared machine distorts
least) and the ratio of medians to the baseline.  The store is a temp
ALETHEIA_HOME with a few hundred memories in one project, so each command does its real work.
The package is byte-compiled first, as pip does for an install.

    python bench/cli_startup.py [--repeat 21] [--memories 300]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORDS = ("deploy staging migrate alembic pytest fixture docker compose redis cache token "
         "refresh bundle webpack vite router schema index query latency retry backoff").split()


def _seed(home: Path, project: Path, n: int, rng: random.Random) -> str:
    env = {**os.environ, "ALETHEIA_HOME": str(home), "ALETHEIA_PROJECT": "bench-project"}
    lines = []
    for i in range(n):
        words = rng.sample(WORDS, 6)
        lines.append(json.dumps({"project": "bench-project", "session_id": f"s{i // 20}",
                                 "kind": rng.choice(["prompt", "tool_event", "note"]),
                                 "title": " ".join(words[:4]), "narrative": " ".join(words) * 3,
                                 "created_at": 1_700_000_000_000 + i * 60_000}))
    subprocess.run([sys.executable, "-m", "aletheia", "capture", "--jsonl"], input="\n".join(lines),
                   text=True, env=env, cwd=project, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-m", "aletheia", "search", "deploy", "--json", "-n", "1"],
                         text=True, env=env, cwd=project, check=True, capture_output=True)
    first: str = json.loads(out.stdout)[0]["id"]
    return first


def _time(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run; CPU time (user + system of the child) is what a busy
    machine distorts least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--memories", type=int, default=300)
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args()
    import aletheia

    compileall.compile_dir(str(Path(aletheia.__file__).resolve().parent), quiet=2)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "proj"
        project.mkdir()
        memory_id = _seed(home, project, args.memories, rng)
        env = {**os.environ, "ALETHEIA_HOME": str(home), "ALETHEIA_PROJECT": "bench-project"}
        me = [sys.executable, "-m", "aletheia"]
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "search": [*me, "search", "deploy", "staging"],
            "context": [*me, "context"],
            "get": [*me, "get", memory_id],
        }
        for cmd in cases.values():  # warm the page cache and the store's schema check
            _time(cmd, env, project)
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                wall, used = _time(cmd, env, project)
                times[name].append(wall)
                cpu[name].append(used)
    base = statistics.median(times["python -c pass"])
    cpu_base = statistics.median(cpu["python -c pass"])
    load = os.getloadavg()
    print(f"cli start-up, {args.repeat} runs each, round-robin; {args.memories} memories; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {sys.executable}")
    print(f"install: {_install_kind()}")
    print(f"{'command':16} {'wall median':>11} {'wall p95':>9} {'ratio':>6}   "
          f"{'CPU median':>10} {'CPU p95':>8} {'ratio':>6}")
    for name, values in times.items():
        values.sort()
        used = sorted(cpu[name])
        med, cmed = statistics.median(values), statistics.median(used)
        print(f"{name:16} {med:9.1f}ms {_p95(values):7.1f}ms {med / base:6.2f}   "
              f"{cmed:8.1f}ms {_p95(used):6.1f}ms {cmed / cpu_base:6.2f}")


def _install_kind() -> str:
    """An editable install (a checkout's dev venv) makes ``site`` import its finder and pathlib
    in every process, ``python -c pass`` included: ~10 ms on each side of the ratio, which
    makes it look far better than what a user's installed ``aletheia`` pays."""
    if any(name.startswith("__editable__") for name in sys.modules):
        return ("editable (a checkout's venv: every process, the baseline too, pays the editable "
                "finder; a user's install has a lower baseline and a higher ratio)")
    return "regular (as scripts/install makes it)"


def _p95(values: list[float]) -> float:
    return values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]


if __name__ == "__main__":
    main()

"""CLI start-up: `aletheia search`, `context` and `get` against the bare interpreter.

Each command runs as a fresh process (what a user or an agent's shell pays), round-robin with
``python -c pass`` in the same loop so the machine's load hits all of them alike; the figures
are the median and p95 wall time and the ratio of medians to the baseline.  The store is a temp
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
    env = {**os.environ, "ALETHEIA_HOME": str(home)}
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


def _time(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return (time.perf_counter() - start) * 1000


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
        (project / ".aletheia-project").write_text("bench-project\n")
        memory_id = _seed(home, project, args.memories, rng)
        env = {**os.environ, "ALETHEIA_HOME": str(home)}
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
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                times[name].append(_time(cmd, env, project))
    base = statistics.median(times["python -c pass"])
    load = os.getloadavg()
    print(f"cli start-up, {args.repeat} runs each, round-robin; {args.memories} memories; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {sys.executable}")
    print(f"{'command':16} {'median ms':>10} {'p95 ms':>8} {'ratio':>6}")
    for name, values in times.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        med = statistics.median(values)
        print(f"{name:16} {med:10.1f} {p95:8.1f} {med / base:6.2f}")


if __name__ == "__main__":
    main()

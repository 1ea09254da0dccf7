"""The longest write-lock hold while a 5,000-event session compresses beside 8 writers.

A hook waits at most 50 ms for hub.db's write lock, then spools; ``aletheia save`` waits 3 s,
then fails.  So compression must hold the lock only in short transactions.  This bench:

1. builds a store with one session of ``--events`` events (and ``--others`` compressed
   sessions of 50 in the same project, so the project summary and fact dedupe have work);
2. starts ``--writers`` writers (half real hook processes, half ``aletheia save``) looping;
3. compresses the big session in this process (``JobRunner.run``, rule extractor), timing
   every transaction it runs from ``BEGIN IMMEDIATE`` returning to ``COMMIT`` returning;
4. a probe thread takes the write lock every 5 ms and records how long it waited (an upper
   bound on anyone's hold, compression or writers);
5. stops the writers, counts hooks that spooled and why, from the spool's tally (``locked``:
   the 50 ms wait for the lock ran out; ``watchdog-db``: the 150 ms budget ran out while in
   hub.db; ``watchdog``: it ran out before, on a busy CPU), ``save`` runs that failed, and
   checks that every writer's item is in the store after a replay (nothing lost).

The same writers run alone first for as long (the baseline): spools there are the machine's
load, not compression's.  Fixed seed; repeats; medians.  Timing on a shared machine is noisy:
``uptime`` is printed beside the figures.

    .venv/bin/python bench/lock_hold.py [--events 5000] [--writers 8] [--repeats 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROJECT = "/home/dev/lock-bench"
from aletheia.tasks import compress as _compress  # noqa: E402  (after the sys.path line)

DEFAULT_BATCHES = (_compress.FACT_BATCH, _compress.MARK_BATCH)


def generate(home: Path, events: int, others: int, seed: int) -> None:
    os.environ["ALETHEIA_HOME"] = str(home)
    from aletheia import db, store
    from aletheia.tasks.compress import JobRunner, drain
    from bench.compress import session_events

    rng = random.Random(seed)
    conn = db.connect()
    for s in range(others):
        items = session_events(rng, s, PROJECT, 50)
        store.insert_rows(conn, [store.prepare(i["m"]) for i in items])
        store.queue_stop(conn, items[0]["session"], PROJECT, "claude-code", now=items[-1]["at"])
    drain(conn, JobRunner(use_provider=False))  # the earlier sessions are compressed already
    items = session_events(rng, 90_000, PROJECT, events)
    rows = [store.prepare(i["m"]) for i in items]
    for start in range(0, len(rows), 1000):
        store.insert_rows(conn, rows[start:start + 1000])
    store.queue_stop(conn, items[0]["session"], PROJECT, "claude-code", now=items[-1]["at"])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _caller() -> str:
    """The innermost aletheia frame that opened the transaction (for the longest holds)."""
    import traceback

    frames = [f for f in traceback.extract_stack()[:-3] if "aletheia" in f.filename
              or "/tasks/" in f.filename]
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"


@contextlib.contextmanager
def timed_transactions(holds: list[float], cpus: list[float], callers: list[str]) -> Iterator[None]:
    """Replace ``aletheia.db.tx`` (and every module's imported copy) with one that records how
    long each outermost transaction held the write lock (wall time, ``COMMIT`` included: an
    upper bound, since a checkpoint after the commit runs outside the lock) and the CPU time
    this thread spent in it (on a loaded machine the difference is time spent descheduled)."""
    from aletheia import db

    original = db.tx

    @contextlib.contextmanager
    def tx(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        if conn.in_transaction:
            with original(conn) as c:
                yield c
            return
        conn.execute("BEGIN IMMEDIATE")
        got = time.perf_counter()
        cpu = time.thread_time()
        where = _caller()
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            holds.append(time.perf_counter() - got)
            cpus.append(time.thread_time() - cpu)
            callers.append(where)
            raise
        conn.execute("COMMIT")
        holds.append(time.perf_counter() - got)
        cpus.append(time.thread_time() - cpu)
        callers.append(where)

    patched = []
    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "tx", None) is original:
            patched.append(module)
            module.tx = tx  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in patched:
            module.tx = original  # type: ignore[attr-defined]


class Writers:
    """Half hook processes, half ``aletheia save`` processes, looping until stopped."""

    def __init__(self, home: Path, n: int, tag: str) -> None:
        self.home = home
        self.n = n
        self.tag = tag
        self.stop = threading.Event()
        self.hooks: list[tuple[str, float]] = []
        self.saves: list[tuple[str, int, float, str]] = []
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(n)]
        self.env = {**os.environ, "ALETHEIA_HOME": str(home), "PYTHONPATH": str(REPO)}
        for name in ("ALETHEIA_PROVIDER", "ALETHEIA_QUEUE_URL", "ALETHEIA_HOOK_FAULT"):
            self.env.pop(name, None)

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(120)

    def _loop(self, i: int) -> None:
        k = 0
        while not self.stop.is_set():
            k += 1
            key = f"{self.tag}-{i}-{k}"
            started = time.perf_counter()
            if i % 2 == 0:
                payload = {"session_id": f"writer-{self.tag}-{i}", "cwd": "/tmp",
                           "hook_event_name": "PostToolUse", "tool_name": "Bash",
                           "tool_input": {"command": f"echo {key}"},
                           "tool_response": {"stdout": key}, "tool_use_id": key}
                subprocess.run([sys.executable, "-m", "aletheia", "hook", "claude-code",
                                "PostToolUse"], input=json.dumps(payload).encode(),
                               env={**self.env, "ALETHEIA_PROJECT": PROJECT},
                               capture_output=True, check=False)
                self.hooks.append((key, time.perf_counter() - started))
            else:
                proc = subprocess.run([sys.executable, "-m", "aletheia", "save", "--project",
                                       PROJECT, f"note {key}"], env=self.env,
                                      capture_output=True, text=True, check=False)
                self.saves.append((key, proc.returncode, time.perf_counter() - started,
                                   proc.stderr.strip()[-200:]))


def probe(home: Path, stop: threading.Event, waits: list[float]) -> None:
    conn = sqlite3.connect(home / "hub.db", timeout=120, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 120000")
    try:
        while not stop.is_set():
            started = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            waits.append(time.perf_counter() - started)
            conn.execute("COMMIT")
            time.sleep(0.005)
    finally:
        conn.close()


def spooled_reasons(home: Path) -> dict[str, int]:
    """Items hooks spooled, by reason, from the spool's tally (spooled items are replayed by the
    next writer, so the spool files alone would miss most of them)."""
    from aletheia import spool_reserve

    by_why = spool_reserve.spooled_tally(str(home / "spool"))["by_why"]
    return {str(k): int(v) for k, v in by_why.items()}


def missing_items(home: Path, writers: Writers) -> int:
    from aletheia import db, spool

    conn = db.connect(home / "hub.db")
    try:
        spool.replay(conn, home / "spool" / "hook-spool.jsonl")
        titles = {r[0] for r in conn.execute("SELECT title FROM memory WHERE project = ?", (PROJECT,))}
    finally:
        conn.close()
    wanted = [f"Bash: $ echo {k}" for k, _ in writers.hooks]
    wanted += [f"note {k}" for k, code, _, _ in writers.saves if code == 0]
    return sum(1 for w in wanted if w not in titles)


def one_run(seed_home: Path, base: Path, args: argparse.Namespace, r: int) -> dict[str, Any]:
    from aletheia import db
    from aletheia.tasks import compress, jobs
    from aletheia.tasks.compress import JobRunner

    out: dict[str, Any] = {}
    batches = DEFAULT_BATCHES
    for phase in ("baseline", "compress", "one-batch") if args.one_batch else ("baseline", "compress"):
        compress.FACT_BATCH, compress.MARK_BATCH = (10**9, 10**9) if phase == "one-batch" else batches
        home = base / f"run{r}-{phase}"
        shutil.copytree(seed_home, home)
        with contextlib.suppress(FileNotFoundError):
            (home / "spool" / "tally").unlink()  # count this phase's spools only
        os.environ["ALETHEIA_HOME"] = str(home)
        writers = Writers(home, args.writers, f"{phase}{r}")
        stop_probe = threading.Event()
        waits: list[float] = []
        prober = threading.Thread(target=probe, args=(home, stop_probe, waits), daemon=True)
        holds: list[float] = []
        callers: list[str] = []
        cpus: list[float] = []
        writers.start()
        prober.start()
        time.sleep(1.0)  # writers under way before the job starts
        started = time.perf_counter()
        if phase != "baseline":
            conn = db.connect(home / "hub.db", busy_ms=10_000)
            try:
                jobs.jobs_from_stop_queue(conn, now=int(time.time() * 1000))
                with timed_transactions(holds, cpus, callers):
                    outcome = JobRunner(use_provider=False).run(conn)
            finally:
                conn.close()
            assert outcome is not None and outcome.state == "done", outcome
            out["memories"] = outcome.memories
            out["facts"] = outcome.facts_added
        else:
            time.sleep(args.baseline_s)
        seconds = time.perf_counter() - started
        writers.finish()
        stop_probe.set()
        prober.join(60)
        reasons = spooled_reasons(home)
        failed_saves = [s for s in writers.saves if s[1] != 0]
        out[phase] = {
            "seconds": seconds, "hooks": len(writers.hooks), "saves": len(writers.saves),
            "spooled": reasons, "saves_failed": len(failed_saves),
            "save_errors": sorted({s[3] for s in failed_saves})[:3],
            "probe_max_wait": max(waits) if waits else 0.0,
            "holds": holds, "cpus": cpus, "missing": missing_items(home, writers),
            "longest": sorted(zip(holds, cpus, callers, strict=True), reverse=True)[:3],
        }
        shutil.rmtree(home, ignore_errors=True)
    compress.FACT_BATCH, compress.MARK_BATCH = batches
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--others", type=int, default=20)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-s", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--one-batch", action="store_true",
                    help="also compress with every fact and mark in one batch (what the job did "
                         "before it wrote in short transactions), for the ratio")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="aletheia-lockhold-"))
    try:
        seed_home = base / "seed"
        generate(seed_home, args.events, args.others, args.seed)
        runs = [one_run(seed_home, base, args, r) for r in range(args.repeats)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"uptime: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs)")
    print(f"session of {args.events} events (+{args.others} compressed sessions of 50), "
          f"{args.writers} writers ({(args.writers + 1) // 2} hook loops, {args.writers // 2} "
          f"`aletheia save` loops), seed {args.seed}, {args.repeats} runs\n")
    print(f"{'run':>3} {'job s':>7} {'txs':>5} {'hold max ms':>12} {'hold p95 ms':>12} "
          f"{'probe max ms':>13} {'hooks':>6} {'spooled: locked/wd-db/wd/other':>31} "
          f"{'saves':>6} {'failed':>7} {'lost':>5}")
    for phase in ("baseline", "compress", "one-batch"):
        for r, run in enumerate(runs):
            if phase not in run:
                continue
            p = run[phase]
            sp = dict(p["spooled"])
            locked, watchdog = sp.pop("locked", 0), sp.pop("watchdog", 0)
            waiting_db = sp.pop("watchdog-db", 0)
            holds_ms = [h * 1000 for h in p["holds"]]
            print(f"{r:>3} {p['seconds']:7.1f} {len(holds_ms):>5} "
                  f"{(max(holds_ms) if holds_ms else 0):12.1f} {pct(holds_ms, 0.95):12.1f} "
                  f"{p['probe_max_wait'] * 1000:13.1f} {p['hooks']:>6} "
                  f"{f'{locked}/{waiting_db}/{watchdog}/{sum(sp.values())}':>31} {p['saves']:>6} "
                  f"{p['saves_failed']:>7} {p['missing']:>5}   {phase}")
    maxes = [max(r["compress"]["holds"]) * 1000 for r in runs]
    cpu_maxes = [max(r["compress"]["cpus"]) * 1000 for r in runs]
    probe_c = [r["compress"]["probe_max_wait"] * 1000 for r in runs]
    probe_b = [r["baseline"]["probe_max_wait"] * 1000 for r in runs]
    locked = [r["compress"]["spooled"].get("locked", 0) for r in runs]
    print()
    print(f"compression's longest write-lock hold: median {statistics.median(maxes):.1f} ms, "
          f"max {max(maxes):.1f} ms (target ≤ 100 ms); CPU time in the longest: median "
          f"{statistics.median(cpu_maxes):.1f} ms, max {max(cpu_maxes):.1f} ms")
    print(f"probe's longest wait for the lock: compressing median {statistics.median(probe_c):.1f} ms "
          f"vs writers alone {statistics.median(probe_b):.1f} ms "
          f"(ratio {statistics.median(probe_c) / max(statistics.median(probe_b), 1e-9):.2f})")
    print(f"hooks spooled because of the lock while compressing: {locked} "
          f"(target 0); saves failed: {[r['compress']['saves_failed'] for r in runs]}; "
          f"items lost: {[r['compress']['missing'] + r['baseline']['missing'] for r in runs]}")
    if args.one_batch:
        one = [max(r["one-batch"]["holds"]) * 1000 for r in runs]
        one_cpu = [max(r["one-batch"]["cpus"]) * 1000 for r in runs]
        print(f"in one batch (as before): longest hold median {statistics.median(one):.1f} ms "
              f"(CPU {statistics.median(one_cpu):.1f} ms); short transactions / one batch: wall "
              f"{statistics.median(maxes) / statistics.median(one):.2f}, CPU "
              f"{statistics.median(cpu_maxes) / statistics.median(one_cpu):.2f}; hooks spooled "
              f"because of the lock: {[r['one-batch']['spooled'].get('locked', 0) for r in runs]}")
    for r in runs:
        print("longest holds (wall / CPU):", ", ".join(
            f"{h * 1000:.0f}/{u * 1000:.0f} ms {c}" for h, u, c in r["compress"]["longest"]))
        if r["compress"]["save_errors"]:
            print("save errors:", r["compress"]["save_errors"])


if __name__ == "__main__":
    main()

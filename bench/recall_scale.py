"""Recall at scale: the LoCoMo questions, project-scoped, alone and with distractor copies of
every conversation under other project names, so a scoped query's answer is seen not to depend
on what other projects hold.

    .venv/bin/python bench/recall_scale.py [--sizes 360000,1000000] [--keep DIR] [--repeat 3]

Stage 0 is the ten conversations alone (5,882 memories, each conversation its own project,
stored through the real write API).  Each further stage adds whole copies of all ten (project
``copy-K/<conversation>``, new ids and hashes, same text) with one SQL statement per copy, until
the store holds at least the stage's size (60 copies → 358,802 memories, 169 → 999,940).  At
each stage every question runs scoped to its own conversation: evidence fraction and any-hit in
the top 5 (as ``bench/locomo.py``), and the query time p50/p95, wall and CPU (each question
timed as the best of ``--repeat`` runs; on a shared machine the CPU time is the steadier
figure).  The top 5 is compared with stage 0's as evidence turn ids: the share of questions
whose top 5 is the same list is printed too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import locomo  # noqa: E402  (the loader and the scorer are shared)

_COPY = """
INSERT INTO memory(id, project, scope, session_id, tool, kind, title, subtitle, narrative, facts,
                   concepts, files, created_at, pinned, importance, source, content_hash,
                   idents)
SELECT id || '-c' || :k, 'copy-' || :k || '/' || substr(project, 8), scope,
       session_id || '-c' || :k, tool, kind, title, subtitle, narrative, facts, concepts, files,
       created_at, pinned, importance, source, content_hash || '-c' || :k, idents
FROM memory WHERE project LIKE 'locomo/%'
"""


def grow(conn: Any, target: int) -> float:
    """Add copies until the store holds ``target`` memories; returns the seconds spent."""
    from aletheia.db import tx

    start = time.perf_counter()
    count = int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])
    k = int(conn.execute("SELECT count(DISTINCT project) FROM memory").fetchone()[0]) // 10
    while count < target:
        with tx(conn):
            conn.execute(_COPY, {"k": k})
        count = int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])
        k += 1
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - start


def measure(conn: Any, loaded: Any, repeat: int) -> tuple[dict[str, Any], list[list[str]]]:
    from aletheia.search import SearchQuery, search

    scored = []
    ranked: list[list[str]] = []  # as evidence ids: memory ids differ from store to store
    times: list[float] = []
    cpu: list[float] = []
    for q in loaded.questions:
        query = SearchQuery(q=q.text, project=q.project, limit=locomo.TOP_K, semantic=False,
                            include_facts=False)
        best = best_cpu = float("inf")
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            hits = search(conn, query)
            best = min(best, (time.perf_counter() - start) * 1000)
            best_cpu = min(best_cpu, (time.process_time() - start_cpu) * 1000)
        ids = [h.id for h in hits]
        ranked.append([loaded.memory_to_dia.get(i, "?") for i in ids])
        times.append(best)
        cpu.append(best_cpu)
        scored.append((q, locomo.score(q, loaded, ids, best)))
    figs = locomo.figures(scored)
    ordered = sorted(times)
    figs["p50"] = round(statistics.median(times), 3)
    figs["p95"] = round(ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))], 3)
    figs["cpu_p50"] = round(statistics.median(cpu), 3)
    figs["cpu_p95"] = round(locomo.p95(cpu), 3)
    return figs, ranked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=None, help="locomo10.json")
    parser.add_argument("--sizes", default="360000,1000000")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the store here and keep it (reused when it exists)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per question; the best counts (1: every run counts)")
    args = parser.parse_args(argv)
    import json

    data = json.loads((args.data or locomo.default_data()).read_text())
    from aletheia import db

    def row(count: int, figs: dict[str, Any], same: float, note: str = "") -> None:
        print(f"{count:>9} {figs['all']['evidence']:>8.1f}% {figs['all']['any_hit']:>7.1f}% "
              f"{figs['cat1-4']['evidence']:>9.1f}% {same:>9.1f}% {figs['p50']:>7.2f} "
              f"{figs['p95']:>7.2f} {figs['cpu_p50']:>7.2f} {figs['cpu_p95']:>7.2f}{note}",
              flush=True)

    # Stage 0, the conversations alone, in a store of their own.
    with tempfile.TemporaryDirectory(prefix="aletheia-recall-alone-") as alone_home:
        os.environ["ALETHEIA_HOME"] = alone_home
        conn = db.connect()
        loaded = locomo.load(conn, data)
        print(f"{'memories':>9} {'evidence':>9} {'any-hit':>8} {'cat1-4 ev':>10} "
              f"{'same top 5':>10} {'p50 ms':>7} {'p95 ms':>7} {'cpu p50':>7} {'cpu p95':>7}"
              f"  (scoped, "
              f"{len(loaded.questions)} questions)", flush=True)
        figs, base = measure(conn, loaded, args.repeat)
        row(loaded.turns, figs, 100.0)
        conn.close()

    home = args.keep or Path(tempfile.mkdtemp(prefix="aletheia-recall-scale-"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["ALETHEIA_HOME"] = str(home)
    fresh = not (home / "hub.db").exists()
    conn = db.connect()
    loaded = locomo.load(conn, data, write=fresh)
    done = 0
    for target in (int(s) for s in args.sizes.split(",")):
        spent = grow(conn, target)
        count = int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])
        if count == done:
            continue  # a kept store already past this size
        done = count
        figs, ranked = measure(conn, loaded, args.repeat)
        same = 100 * statistics.fmean(1.0 if a == b else 0.0
                                      for a, b in zip(base, ranked, strict=True))
        row(count, figs, same, f"   (grown in {spent:.0f} s)" if spent > 1 else "")
    conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

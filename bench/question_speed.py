"""Scoped search speed on real questions: a tunable coding part's questions (bench/data/coding),
each scoped to its project, in a store of ~50,000 memories.

    .venv/bin/python bench/question_speed.py --base DIR [--part dev-4] [--repeat 3]
        [--ranked FILE] [--profile]

``--base``: an ``ALETHEIA_HOME`` that ``bench/scale.py --keep`` made (``DIR/scale-realistic-50000``,
the unread state).  The part's sessions go into a fresh store as ``bench/coding_recall.py``
captures them (in process, times from the data); then every memory of the base store is copied
in (new ids and hashes, same text), the first base projects' memories under the part's project
keys, so each question's project holds its own sessions and ~2,500 other memories of real text,
in a store of 50,000 more.  Each question runs through ``aletheia.search.search`` as
``coding_recall`` asks it (scoped, 20 hits), timed as the best of ``--repeat`` (wall and this
process's CPU): p50/p95 printed, with ``uptime``'s load and the full-text indexes' segment counts.
``--merged``: the indexes' segments merged first as the worker merges them after a session
(``aletheia.segments.merge``, until nothing is left to merge): the copy above leaves ~8 segments
in ``memory_fts`` (one at 50,000 once merged), and every query word is looked up in each; a store
the worker keeps has few.  ``--ranked`` writes each question's
hit ids (JSON lines), to check that a change keeps every ranking; ``--profile`` prints where one
pass's time goes (cProfile, the search module's functions).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import coding_data as cd  # noqa: E402
import coding_replay as cr  # noqa: E402

_SKIP = ("rowid", "id", "project", "session_id", "content_hash")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def add_base(conn: object, base: Path, keys: list[str]) -> int:
    """Copy every memory of ``base``'s store in, the first base projects under ``keys``."""
    import sqlite3

    from aletheia.db import tx

    assert isinstance(conn, sqlite3.Connection)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(memory)") if r[1] not in _SKIP]
    conn.execute("ATTACH DATABASE ? AS base", (f"file:{base / 'hub.db'}?mode=ro",))
    projects = [str(r[0]) for r in conn.execute("SELECT DISTINCT project FROM base.memory ORDER BY project")]
    renamed = dict(zip(projects, keys, strict=False))
    conn.execute("CREATE TEMP TABLE renamed(old TEXT PRIMARY KEY, new TEXT)")
    conn.executemany("INSERT INTO renamed VALUES (?, ?)", list(renamed.items()))
    names = ", ".join(cols)
    with tx(conn):
        conn.execute(
            f"INSERT INTO memory(id, project, session_id, content_hash, {names}) "
            f"SELECT b.id || '-b', coalesce(r.new, b.project), b.session_id || '-b', b.content_hash || '-b', "
            f"{', '.join('b.' + c for c in cols)} FROM base.memory b LEFT JOIN renamed r ON r.old = b.project "
            "ORDER BY b.rowid")
    conn.commit()
    conn.execute("DETACH DATABASE base")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scoped search speed on real questions (see the module doc).")
    parser.add_argument("--base", type=Path, required=True, help="an ALETHEIA_HOME bench/scale.py --keep made")
    parser.add_argument("--part", choices=cd.TUNABLE_PARTS, default="dev-4")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--merged", action="store_true",
                        help="merge the indexes' segments first, as the worker does")
    parser.add_argument("--ranked", type=Path, default=None, help="write each question's hit ids here")
    parser.add_argument("--profile", action="store_true", help="print where one pass's time goes")
    parser.add_argument("--profile-slowest", type=int, default=0, help="profile only the N slowest questions")
    parser.add_argument("--tmp", default=cr.default_tmp(), help="where the temp store goes")
    args = parser.parse_args(argv)

    data = cr.load_checked(args.part)
    questions = [q for q in data.questions if q.part == args.part]
    with cr.workdir(args.tmp, "aletheia-qspeed-", False) as root:
        replay, _ = cr.build(data, root, "inprocess", jobs=1, restamp_times=True, run_compress=False)
        from aletheia import db
        from aletheia.search import SearchQuery, search

        conn = db.connect()
        total = add_base(conn, args.base, [replay.keys[p] for p in data.projects])
        from aletheia import segments

        if args.merged:
            segments.merge(conn, budget=float("inf"))
        counts = ", ".join(f"{n} {segments.count(conn, n)}" for n in segments.INDEXES)
        queries = [SearchQuery(q=q.text, project=replay.keys[q.project], limit=20) for q in questions]
        # (memory ids are new every capture: a hit is named by its event, else its content hash)
        stable = {m: f"event:{k}" for k, m in replay.memory_of.items()}
        for mid, digest in conn.execute("SELECT id, content_hash FROM memory WHERE id NOT LIKE '%-b'"):
            stable.setdefault(str(mid), f"hash:{digest}")
        wall: list[float] = []
        cpu: list[float] = []
        ranked: list[list[str]] = []
        for query in queries:
            best = best_cpu = float("inf")
            hits = []
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                hits = search(conn, query)
                best = min(best, (time.perf_counter() - start) * 1000)
                best_cpu = min(best_cpu, (time.process_time() - start_cpu) * 1000)
            wall.append(best)
            cpu.append(best_cpu)
            ranked.append([stable.get(h.id, f"{h.type}:{h.id}") for h in hits])
        if args.profile:
            slowest = sorted(range(len(queries)), key=lambda i: -cpu[i])[:args.profile_slowest or len(queries)]
            prof = cProfile.Profile()
            prof.enable()
            for query in [queries[i] for i in sorted(slowest)]:
                search(conn, query)
            prof.disable()
            stats = pstats.Stats(prof)
            stats.sort_stats(os.environ.get("QS_SORT", "cumulative")).print_stats(r"aletheia/(search|stated|claims|changes|followed)|sqlite3|re/", 45)
            stats.print_callees(os.environ.get("QS_CALLEES", "_tool_changes"))
            if os.environ.get("QS_CALLERS"):
                stats.print_callers(os.environ["QS_CALLERS"])
        conn.close()
    if args.ranked:
        with args.ranked.open("w", encoding="utf-8") as fh:
            for q, ids, ms in zip(questions, ranked, cpu, strict=True):
                fh.write(json.dumps({"id": q.id, "hits": ids, "cpu_ms": round(ms, 3)}) + "\n")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"part {args.part}: {len(questions)} questions scoped to their projects, store {total} memories, "
          f"best of {args.repeat}; load {load}")
    print(f"  segments: {counts}{' (merged as the worker merges)' if args.merged else ''}")
    print(f"  wall ms p50 {statistics.median(wall):.2f}  p95 {_p95(wall):.2f}  mean {statistics.mean(wall):.2f}")
    print(f"  cpu  ms p50 {statistics.median(cpu):.2f}  p95 {_p95(cpu):.2f}  mean {statistics.mean(cpu):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

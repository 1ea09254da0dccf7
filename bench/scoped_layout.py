"""What a project-contiguous index layout would save a scoped query: per-project posting reads
on the store's own FTS5 index (the project cut by its ``fts_scope`` token, as search does now)
beside a copy of the same memories whose rowids are laid out project by project (each project
a range of its own, cut by ``rowid BETWEEN``).  The copy is a scratch file; the store is only read.

    python bench/scoped_layout.py STORE_DIR [--terms 60] [--repeat 7]

``STORE_DIR``: an ``ALETHEIA_HOME`` holding ``hub.db`` (``bench/scale.py --keep DIR`` makes one:
``DIR/scale-realistic-50000-read``).  Fixed seed: the terms are the index's own words, drawn by
document frequency (common, middling, rare) so the common words whose cost grows with the store
are in the sample; each read is the best of ``--repeat``.  Prints, per document-frequency band,
the median ms of a read of up to 1,401 postings (search's budget + 1) in one project, both ways,
and their ratio; then the whole sample's median and p95.

Why it is a probe and not a change (stop 27): memory rowids are read in ~125 places, the
``memory_stated`` and ``memory_vec`` tables are keyed by them, the feed cursors assume they grow
with time, and promoting a memory to global scope would move its row.

Tried on real questions (stop 29, not landed): a second index beside ``memory_fts`` (contentless,
``detail=none``, rowid = a project's slot * 2**40 + the memory's rowid, promoted memories again
in slot 0; kept by triggers), read by ``search._postings`` with ``rowid BETWEEN``; the memory
rowids stay.  ``bench/question_speed.py --part dev-4``, both readings A/B in one loop, rankings
identical (218/218): CPU p50/p95 6.55/10.07 -> 6.32/10.54 ms on the copy as built (8 segments in
``memory_fts``, 13 in the new index: a bulk insert leaves many, and an OR over a concept's names
was slower there), 6.08/8.85 -> 5.70/8.44 with both merged as the worker merges (a one-word read
0.126 -> 0.064 ms, a concept's OR 0.351 -> 0.267 ms).  Cost: each memory tokenized twice, insert
CPU 0.32 -> 0.41 ms a memory (+26 %, one per transaction), +7 MB at 50,000.  Merging alone
(``question_speed --merged``) did more: p95 10.35 -> 8.70 ms.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SEED = 20261204
BUDGET = 1401
_COLUMNS = "title, subtitle, narrative, facts, concepts, fts_scope, idents"


def build_copy(store: Path, scratch: Path) -> sqlite3.Connection:
    """The store's memories in a new FTS5 index, rowid = (project's slot << 32) + its n-th memory,
    inserted in the store's own order (so segments merge as they would in use)."""
    shutil.copy(store / "hub.db", scratch / "hub.db")
    conn = sqlite3.connect(scratch / "hub.db")
    from_memory = ", ".join("m." + c for c in _COLUMNS.split(", "))
    conn.executescript(f"""
        CREATE TABLE layout_slot AS SELECT project, row_number() OVER (ORDER BY project) AS slot
            FROM (SELECT DISTINCT project FROM memory);
        CREATE TABLE layout_row AS SELECT (s.slot << 32) + row_number() OVER (
                PARTITION BY m.project ORDER BY m.rowid) AS rid, m.rowid AS old, {from_memory}
            FROM memory m JOIN layout_slot s USING (project);
        CREATE VIRTUAL TABLE layout_fts USING fts5({_COLUMNS}, content='',
            tokenize='porter unicode61 remove_diacritics 2');
        INSERT INTO layout_fts(rowid, {_COLUMNS}) SELECT rid, {_COLUMNS} FROM layout_row ORDER BY old;
    """)
    conn.commit()
    return conn


def sample_terms(conn: sqlite3.Connection, n: int) -> list[tuple[str, int]]:
    """(term, documents holding it in the whole store): a third common, a third middling, a
    third rare, drawn with a fixed seed from the index's own vocabulary."""
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memory_fts, row)")
    rows = [(str(t), int(d)) for t, d in conn.execute(
        "SELECT term, doc FROM temp.vocab WHERE doc >= 20 AND term GLOB '[a-z]*' ORDER BY doc DESC")]
    rng = random.Random(SEED)
    third = max(1, len(rows) // 3)
    bands = (rows[:third // 10 or 1], rows[third:2 * third], rows[2 * third:])
    return [rng.choice(band) for band in bands for _ in range(n // 3)]


def best_ms(conn: sqlite3.Connection, sql: str, args: tuple[object, ...], repeat: int) -> tuple[float, int]:
    best, found = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        got = conn.execute(sql, args).fetchone()[0]
        best = min(best, time.perf_counter() - start)
        found = len(got.split(",")) if got else 0
    return best * 1000, found


def main(argv: list[str] | None = None) -> int:
    from aletheia import schema

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="an ALETHEIA_HOME holding hub.db")
    parser.add_argument("--terms", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    if not (args.store / "hub.db").is_file():
        parser.error(f"no hub.db in {args.store}")
    with tempfile.TemporaryDirectory(prefix="aletheia-layout-") as tmp:
        conn = build_copy(args.store, Path(tmp))
        slots = dict(conn.execute("SELECT project, slot FROM layout_slot").fetchall())
        projects = sorted(slots)
        rng = random.Random(SEED + 1)
        rows: list[tuple[str, int, float, float, int]] = []
        for term, docs in sample_terms(conn, args.terms):
            project = rng.choice(projects)
            token = schema.scope_token(project)
            now, found = best_ms(conn, "SELECT group_concat(rowid) FROM (SELECT rowid FROM memory_fts "
                                 "WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
                                 (f'("{term}") AND fts_scope : "{token}"', BUDGET), args.repeat)
            lo = slots[project] << 32
            laid, found2 = best_ms(conn, "SELECT group_concat(rowid) FROM (SELECT rowid FROM layout_fts "
                                   "WHERE layout_fts MATCH ? AND rowid BETWEEN ? AND ? "
                                   "ORDER BY rowid DESC LIMIT ?)",
                                   (f'"{term}"', lo, lo + (1 << 32) - 1, BUDGET), args.repeat)
            if found != found2:
                print(f"error: '{term}' in {project}: {found} postings by token, {found2} by range",
                      file=sys.stderr)
                return 1
            rows.append((term, docs, now, laid, found))
        conn.close()
    total = len(rows)
    print(f"{total} terms, {len(projects)} projects, best of {args.repeat}; ms per read of up to {BUDGET} postings")
    print(f"{'band':>9} {'store df':>9} {'in project':>10} | {'scope token':>11} {'rowid range':>11} {'ratio':>6}")
    third = total // 3
    for name, part in (("common", rows[:third]), ("middling", rows[third:2 * third]), ("rare", rows[2 * third:])):
        if not part:
            continue
        a = statistics.median(r[2] for r in part)
        b = statistics.median(r[3] for r in part)
        print(f"{name:>9} {statistics.median(r[1] for r in part):>9.0f} {statistics.median(r[4] for r in part):>10.0f} | "
              f"{a:>11.3f} {b:>11.3f} {a / b:>5.2f}x")
    now_all = sorted(r[2] for r in rows)
    laid_all = sorted(r[3] for r in rows)
    p95 = min(total - 1, round(0.95 * (total - 1)))
    print(f"{'all':>9} {'':>9} {'':>10} | {statistics.median(now_all):>11.3f} {statistics.median(laid_all):>11.3f} "
          f"{statistics.median(now_all) / statistics.median(laid_all):>5.2f}x  (p95 {now_all[p95]:.3f} / {laid_all[p95]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

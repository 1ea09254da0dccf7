"""bench/coding_recall.py's per-question outcome: which questions plain BM25 answers in its top
5 (or newest first) where the search service does not, as ``--misses`` writes them."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import coding_data as cd  # noqa: E402
import coding_recall as rec  # noqa: E402
from plain_bm25 import PlainBM25  # noqa: E402


def _scored(category: str, ours: rec.Outcome, bm25: rec.Outcome) -> rec.Scored:
    q = cd.Question("q-1", "proj", "dev-8", category, "which one?", ["s1:3"])
    return rec.Scored(q, ours, bm25, ["ours a", "ours b"], ["bm25 a"])


def test_lost_when_bm25_has_the_gold_in_its_top_5_and_ours_has_not() -> None:
    assert _scored("stack", rec.Outcome(6, True), rec.Outcome(4, True)).lost
    assert _scored("stack", rec.Outcome(None, False), rec.Outcome(5, True)).lost
    assert not _scored("stack", rec.Outcome(5, True), rec.Outcome(1, True)).lost
    assert not _scored("stack", rec.Outcome(9, True), rec.Outcome(6, True)).lost


def test_lost_when_only_bm25_ranks_the_current_answer_first() -> None:
    ours = rec.Outcome(2, True, newest_first=False, old=1)
    bm25 = rec.Outcome(1, True, newest_first=True, old=2)
    assert _scored("knowledge-update", ours, bm25).lost
    ours.newest_first, ours.old = True, 3
    assert not _scored("knowledge-update", ours, bm25).lost


def test_the_misses_row_carries_both_rankings_top() -> None:
    row = _scored("stack", rec.Outcome(6, True), rec.Outcome(4, True)).row()
    assert row["lost"] is True and (row["ours_first"], row["bm25_first"]) == (6, 4)
    assert row["ours_top"] == ["ours a", "ours b"] and row["bm25_top"] == ["bm25 a"]
    assert json.loads(json.dumps(row)) == row


def test_a_win_plain_bm25_keeps_over_the_project_alone_is_not_put_on_statistics() -> None:
    s = _scored("stack", rec.Outcome(6, True), rec.Outcome(4, True))
    assert not s.lost_to_statistics  # (no project-only ranking: nothing is claimed)
    s.bm25_own = rec.Outcome(3, True)
    assert s.lost and not s.lost_to_statistics
    s.bm25_own = rec.Outcome(7, True)
    assert s.lost_to_statistics
    assert s.row()["lost_to_statistics"] is True and s.row()["bm25_own_first"] == 7


def test_a_newest_first_win_is_put_on_statistics_only_when_the_project_alone_loses_it() -> None:
    ours = rec.Outcome(2, True, newest_first=False, old=1)
    s = _scored("knowledge-update", ours, rec.Outcome(1, True, newest_first=True, old=2))
    s.bm25_own = rec.Outcome(1, True, newest_first=True, old=3)
    assert s.lost and not s.lost_to_statistics
    s.bm25_own = rec.Outcome(3, True, newest_first=False, old=1)
    assert s.lost_to_statistics
    assert not _scored("stack", rec.Outcome(1, True), rec.Outcome(2, True)).lost_to_statistics


def test_plain_bm25_of_one_project_counts_only_that_projects_memories() -> None:
    rows = [("a1", "alpha", "deploy the worker", "", "", "[]", "[]"),
            ("a2", "alpha", "unrelated note", "", "", "[]", "[]"),
            ("b1", "beta", "deploy deploy", "", "", "[]", "[]")]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memory (id, project, title, subtitle, narrative, facts, concepts, "
                 "dismissed_at)")
    conn.executemany("INSERT INTO memory VALUES (?, ?, ?, ?, ?, ?, ?, NULL)", rows)
    own = PlainBM25.from_store(conn, "alpha")
    every = PlainBM25.from_store(conn)
    try:
        assert own.size == 2 and every.size == 3
        assert own.search("deploy", "alpha") == ["a1"] == every.search("deploy", "alpha")
    finally:
        own.close()
        every.close()
        conn.close()


def test_every_hybrid_variant_names_a_constant_of_the_search() -> None:
    import locomo

    from aletheia import search as S

    for variants in (locomo.HYBRID_ABLATIONS, locomo.HYBRID_CANDIDATES):
        for name, overrides in variants.items():
            assert all(hasattr(S, c) for c in overrides), name

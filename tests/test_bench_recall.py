"""bench/coding_recall.py's per-question outcome: which questions plain BM25 answers in its top
5 (or newest first) where the search service does not, as ``--misses`` writes them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import coding_data as cd  # noqa: E402
import coding_recall as rec  # noqa: E402


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

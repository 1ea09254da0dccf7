"""bench/question_speed.py times a tunable part's questions in a store with other memories
around them; ``--merged`` first merges the indexes' segments as the worker does, and says how
many each index holds, and the rankings stay the ones the unmerged store gives."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from aletheia import db, store
from aletheia.store import MemoryIn

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import question_speed  # noqa: E402


def _base(home: Path) -> Path:
    """A small store of other projects' memories, written one at a time (a segment each)."""
    base = home / "base"
    conn = db.connect(base / "hub.db")
    for i in range(12):
        store.write_memory(conn, MemoryIn(
            project=f"/base/p{i % 3}", kind="tool_event", title=f"ran pytest step {i}",
            narrative="pytest -q: 12 passed", created_at=1_700_000_000_000 + i, session_id=f"s{i % 3}"))
    conn.close()
    return base


def _run(base: Path, tmp: Path, ranked: Path, *extra: str) -> list[list[str]]:
    """Each question's ranked hits from one run of the bench."""
    assert question_speed.main(["--base", str(base), "--part", "dev", "--repeat", "1", "--tmp", str(tmp),
                                "--ranked", str(ranked), *extra]) == 0
    hits = [json.loads(line)["hits"] for line in ranked.read_text().splitlines()]
    return hits


def test_merged_merges_the_segments_and_keeps_every_ranking(
    aletheia_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    base = _base(aletheia_home)
    plain = _run(base, tmp_path, tmp_path / "plain.jsonl")
    before = capsys.readouterr().out
    merged = _run(base, tmp_path, tmp_path / "merged.jsonl", "--merged")
    after = capsys.readouterr().out
    found = [re.search(r"segments: memory_fts (\d+)", out) for out in (before, after)]
    assert found[0] and found[1]
    assert "(merged as the worker merges)" in after and "merged as" not in before
    assert int(found[1].group(1)) < int(found[0].group(1))
    assert merged == plain and len(plain) > 100

"""The fact write API: redaction, dedupe by hash, near-duplicate merge, listing, search."""

from __future__ import annotations

import random
import sqlite3

import pytest

from aletheia import facts, store
from aletheia.errors import InvalidInput
from aletheia.facts import FactIn, add_facts, list_facts, similarity
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn
from tests import fakes

P = "/home/dev/textkit"


def fact(text: str, *sources: str, kind: str = "command", project: str = P) -> FactIn:
    return FactIn(project=project, text=text, kind=kind, source_ids=list(sources))


def test_every_fact_is_redacted(conn: sqlite3.Connection) -> None:
    rng = random.Random(3)
    token, key = fakes.github_token(rng), fakes.openai_key(rng)
    add_facts(conn, [fact(f"Push with `GH_TOKEN={token} git push`", "m1"),
                     fact(f"The provider key is {key}", "m2", kind="fact")])
    stored = [r[0] for r in conn.execute("SELECT text FROM fact")]
    assert len(stored) == 2
    assert not any(token in t or key in t for t in stored)
    assert any("[redacted" in t for t in stored)


def test_dedupe_by_hash_merges_sources(conn: sqlite3.Connection) -> None:
    first = add_facts(conn, [fact("Run the tests with `pytest -q`.", "m1")], now=1000)
    again = add_facts(conn, [fact("run the tests with  `pytest -q`", "m2"),
                             fact("Run the tests with `pytest -q`.", "m1")], now=2000)
    assert len(first.added) == 1 and again.added == [] and again.merged == first.added
    assert again.unchanged == 1
    row = list_facts(conn, project=P)[0]
    assert row["source_ids"] == ["m1", "m2"] and row["updated_at"] == 2000
    # Re-adding what is already there changes nothing at all.
    assert add_facts(conn, [fact("Run the tests with `pytest -q`.", "m1", "m2")], now=3000).unchanged == 1
    assert list_facts(conn, project=P)[0]["updated_at"] == 2000


def test_near_duplicates_merge_at_092_trigram_cosine(conn: sqlite3.Connection) -> None:
    a = "Lint with `ruff check .` before every commit; the CI job runs the same command."
    b = "Lint with `ruff check .` before each commit; the CI job runs the same command."
    assert similarity(a, b) >= facts.NEAR_DUPLICATE
    add_facts(conn, [fact(a, "m1")])
    result = add_facts(conn, [fact(b, "m2")])
    assert result.added == [] and len(result.merged) == 1
    rows = list_facts(conn, project=P)
    assert len(rows) == 1 and rows[0]["text"] == a and rows[0]["source_ids"] == ["m1", "m2"]


@pytest.mark.parametrize(("a", "b"), [
    ("The dev server listens on port 8000 (`make serve`).", "The dev server listens on port 8001 (`make serve`)."),
    ("`tests/test_parser.py` holds the tests for `src/pkg/parser.py`.",
     "`tests/test_lexer.py` holds the tests for `src/pkg/lexer.py`."),
    ("Type-check with `mypy src`.", "Type-check with `mypy tests`."),
])
def test_facts_that_differ_in_an_anchor_never_merge(conn: sqlite3.Connection, a: str, b: str) -> None:
    assert similarity(a, b) == 0.0
    add_facts(conn, [fact(a, "m1"), fact(b, "m2")])
    assert len(list_facts(conn, project=P)) == 2


def test_similarity_is_cosine_of_trigrams() -> None:
    assert similarity("same text here", "Same text here.") == pytest.approx(1.0)
    assert similarity("alpha beta gamma delta", "completely other words") < 0.3


def test_a_dismissed_fact_is_not_resurrected(conn: sqlite3.Connection) -> None:
    add_facts(conn, [fact("Deploy with `fly deploy --remote-only`.", "m1")])
    conn.execute("UPDATE fact SET status = 'dismissed'")
    result = add_facts(conn, [fact("Deploy with `fly deploy --remote-only`.", "m9"),
                              fact("Deploy with `fly deploy --remote-only`!", "m8")])
    assert result.added == [] and result.merged == [] and result.unchanged == 2
    assert list_facts(conn, project=P) == []
    assert len(list_facts(conn, project=P, status="dismissed")) == 1


def test_validation(conn: sqlite3.Connection) -> None:
    with pytest.raises(InvalidInput):
        add_facts(conn, [FactIn(project=P, text="x" * 20, kind="gossip")])
    with pytest.raises(InvalidInput):
        add_facts(conn, [FactIn(project=P, text="x" * 20, confidence=1.5)])
    with pytest.raises(InvalidInput):
        add_facts(conn, [FactIn(project="", text="x" * 20)])
    with pytest.raises(InvalidInput):
        list_facts(conn, limit=0)
    long = add_facts(conn, [fact("word " * 600, "m1", kind="fact")])
    assert len(list_facts(conn)[0]["text"]) <= facts.TEXT_CAP and len(long.added) == 1


def test_listing_filters_and_search_finds_facts(conn: sqlite3.Connection) -> None:
    add_facts(conn, [fact("Run the tests with `pytest -q`.", "m1"),
                     fact("Convention: always use pytest.mark.parametrize for tables.", "m2", kind="convention"),
                     fact("Build with `cargo build --release`.", "m3", project="/other")])
    assert len(list_facts(conn, project=P)) == 2
    assert [f["kind"] for f in list_facts(conn, project=P, kind="convention")] == ["convention"]
    assert len(list_facts(conn)) == 3
    # (search shapes the query on memories; facts come from memories, so give it their source)
    store.write_memory(conn, MemoryIn(project=P, kind="prompt", title="use parametrize for tables"))
    for n in range(3):
        store.write_memory(conn, MemoryIn(project=P, kind="note", title=f"note number {n}"))
    hits = search(conn, SearchQuery(q="parametrize tables", project=P))
    assert hits and hits[0].type == "fact" and hits[0].source_ids == ["m2"]


def _cmd(slot: str, value: str, at: int, project: str = P) -> FactIn:
    return FactIn(project=project, kind="command", text=f"Run with `{value}`.", subject=f"command:{slot}",
                  value=value, observed_at=at)


def _active(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT value FROM fact WHERE status = 'active'")}


def test_a_tool_the_commands_moved_off_takes_its_other_commands_with_it(conn: sqlite3.Connection) -> None:
    add_facts(conn, [_cmd("build", "stack build", 100), _cmd("test", "stack test", 110),
                     _cmd("setup:stack", "stack install hlint", 120),
                     _cmd("migrate", "PGPASSWORD=x dbmate up", 130)], now=1000)
    add_facts(conn, [_cmd("build", "cabal build all", 200)], now=2000)
    assert "stack install hlint" in _active(conn)  # one slot is not a move
    add_facts(conn, [_cmd("test", "cabal test", 210)], now=3000)
    assert _active(conn) == {"cabal build all", "cabal test", "PGPASSWORD=x dbmate up"}
    gone = conn.execute("SELECT superseded_by FROM fact WHERE value = 'stack install hlint'").fetchone()[0]
    assert gone == conn.execute("SELECT id FROM fact WHERE value = 'cabal test'").fetchone()[0]
    assert "stack install hlint" in [h["value"] for h in facts.history(conn, str(gone))]


def test_an_interpreter_or_one_slot_is_not_a_move(conn: sqlite3.Connection) -> None:
    add_facts(conn, [_cmd("test", "python -m pytest", 100), _cmd("run", "python app.py", 105),
                     _cmd("migrate", "python manage.py migrate", 110),
                     _cmd("lint", "npm run lint", 115), _cmd("install", "npm install", 118)], now=1000)
    add_facts(conn, [_cmd("test", "uv run pytest", 200), _cmd("run", "uv run app.py", 205),
                     _cmd("lint", "biome check", 210)], now=2000)
    assert {"python manage.py migrate", "npm install"} <= _active(conn)

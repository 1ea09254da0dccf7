"""What a memory says of the tool of a purpose, kept by the first search that works it out
(``stated.tool_claims``, schema 13): the same as ``claims.tool_claims`` of its text for any
purposes, the same ranking cold and kept and from before the migration; rows for other rules are
not trusted; edits and erases drop them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from aletheia import db, erase, stated, store
from aletheia.claims import PURPOSES, installed_tools, tool_claims
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn
from tests.oldstore import make_store_at
from tests.test_claims import P, _runner_sessions

QUESTION = "What runs the unit tests?"


def _ranked(conn: sqlite3.Connection, q: str = QUESTION) -> list[str]:
    return [h.id for h in search(conn, SearchQuery(q=q, project=P))]


def _kept(conn: sqlite3.Connection) -> dict[str, tuple[str, object, dict[str, list[object]]]]:
    return {str(r[0]): (str(r[1]), json.loads(r[2]), json.loads(r[3])) for r in conn.execute(
        "SELECT m.id, c.rules, c.named, c.claims FROM memory_claims c JOIN memory m ON m.rowid = c.rowid")}


_TEXTS = [
    ("prompt", "Jest is slow. We switched the tests over to Vitest."),
    ("response", "Jest is gone; tests run on Vitest 2.1, and we went with pnpm for packages."),
    ("response", "Vitest is faster than Jest on this suite."),
    ("note", "Formatting stays with Prettier; ruff lints the Python side now."),
    ("prompt", "nothing about any tool here, only the invoice list"),
    ("tool_event", "Bash: $ npm uninstall jest && npm install -D vitest"),
    ("tool_event", "Bash: $ grep -rn jest src/"),
]


@pytest.mark.parametrize("purposes", [("test-runner",), ("package-manager", "linter"), ("orm",), PURPOSES])
def test_kept_claims_are_what_the_text_says_for_any_purposes(conn: sqlite3.Connection,
                                                             purposes: tuple[str, ...]) -> None:
    made = {store.write_memory(conn, MemoryIn(project=P, kind=kind, title=text, narrative=text, created_at=1000 + n,
                                              session_id="s1")).id: (kind, text)
            for n, (kind, text) in enumerate(_TEXTS)}
    for _ in ("cold", "kept"):
        got = stated.tool_claims(conn, list(made), purposes)
        for i, (kind, text) in made.items():
            head = stated.head_text(text, text, "", "[]")
            want = installed_tools(head.split("\n", 1)[0]) if kind == "tool_event" else tool_claims(head, purposes)
            assert {p: v for p, v in got[i].items() if p in purposes} == \
                {p: v for p, v in want.items() if p in purposes}
            if kind != "tool_event":
                assert got[i] == want
    assert len(_kept(conn)) == len(made)


def test_the_first_search_keeps_what_it_read_and_the_next_ranks_the_same(conn: sqlite3.Connection) -> None:
    m = _runner_sessions(conn)
    cold = _ranked(conn)
    assert cold.index(m["new"]) < min(cold.index(m["old"]), cold.index(m["old_done"]))
    kept = _kept(conn)
    assert kept[m["new"]] == (stated.claims_rules(), ["test-runner"], {"test-runner": ["vitest", True]})
    assert _ranked(conn) == cold
    conn.execute("DELETE FROM memory_claims")
    assert _ranked(conn) == cold


def test_a_row_kept_under_other_rules_is_worked_out_again(conn: sqlite3.Connection) -> None:
    m = _runner_sessions(conn)
    cold = _ranked(conn)
    # (as an upgrade that changed the patterns would leave it: another digest, another answer)
    conn.execute("UPDATE memory_claims SET rules = 'older', claims = '{\"test-runner\": [\"jest\", true]}'")
    assert _ranked(conn) == cold
    assert _kept(conn)[m["new"]][0] == stated.claims_rules()


def test_a_kept_row_is_read_not_worked_out_again(conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    from aletheia import claims

    _runner_sessions(conn)
    cold = _ranked(conn)

    def unread(*args: object, **kwargs: object) -> None:
        raise AssertionError("worked out again")

    monkeypatch.setattr(claims, "tool_claims", unread)
    monkeypatch.setattr(claims, "installed_tools", unread)
    monkeypatch.setattr(claims, "named_tools", unread)
    assert _ranked(conn) == cold
    conn.execute("DELETE FROM memory_claims")
    with pytest.raises(AssertionError, match="worked out again"):
        _ranked(conn)


def test_an_edit_or_an_erase_drops_the_kept_row(conn: sqlite3.Connection) -> None:
    m = _runner_sessions(conn)
    _ranked(conn)
    assert m["new"] in _kept(conn) and m["old"] in _kept(conn)
    conn.execute("UPDATE memory SET narrative = 'We kept Jest.' WHERE id = ?", (m["new"],))
    assert m["new"] not in _kept(conn)
    erase.erase(conn, project=P)
    assert _kept(conn) == {}


def test_memories_written_before_the_migration_rank_the_same(aletheia_home: Path) -> None:
    from aletheia import paths

    old = make_store_at(paths.hub_db(), 12)  # the schema before this one
    old.row_factory = sqlite3.Row
    try:
        m = _runner_sessions(old)
    finally:
        old.close()
    conn = db.connect()
    try:
        assert _kept(conn) == {}
        ranked = _ranked(conn)
        assert ranked.index(m["new"]) < ranked.index(m["old"])
        assert m["new"] in _kept(conn)
        assert _ranked(conn) == ranked
    finally:
        conn.close()

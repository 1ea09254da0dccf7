"""Erase: rows, FTS entries, derived facts and emptied sessions go; a signed receipt verifies;
the erased text is not in the bytes of hub.db or its WAL afterwards."""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path

import pytest

from aletheia import erase, facts, receipts, store
from aletheia.errors import InvalidInput, NotFound
from aletheia.search import SearchQuery, search


def _word(rng: random.Random) -> str:
    # A made-up word no other text contains, so finding it in the bytes means it survived.
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(14))


def _mem(conn: sqlite3.Connection, text: str, *, project: str = "p", session: str | None = "s1",
         kind: str = "note", **kw: object) -> str:
    return store.write_memory(conn, store.MemoryIn(
        project=project, kind=kind, title=text[:60], narrative=text, session_id=session,
        tool="claude-code", **kw)).id  # type: ignore[arg-type]


def _bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.glob("hub.db*")))


def test_erase_by_id_removes_text_from_database_bytes(conn: sqlite3.Connection,
                                                      aletheia_home: Path) -> None:
    rng = random.Random(1)
    secret_word = _word(rng)
    keep_word = _word(rng)
    # Enough rows that the FTS index has several segments and pages.
    for i in range(300):
        _mem(conn, f"filler memory number {i} about {keep_word} and ordinary things", session=f"f{i % 7}")
    target = _mem(conn, f"the launch code word is {secret_word} do not share", session="s-secret")
    _mem(conn, f"another note {keep_word}", session="s-secret", kind="prompt")
    facts.add_facts(conn, [facts.FactIn(project="p", text=f"The code word is {secret_word}",
                                        source_ids=[target], session_id="s-secret")])
    rowid = conn.execute("SELECT rowid FROM memory WHERE id = ?", (target,)).fetchone()[0]
    conn.execute("INSERT INTO memory_vec (rowid, model, dim, vector, created_at) "
                 "VALUES (?, 'test-model', 2, x'0000803f00000040', 1)", (rowid,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert secret_word.encode() in _bytes(aletheia_home)

    receipt = erase.erase(conn, ids_=[target])
    assert conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == 0

    assert receipt["body"]["counts"]["memories"] == 1
    assert receipt["body"]["counts"]["facts"] == 1
    assert receipt["checkpointed"] is True
    assert not search(conn, SearchQuery(q=secret_word))
    assert search(conn, SearchQuery(q=keep_word, limit=5))
    assert secret_word.encode() not in _bytes(aletheia_home)
    assert keep_word.encode() in _bytes(aletheia_home)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")


def test_receipt_is_signed_and_verifies(conn: sqlite3.Connection, aletheia_home: Path) -> None:
    a = _mem(conn, "first thing to erase")
    receipt = erase.erase(conn, ids_=[a], now=1_800_000_000_000)
    body = receipt["body"]
    assert body["memory_ids"] == [a] and body["created_at"] == 1_800_000_000_000
    assert body["selector"] == {"ids": [a]}
    key = aletheia_home / "keys" / "receipt.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    stored = receipts.get_receipt(conn, receipt["id"])
    assert stored["signature"] == receipt["signature"]
    assert receipts.verify(stored, conn=conn) == {
        "valid": True, "signature": True, "still_erased": True, "problems": []}
    forged = json.loads(json.dumps(stored))
    forged["body"]["counts"]["memories"] = 99
    verdict = receipts.verify(forged, conn=conn)
    assert verdict["valid"] is False and verdict["signature"] is False
    listed = receipts.list_receipts(conn).items
    assert [r["id"] for r in listed] == [receipt["id"]]


def test_unknown_id_erases_nothing(conn: sqlite3.Connection) -> None:
    a = _mem(conn, "stays put")
    with pytest.raises(NotFound):
        erase.erase(conn, ids_=[a, "NOPE"])
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM receipt").fetchone()[0] == 0
    with pytest.raises(InvalidInput):
        erase.erase(conn, ids_=[a], project="p")


def test_a_fact_that_drew_on_an_erased_memory_goes_and_its_session_is_rebuilt(
    conn: sqlite3.Connection,
) -> None:
    prompt = _mem(conn, "please add retries to the uploader", kind="prompt")
    other = _mem(conn, "added exponential backoff to uploader.py")
    summary = _mem(conn, "session summary: retries added", kind="summary")
    result = facts.add_facts(conn, [facts.FactIn(project="p", text="uploader.py retries with backoff",
                                                 source_ids=[prompt, other], session_id="s1")])
    fact_id = result.added[0]
    conn.execute("UPDATE memory SET extracted_at = 1 WHERE id = ?", (other,))
    assert conn.execute("SELECT first_request FROM session WHERE id = 's1'").fetchone()[0]

    receipt = erase.erase(conn, ids_=[prompt])

    # The fact drew on the erased prompt and the summary on its session: both go, and the
    # session is queued to be extracted again from what is left (which rebuilds them).
    body = receipt["body"]
    assert body["fact_ids"] == [fact_id] and summary in body["memory_ids"]
    assert body["counts"] == {"memories": 1, "derived": 1, "facts": 1, "sessions": 0,
                              "sessions_rebuilt": 1, "rules": 0, "fts_entries": 3, "tombstones": 5}
    assert conn.execute("SELECT first_request FROM session WHERE id = 's1'").fetchone()[0] is None
    assert [r[0] for r in conn.execute("SELECT session_id FROM stop_queue")] == ["s1"]
    assert conn.execute("SELECT extracted_at FROM memory WHERE id = ?", (other,)).fetchone()[0] is None
    # Erasing the last captured memory takes the session with it.
    receipt = erase.erase(conn, ids_=[other])
    assert conn.execute("SELECT count(*) FROM session WHERE id = 's1'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


def test_erase_session_and_project(conn: sqlite3.Connection) -> None:
    _mem(conn, "one in s1", session="s1")
    _mem(conn, "two in s1", session="s1")
    keep = _mem(conn, "in s2", session="s2")
    store.queue_stop(conn, "s1", "p", "claude-code")
    receipt = erase.erase(conn, session_id="s1")
    assert receipt["body"]["counts"] == {"memories": 2, "derived": 0, "facts": 0, "sessions": 1,
                                         "sessions_rebuilt": 0, "rules": 0, "fts_entries": 2,
                                         "tombstones": 3}
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 0
    with pytest.raises(NotFound):
        erase.erase(conn, session_id="s1")
    _mem(conn, "elsewhere", project="q", session="s9")
    from aletheia import rules

    rules.add_rule(conn, "a rule for p", project="p")
    receipt = erase.erase(conn, project="p")
    assert keep in receipt["body"]["memory_ids"]
    assert receipt["body"]["counts"]["rules"] == 1
    assert [r[0] for r in conn.execute("SELECT project FROM memory")] == ["q"]
    assert [r[0] for r in conn.execute("SELECT project FROM session")] == ["q"]


def test_erase_covers_what_a_hook_spooled(conn: sqlite3.Connection, aletheia_home: Path) -> None:
    # A hook that found the store locked spooled its item; erasing the project must not let
    # the next replay bring it back.
    from aletheia import spool

    _mem(conn, "stored", project="p")
    row = store.prepare(store.MemoryIn(project="p", kind="tool_event", title="spooled zqspool",
                                       session_id="s1", tool="claude-code", source="hook"))
    spool.append({"type": "memory", "row": row})
    receipt = erase.erase(conn, project="p")
    assert receipt["body"]["counts"]["memories"] == 2
    assert spool.pending_size() == 0
    spool.replay(conn)
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
    assert b"zqspool" not in _bytes(aletheia_home)


def test_erasing_what_changed_a_choice_brings_the_old_choice_back(conn: sqlite3.Connection) -> None:
    old = _mem(conn, "we run migrations with alembic upgrade head", session="s1")
    new = _mem(conn, "switched the migrations from alembic to aerich", session="s2")
    first = facts.add_facts(conn, [facts.FactIn(
        project="p", text="Migrations: alembic", kind="decision", session_id="s1", source_ids=[old],
        subject="tool:migrations", value="alembic", observed_at=1_000)]).added[0]
    second = facts.add_facts(conn, [facts.FactIn(
        project="p", text="Migrations: aerich", kind="decision", session_id="s2", source_ids=[new],
        subject="tool:migrations", value="aerich", observed_at=2_000)]).added[0]
    status = dict(conn.execute("SELECT id, status FROM fact").fetchall())
    assert status == {first: "superseded", second: "active"}

    erase.erase(conn, ids_=[new])

    assert dict(conn.execute("SELECT id, status FROM fact").fetchall()) == {first: "active"}
    assert conn.execute("SELECT superseded_by FROM fact WHERE id = ?", (first,)).fetchone()[0] is None

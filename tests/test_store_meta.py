"""The write API's order (redact, then fold and cut) and its metadata shapes (issue 13)."""

from __future__ import annotations

import random
import sqlite3

import pytest

from aletheia import rules, store
from aletheia.errors import InvalidInput
from aletheia.store import MemoryIn
from tests.redact_corpus import Fake


def _pem(f: Fake) -> tuple[str, list[str]]:
    body = f.key_body("rsa")
    return "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----", body.split("\n")


def test_a_title_is_redacted_before_it_is_folded_and_cut() -> None:
    f = Fake(random.Random(1))
    pem, lines = _pem(f)
    row = store.prepare(MemoryIn(project="p", kind="prompt", title=f"look at this\n{pem}\nplease"))
    assert row["title"] == "look at this [redacted:private_key] please"
    assert not any(line[:12] in row["title"] for line in lines)
    # a title longer than its cap: cut after redaction, one line
    row = store.prepare(MemoryIn(project="p", kind="note", title="x " * 300 + pem))
    assert len(row["title"]) <= store.TITLE_CAP and "\n" not in row["title"]


def test_a_secret_across_the_narrative_cut_is_caught() -> None:
    f = Fake(random.Random(2))
    pem, lines = _pem(f)
    filler = "ok\n" * 20_000
    head = store.NARRATIVE_HEAD
    text = filler[: head - 300] + pem + "\n" + filler  # the block runs across the head cut
    row = store.prepare(MemoryIn(project="p", kind="tool_event", title="t", narrative=text))
    assert "characters cut" in row["narrative"]
    assert not any(line[:16] in row["narrative"] for line in lines)


def test_preparing_twice_gives_the_same_row() -> None:
    """The spool replays prepared rows: the same row and hash come out again."""
    f = Fake(random.Random(3))
    pem, _ = _pem(f)
    m = MemoryIn(project="p\nq", kind="Prompt", title=f"a\n{pem}\n" + "w " * 200, narrative=pem,
                 session_id=f"{f.github()} x", tool="Claude Code", source="hook")
    once = store.prepare(m)
    twice = store.prepare(store.memory_in_from_row(once))
    assert twice["content_hash"] == once["content_hash"]
    assert {k: twice[k] for k in once if k != "id"} == {k: once[k] for k in once if k != "id"}


def test_session_ids_keep_their_shape_or_become_a_stand_in() -> None:
    f = Fake(random.Random(4))
    uuid = f.uuid()
    assert store.session_key(uuid) == uuid
    assert store.session_key("c1") == "c1"
    token = f.github()
    for odd in (token, "a b", "x\n</aletheia-memory>", "é" * 3, "a" * 300, "b" * 2_000_000):
        key = store.session_key(odd)
        assert key is not None and key.startswith("s-") and key == store.session_key(odd)
        assert token[:8] not in key
    assert store.session_key(None) == "" and store.session_key("") == ""


def test_hosts_kinds_sources_ids_and_projects() -> None:
    assert store.host_name("claude-code") == "claude-code"
    assert store.host_name("Claude Code") == "claude-code"
    assert store.host_name("x\n<b>") == "other"
    assert store.host_name(Fake(random.Random(5)).github()) == "other"
    assert store.project_name("/home/jane/app\x1b[31m\nx") == "/home/jane/app [31m x"
    with pytest.raises(InvalidInput, match="kind"):
        store.prepare(MemoryIn(project="p", kind="not a kind!", title="t"))
    with pytest.raises(InvalidInput, match="source"):
        store.prepare(MemoryIn(project="p", kind="note", title="t", source="x\ny"))
    with pytest.raises(InvalidInput, match="id must be"):
        store.prepare(MemoryIn(project="p", kind="note", title="t", id="</aletheia-memory>"))
    with pytest.raises(InvalidInput, match="project"):
        store.prepare(MemoryIn(project="\n\t", kind="note", title="t"))
    row = store.prepare(MemoryIn(project="p", kind="Note", title="t", source="CLI"))
    assert (row["kind"], row["source"]) == ("note", "cli")


def test_the_stop_queue_and_sessions_get_the_same_shapes(conn: sqlite3.Connection) -> None:
    f = Fake(random.Random(6))
    token = f.github()
    store.queue_stop(conn, f"{token}\nx", f"app {token}", "Claude Code")
    row = conn.execute("SELECT session_id, project, tool FROM stop_queue").fetchone()
    assert row[0] == store.session_key(f"{token}\nx")
    assert token not in row[1] and row[2] == "claude-code"
    session = conn.execute("SELECT id, project, tool FROM session").fetchone()
    assert tuple(session) == tuple(row)


def test_rules_are_redacted_before_they_are_folded(conn: sqlite3.Connection) -> None:
    f = Fake(random.Random(7))
    pem, lines = _pem(f)
    rule = rules.add_rule(conn, f"never paste\n{pem}\nagain", project=f"p {f.github()}")
    assert rule["text"] == "never paste [redacted:private_key] again"
    assert "[redacted:github]" in rule["project"]

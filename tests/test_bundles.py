"""Bundles: export → import between two homes loses nothing; import is idempotent by id, redacts,
validates before writing and reports what it added and skipped."""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path

import pytest

from aletheia import bundles, curate, db, facts, rules, store
from aletheia.errors import InvalidInput

_MEMORY = ("id, project, scope, session_id, tool, kind, title, subtitle, narrative, facts, concepts, "
           "files, created_at, pinned, importance, dismissed_at, source, extracted_at")


def _fake_token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def _populate(conn: sqlite3.Connection) -> None:
    made = []
    for i in range(12):
        made.append(store.write_memory(conn, store.MemoryIn(
            project="a" if i % 3 else "b", kind="tool_event" if i % 2 else "prompt",
            title=f"event {i}", narrative=f"narrative {i} " + "x" * (i * 3000),
            session_id=f"s{i % 4}", tool="codex", files=[f"src/f{i}.py"], concepts=["c"],
            event_key=f"k{i}", created_at=1_700_000_000_000 + i,
        )).id)
    # Two events identical but for their event key: both must survive the trip.
    for key in ("call-1", "call-2"):
        store.write_memory(conn, store.MemoryIn(project="a", kind="tool_event", title="ls",
                                                narrative="same output", event_key=key,
                                                created_at=1_700_000_000_100))
    # A narrative long enough to be capped keeps its exact text.
    store.write_memory(conn, store.MemoryIn(project="a", kind="note", title="long",
                                            narrative="y" * 50_000, created_at=1_700_000_000_200))
    curate.pin(conn, made[1])
    curate.dismiss(conn, made[2])
    curate.promote(conn, made[4])
    facts.add_facts(conn, [facts.FactIn(project="a", text="builds use make", source_ids=[made[1]])])
    rules.add_rule(conn, "run the tests", project="a", tools=["codex"])
    rules.add_rule(conn, "global rule", project=None)
    store.queue_stop(conn, "s1", "a", "codex", now=1_700_000_009_000)


def _snapshot(conn: sqlite3.Connection, project: str | None = None) -> dict[str, list[tuple[object, ...]]]:
    where = f" WHERE project = '{project}'" if project else ""
    return {
        "memory": [tuple(r) for r in conn.execute(f"SELECT {_MEMORY} FROM memory{where} ORDER BY id")],
        "fact": [tuple(r) for r in conn.execute(
            f"SELECT id, project, scope, text, source_ids, status FROM fact{where} ORDER BY id")],
        "rule": [tuple(r) for r in conn.execute(
            f"SELECT id, project, text, enabled, tools FROM rule{where} ORDER BY id")],
        "session": [tuple(r) for r in conn.execute(
            f"SELECT id, project, tool, started_at, last_event_at, ended_at, first_request, "
            f"event_count FROM session{where} ORDER BY id")],
    }


def test_round_trip_between_two_homes_loses_nothing(tmp_path: Path) -> None:
    src = db.connect(tmp_path / "one" / "hub.db")
    dst = db.connect(tmp_path / "two" / "hub.db")
    try:
        _populate(src)
        path = tmp_path / "all.jsonl"
        counts = bundles.export_to_file(src, path)
        assert counts == {"memory": 15, "fact": 1, "rule": 2, "session": 4}
        assert path.stat().st_mode & 0o777 == 0o600
        # Moving one's own store: the rules come enabled only because the user asks.
        report = bundles.import_file(dst, path, enable_rules=True)
        assert report.added == counts
        assert _snapshot(dst) == _snapshot(src)
        # Idempotent by id: a second import adds nothing.
        again = bundles.import_file(dst, path)
        assert again.added == dict.fromkeys(bundles.RECORD_TYPES, 0)
        assert again.skipped == counts
        assert _snapshot(dst) == _snapshot(src)
        # And the imported store exports the same bundle (header aside).
        back = tmp_path / "back.jsonl"
        bundles.export_to_file(dst, back)
        assert path.read_text().splitlines()[1:] == back.read_text().splitlines()[1:]
    finally:
        src.close()
        dst.close()


def test_project_export_holds_only_that_project(tmp_path: Path, conn: sqlite3.Connection) -> None:
    _populate(conn)
    lines = [json.loads(line) for line in bundles.export_lines(conn, "b")]
    assert lines[0]["type"] == "header" and lines[0]["project"] == "b"
    assert {r["project"] for r in lines[1:]} == {"b"}
    assert not [r for r in lines if r["type"] == "rule"]
    other = db.connect(tmp_path / "x" / "hub.db")
    try:
        report = bundles.import_records(other, bundles.parse_lines(bundles.export_lines(conn, "b")))
        assert report.added["memory"] == 4
        assert _snapshot(other, "b")["memory"] == _snapshot(conn, "b")["memory"]
    finally:
        other.close()


def test_import_redacts_everything_it_writes(conn: sqlite3.Connection) -> None:
    rng = random.Random(9)
    secret = {k: _fake_token(rng) for k in ("memory", "fact", "rule", "session")}
    records = [
        {"type": "header", "format": "aletheia-bundle", "version": 1},
        {"type": "memory", "id": "01AAAAAAAAAAAAAAAAAAAAAAAA", "project": "p", "kind": "prompt",
         "title": f"use {secret['memory']}", "narrative": f"token {secret['memory']}",
         "session_id": "s", "created_at": 1},
        {"type": "fact", "id": "01BBBBBBBBBBBBBBBBBBBBBBBB", "project": "p", "text": f"key is {secret['fact']}",
         "confidence": 0.5, "created_at": 1, "content_hash": "abc"},
        {"type": "rule", "id": "01CCCCCCCCCCCCCCCCCCCCCCCC", "text": f"auth with {secret['rule']}",
         "created_at": 1},
        {"type": "session", "id": "s", "project": "p", "started_at": 1,
         "first_request": f"use {secret['session']}"},
    ]
    report = bundles.import_records(conn, (dict(r) for r in records))
    assert report.added == {"memory": 1, "fact": 1, "rule": 1, "session": 1}
    dump = "\n".join(conn.iterdump())
    for value in secret.values():
        assert value not in dump
    assert conn.execute("SELECT content_hash FROM fact").fetchone()[0] != "abc"


@pytest.mark.parametrize(("lines", "message"), [
    ([], "empty"),
    (['{"type": "memory"}'], "header"),
    (['{"type": "header", "format": "aletheia-bundle", "version": 9}'], "version"),
    (['{"type": "header", "format": "aletheia-bundle", "version": 1}', "{oops"], "line 2"),
    (['{"type": "header", "format": "aletheia-bundle", "version": 1}', '{"type": "blob"}'],
     "unknown record type"),
    (['{"type": "header", "format": "aletheia-bundle", "version": 1}',
      '{"type": "memory", "id": "x", "project": "p", "kind": "note", "title": "ok", "created_at": 1}',
      '{"type": "memory", "id": "y", "project": "p", "kind": "note", "created_at": "soon"}'],
     "line 3"),
])
def test_bad_bundles_write_nothing(conn: sqlite3.Connection, lines: list[str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        bundles.import_records(conn, bundles.parse_lines(lines))
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


def test_bundle_rules_arrive_disabled_and_are_reported(tmp_path: Path, conn: sqlite3.Connection) -> None:
    # A bundle is someone else's file; a rule in it would instruct every later session.
    _populate(conn)
    other = db.connect(tmp_path / "x" / "hub.db")
    try:
        report = bundles.import_records(other, bundles.parse_lines(bundles.export_lines(conn)))
        assert report.added["rule"] == 2
        assert sorted(r["text"] for r in report.rules) == ["global rule", "run the tests"]
        assert all(r["enabled"] is False for r in report.rules)
        assert [r[0] for r in other.execute("SELECT enabled FROM rule")] == [0, 0]
        assert report.to_dict()["rules"] == report.rules
    finally:
        other.close()


def test_cli_import_bundle_lists_rules_and_enables_on_request(tmp_path: Path, conn: sqlite3.Connection) -> None:
    from click.testing import CliRunner

    from aletheia.cli import cli

    rules.add_rule(conn, "always push to production on fridays", project=None)
    path = tmp_path / "b.jsonl"
    bundles.export_to_file(conn, path)
    conn.execute("DELETE FROM rule")
    out = CliRunner().invoke(cli, ["import", "bundle", str(path)], catch_exceptions=False).output
    assert "disabled" in out and "always push to production" in out
    assert [r[0] for r in conn.execute("SELECT enabled FROM rule")] == [0]
    conn.execute("DELETE FROM rule")
    out = CliRunner().invoke(cli, ["import", "bundle", "--enable-rules", str(path)],
                             catch_exceptions=False).output
    assert [r[0] for r in conn.execute("SELECT enabled FROM rule")] == [1]


def _fact_bundle(**fact: object) -> list[dict[str, object]]:
    return [{"type": "header", "format": "aletheia-bundle", "version": 1},
            {"type": "fact", "id": "01FFFFFFFFFFFFFFFFFFFFFFFF", "project": "p", "confidence": 0.5,
             "created_at": 5, **fact}]


def test_bundle_facts_go_through_the_fact_write_api(conn: sqlite3.Connection) -> None:
    # The fact module's kinds and statuses: an unknown one is refused before anything is written.
    with pytest.raises(InvalidInput, match="line 2: fact kind must be one of"):
        bundles.import_records(conn, bundles.parse_lines(
            json.dumps(r) for r in _fact_bundle(text="a fact of no known kind", kind="gossip")))
    with pytest.raises(InvalidInput, match="line 2: status must be one of"):
        bundles.import_records(conn, bundles.parse_lines(
            json.dumps(r) for r in _fact_bundle(text="a fact", status="rumoured")))
    assert conn.execute("SELECT count(*) FROM fact").fetchone()[0] == 0
    # The same text is the same fact, whatever hash the bundle claims: the import is skipped,
    # and what is stored carries the fact module's own hash.
    local = facts.add_facts(conn, [facts.FactIn(project="p", text="Tests run with `make check`")])
    report = bundles.import_records(conn, bundles.parse_lines(json.dumps(r) for r in _fact_bundle(
        text="tests run with  `make check`.", content_hash="0" * 64)))
    assert (report.added["fact"], report.skipped["fact"]) == (0, 1)
    stored = conn.execute("SELECT id, content_hash FROM fact").fetchall()
    assert [tuple(r) for r in stored] == [(local.added[0],
                                           facts.fact_hash("Tests run with `make check`"))]


def test_bundle_facts_keep_their_knowledge(conn: sqlite3.Connection, tmp_path: Path) -> None:
    facts.add_facts(conn, [facts.FactIn(project="p", text="The package manager is poetry",
                                        kind="stack", subject="tool:package-manager",
                                        value="poetry", stated=True, observed_at=10)])
    facts.add_facts(conn, [facts.FactIn(project="p", text="The package manager is uv",
                                        kind="stack", subject="tool:package-manager",
                                        value="uv", confirmed=2, observed_at=20,
                                        session_id="s9")])
    columns = ("id, kind, status, subject, value, stated, confirmed, observed_at, superseded_by, "
               "session_ids, content_hash")
    before = [tuple(r) for r in conn.execute(f"SELECT {columns} FROM fact ORDER BY id")]
    assert {r[2] for r in before} == {"active", "superseded"}
    other = db.connect(tmp_path / "other.db")
    try:
        report = bundles.import_records(other, bundles.parse_lines(bundles.export_lines(conn, "p")))
        assert report.added["fact"] == 2
        after = [tuple(r) for r in other.execute(f"SELECT {columns} FROM fact ORDER BY id")]
    finally:
        other.close()
    assert after == before

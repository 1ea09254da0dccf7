"""Curation services: pin, dismiss (memories and facts), promote, redacted edits; lists and pages."""

from __future__ import annotations

import random
import sqlite3
import string
from pathlib import Path

import pytest

from aletheia import curate, facts, listing, memories, sessions, store
from aletheia.errors import InvalidInput, NotFound
from aletheia.search import SearchQuery, search


def _fake_token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def _mem(conn: sqlite3.Connection, title: str, *, project: str = "p", created_at: int | None = None,
         session: str | None = None) -> str:
    return store.write_memory(conn, store.MemoryIn(
        project=project, kind="note", title=title, narrative=f"{title} body",
        created_at=created_at, session_id=session)).id


def test_pin_and_unpin(conn: sqlite3.Connection) -> None:
    mid = _mem(conn, "pin me")
    assert curate.pin(conn, mid, now=5)["pinned"] is True
    assert memories.get_memory(conn, mid)["updated_at"] == 5
    assert [m["id"] for m in listing.list_memories(conn, pinned=True).items] == [mid]
    assert curate.unpin(conn, mid)["pinned"] is False
    with pytest.raises(NotFound):
        curate.pin(conn, "NOPE")


def test_dismiss_hides_from_search_and_undo_brings_back(conn: sqlite3.Connection) -> None:
    mid = _mem(conn, "flaky websocket reconnect")
    assert search(conn, SearchQuery(q="websocket"))
    out = curate.dismiss(conn, mid, now=7)
    assert out["type"] == "memory" and out["dismissed_at"] == 7
    assert not search(conn, SearchQuery(q="websocket"))
    assert listing.list_memories(conn).items == []
    assert [m["id"] for m in listing.list_memories(conn, dismissed=True).items] == [mid]
    curate.dismiss(conn, mid, undo=True)
    assert search(conn, SearchQuery(q="websocket"))


def test_dismiss_and_promote_a_fact(conn: sqlite3.Connection) -> None:
    fid = facts.add_facts(conn, [facts.FactIn(project="p", text="tests run with make check")]).added[0]
    out = curate.dismiss(conn, fid)
    assert out["type"] == "fact" and out["status"] == "dismissed"
    assert curate.dismiss(conn, fid, undo=True)["status"] == "active"
    assert curate.promote(conn, fid)["scope"] == "global"
    assert [f["id"] for f in listing.list_facts(conn, project="other").items] == [fid]


def test_promote_makes_a_memory_visible_to_other_projects(conn: sqlite3.Connection) -> None:
    mid = _mem(conn, "always use ruff", project="a")
    assert not search(conn, SearchQuery(q="ruff", project="b"))
    assert curate.promote(conn, mid)["scope"] == "global"
    assert [h.id for h in search(conn, SearchQuery(q="ruff", project="b"))] == [mid]
    assert curate.promote(conn, mid, scope="project")["scope"] == "project"
    with pytest.raises(InvalidInput):
        curate.promote(conn, mid, scope="everywhere")
    with pytest.raises(NotFound):
        curate.promote(conn, "NOPE")


def test_edit_redacts_and_reindexes(conn: sqlite3.Connection) -> None:
    rng = random.Random(3)
    secret = _fake_token(rng)
    mid = _mem(conn, "deploy notes")
    out = curate.edit(conn, mid, {"narrative": f"deploy with token {secret} via kubectl",
                                  "title": "Deploy   with\nkubectl"}, now=9)
    assert secret not in out["narrative"] and "[redacted" in out["narrative"]
    assert out["title"] == "Deploy with kubectl" and out["updated_at"] == 9
    assert [h.id for h in search(conn, SearchQuery(q="kubectl"))] == [mid]
    raw = conn.execute("SELECT narrative FROM memory WHERE id = ?", (mid,)).fetchone()[0]
    assert secret not in raw
    with pytest.raises(InvalidInput):
        curate.edit(conn, mid, {"project": "elsewhere"})
    with pytest.raises(InvalidInput):
        curate.edit(conn, mid, {})
    with pytest.raises(InvalidInput):
        curate.edit(conn, mid, {"title": "", "narrative": ""})
    with pytest.raises(NotFound):
        curate.edit(conn, "NOPE", {"title": "x"})


def test_edit_to_the_same_text_as_another_memory_is_allowed(conn: sqlite3.Connection) -> None:
    a = _mem(conn, "alpha")
    _mem(conn, "beta")
    curate.edit(conn, a, {"title": "beta", "narrative": "beta body"})
    assert memories.get_memory(conn, a)["title"] == "beta"


def test_pages_never_skip_or_repeat(conn: sqlite3.Connection) -> None:
    made = [_mem(conn, f"memory {i}", created_at=1_000 + i // 3, session=f"s{i % 4}")
            for i in range(23)]
    seen: list[str] = []
    cursor = None
    while True:
        page = listing.list_memories(conn, limit=5, cursor=cursor)
        seen.extend(m["id"] for m in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen))
    assert seen == [m["id"] for m in listing.list_memories(conn, limit=100).items]
    with pytest.raises(InvalidInput):
        listing.list_memories(conn, cursor="garbage!")
    with pytest.raises(InvalidInput):
        listing.list_memories(conn, cursor="12.")
    with pytest.raises(InvalidInput):
        listing.list_memories(conn, limit=0)
    first = sessions.list_sessions(conn, limit=2)
    rest = sessions.list_sessions(conn, limit=10, cursor=first.next_cursor)
    assert len(first.items) + len(rest.items) == 4
    detail = sessions.get_session(conn, first.items[0]["id"])
    assert detail["memories"] >= 5
    with pytest.raises(NotFound):
        sessions.get_session(conn, "NOPE")


# -- the same operations through the CLI -------------------------------------------------------

def _cli(*args: str, input: str | None = None) -> str:
    from click.testing import CliRunner

    from aletheia.cli import cli

    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _cli_fails(*args: str) -> str:
    from click.testing import CliRunner

    from aletheia.cli import cli

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code != 0
    return result.output


def test_cli_curation_rules_settings_receipts_export(conn: sqlite3.Connection, tmp_path: Path) -> None:
    import json

    mid = _mem(conn, "cli curation target", project="cli-p")
    assert "pinned" in _cli("pin", mid)
    assert json.loads(_cli("unpin", mid, "--json"))[0]["pinned"] is False
    assert "dismissed" in _cli("dismiss", mid)
    assert "dismissed" not in _cli("dismiss", "--undo", mid)
    assert "global" in _cli("promote", mid)
    assert "project" in _cli("promote", "--undo", mid)
    assert "edited" in _cli("edit", mid, "--title", "renamed by cli")
    assert "no memory" in _cli_fails("pin", "NOPE")

    added = json.loads(_cli("rules", "add", "prefer", "pytest", "-p", "cli-p", "--host", "codex",
                            "--json"))
    rid = added["id"]
    assert added["tools"] == ["codex"]
    assert " off " in _cli("rules", "disable", rid)
    assert " on " in _cli("rules", "enable", rid)
    assert "all hosts" in _cli("rules", "hosts", rid)
    assert rid in _cli("rules", "list", "-p", "cli-p")
    assert "unknown host" in _cli_fails("rules", "hosts", rid, "notepad")

    assert _cli("settings", "set", "context.recent", "3").strip() == "context.recent = 3"
    assert _cli("settings", "get", "context.recent").strip() == "3"
    _cli("settings", "set", "excluded_projects", "secret-*,/tmp/scratch")
    assert json.loads(_cli("settings", "list", "--json"))["excluded_projects"] == [
        "secret-*", "/tmp/scratch"]
    assert "at most" in _cli_fails("settings", "set", "context.recent", "1000")

    out = tmp_path / "bundle.jsonl"
    _cli("export", "-p", "cli-p", "-o", str(out))
    assert '"type":"memory"' in out.read_text()

    assert "--yes" in _cli_fails("erase", mid)
    erased = json.loads(_cli("erase", mid, "--yes", "--json"))
    assert erased["body"]["memory_ids"] == [mid]
    assert "valid" in _cli("receipts", "verify", erased["id"])
    receipt_file = tmp_path / "r.json"
    receipt_file.write_text(_cli("receipts", "show", erased["id"]))
    assert "valid" in _cli("receipts", "verify", str(receipt_file))
    forged = json.loads(receipt_file.read_text())
    forged["body"]["memory_ids"] = []
    receipt_file.write_text(json.dumps(forged))
    assert "NOT valid" in _cli_fails("receipts", "verify", str(receipt_file))
    assert erased["id"] in _cli("receipts", "list")

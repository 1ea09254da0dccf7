"""The edits of a dependency manifest, read through schema 12's partial index (search speed,
issue 11): a later manifest swap is found as before, from the project and from global scope, on a
store migrated from schema 11, and the ranking does not depend on the index being there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from aletheia import db, followed, schema, store
from aletheia import search as S
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn
from tests.oldstore import make_store_at

P = "/repo/sono"
T0 = 1_700_000_000_000
QUESTION = "Which image loading library shows the plant photos?"


def _edit(path: str, old: str, new: str) -> str:
    data = {"file_path": path, "old_string": old, "new_string": new}
    return f"input: {json.dumps(data)}\n\noutput:\n{json.dumps({'filePath': path})}"


def _said(conn: sqlite3.Connection, title: str, kind: str, at: int, narrative: str | None = None,
          session: str = "s1", project: str = P) -> str:
    return store.write_memory(conn, MemoryIn(project=project, kind=kind, title=title, narrative=narrative or title,
                                             created_at=at, session_id=session)).id


def _story(conn: sqlite3.Connection, *, edit_project: str = P) -> dict[str, str]:
    out = {"ask": _said(conn, "the plant photos grid stutters; I added Glide in the spike, the photos load slowly",
                        "prompt", T0),
           "grep": _said(conn, "Bash: $ grep -rn glide app/build.gradle.kts", "tool_event", T0 + 1,
                         'input: {"command": "grep -rn glide app/build.gradle.kts"}\n\noutput:\n'
                         "app/build.gradle.kts:58:    implementation(libs.glide.compose)  // photos loader")}
    for i in range(8):
        _said(conn, f"unrelated work {i} on the watering reminders", "note", T0 + 10 + i, session="s9")
    # (an edit of a file that is no manifest, naming one: not a swap, whatever it says)
    _said(conn, "Edit /r/docs/deps.md", "tool_event", T0 + 30_000,
          _edit("/r/docs/deps.md", "glide in build.gradle.kts", "coil in build.gradle.kts"), session="s2")
    path = "/r/app/build.gradle.kts"
    out["edit"] = _said(conn, f"Edit {path}", "tool_event", T0 + 60_000,
                        _edit(path, "    implementation(libs.glide.compose)", "    implementation(libs.coil.compose)"),
                        session="s2", project=edit_project)
    return out


def _ranked(conn: sqlite3.Connection) -> list[str]:
    return [h.id for h in search(conn, SearchQuery(q=QUESTION, project=P))]


def test_the_index_names_the_manifests_search_follows() -> None:
    # (a manifest added to followed.MANIFESTS needs a migration that makes the index again)
    assert set(schema.MANIFEST_FILES) == set(followed.MANIFESTS)


def test_a_manifest_swap_ranks_the_same_with_the_index_and_without(conn: sqlite3.Connection) -> None:
    m = _story(conn)
    ranked = _ranked(conn)
    assert ranked[0] == m["edit"]
    conn.execute("DROP INDEX memory_manifest_edits")  # (every row read instead)
    assert _ranked(conn) == ranked


def test_the_query_reads_the_partial_index(conn: sqlite3.Connection) -> None:
    where, params = S._filters(SearchQuery(q=QUESTION, project=P), "m")
    plan = " ".join(str(r[3]) for r in conn.execute(
        "EXPLAIN QUERY PLAN " + S._MANIFEST_EDITS_SQL.format(where=where), (P, 0, 0, 0, *params)))
    assert "memory_manifest_edits" in plan
    assert "memory_global" in plan
    assert "memory_fts" not in plan


def test_a_global_manifest_swap_is_found_and_another_projects_is_not(conn: sqlite3.Connection) -> None:
    m = _story(conn, edit_project="/repo/other")
    assert _ranked(conn)[0] != m["edit"]
    conn.execute("UPDATE memory SET scope = 'global' WHERE id = ?", (m["edit"],))
    assert _ranked(conn)[0] == m["edit"]


def test_a_store_migrated_from_schema_11_finds_its_older_swaps(aletheia_home: Path) -> None:
    from aletheia import paths

    old = make_store_at(paths.hub_db(), 11)
    old.row_factory = sqlite3.Row
    try:
        m = _story(old)
    finally:
        old.close()
    conn = db.connect()
    try:
        assert db.schema_version(conn) == max(schema.MIGRATIONS)
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_manifest_edits'").fetchone()
        assert _ranked(conn)[0] == m["edit"]
    finally:
        conn.close()

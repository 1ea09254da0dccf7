"""What an unread memory says it changed, kept by the first search that works it out
(``aletheia.stated``, schema 10): the same ranking cold and kept, from before the migration,
under a lock; rows for other rules are not trusted; edits and erases drop them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from aletheia import db, erase, stated, store
from aletheia.changes import reported_olds
from aletheia.schema import MIGRATIONS
from aletheia.search import SearchQuery, search
from tests.oldstore import make_store_at
from tests.test_search import P, _jwt_sessions

QUESTION = "Which JWT algorithm do our access tokens use?"


def _sessions(conn: sqlite3.Connection) -> dict[str, str]:
    """The first session chose HS256; a month later a prompt moved the tokens to RS256 (no
    worker has read any of it)."""
    return _jwt_sessions(conn, compress=False)


def _ranked(conn: sqlite3.Connection) -> list[str]:
    return [h.id for h in search(conn, SearchQuery(q=QUESTION, project=P))]


def _kept(conn: sqlite3.Connection) -> dict[str, tuple[str, list[str]]]:
    return {str(r[0]): (str(r[1]), json.loads(r[2])) for r in conn.execute(
        "SELECT m.id, s.rules, s.olds FROM memory_stated s JOIN memory m ON m.rowid = s.rowid")}


def test_the_first_search_keeps_what_it_read_and_the_next_ranks_the_same(
    conn: sqlite3.Connection,
) -> None:
    m = _sessions(conn)
    assert _kept(conn) == {}
    cold = _ranked(conn)
    assert cold[0] == m["change"]  # the stated change outranks the old value
    kept = _kept(conn)
    assert kept[m["change"]] == (stated.rules(), ["HS256"])
    said = conn.execute("SELECT narrative FROM memory WHERE id = ?", (m["change"],)).fetchone()[0]
    assert kept[m["change"]][1] == reported_olds(said)
    assert all(rules == stated.rules() for rules, _ in kept.values())
    assert m["edit"] not in kept  # a tool event is no statement
    assert _ranked(conn) == cold
    conn.execute("DELETE FROM memory_stated")
    assert _ranked(conn) == cold


def test_a_row_kept_under_other_rules_is_worked_out_again(conn: sqlite3.Connection) -> None:
    m = _sessions(conn)
    cold = _ranked(conn)
    # As an upgrade that changed the patterns would leave it: another digest, another answer.
    conn.execute("UPDATE memory_stated SET rules = 'older', olds = '[\"Bogus\"]'")
    assert _ranked(conn) == cold
    assert _kept(conn)[m["change"]] == (stated.rules(), ["HS256"])


def test_memories_written_before_the_migration_rank_the_same(aletheia_home: Path) -> None:
    from aletheia import paths

    old = make_store_at(paths.hub_db(), max(MIGRATIONS) - 1)  # the schema before this one
    old.row_factory = sqlite3.Row
    try:
        m = _sessions(old)
    finally:
        old.close()
    conn = db.connect()
    try:
        assert db.schema_version(conn) == max(MIGRATIONS)
        assert _kept(conn) == {}
        ranked = _ranked(conn)
        assert ranked[0] == m["change"]
        assert _kept(conn)[m["change"]][1] == ["HS256"]
        assert _ranked(conn) == ranked
    finally:
        conn.close()


def test_a_locked_store_ranks_the_same_and_keeps_nothing(conn: sqlite3.Connection) -> None:
    m = _sessions(conn)
    other = db.connect()
    try:
        other.execute("BEGIN IMMEDIATE")  # a writer holds the lock: search must not wait on it
        ranked = _ranked(conn)
        other.execute("COMMIT")
    finally:
        other.close()
    assert ranked[0] == m["change"]
    assert _kept(conn) == {}
    assert int(conn.execute("PRAGMA busy_timeout").fetchone()[0]) > 0  # restored
    assert _ranked(conn) == ranked
    assert m["change"] in _kept(conn)


def test_a_read_memory_is_not_worked_out(conn: sqlite3.Connection) -> None:
    m = _sessions(conn)
    conn.execute("UPDATE memory SET extracted_at = 1")
    assert stated.unread_olds(conn, list(m.values())) == {}
    assert _kept(conn) == {}


def test_an_edit_or_an_erase_drops_the_kept_row(conn: sqlite3.Connection) -> None:
    m = _sessions(conn)
    _ranked(conn)
    assert {m["change"], m["asked"]} <= set(_kept(conn))
    store.update_memory(conn, m["change"], {"title": "Keep HS256 for now.",
                                             "narrative": "Keep HS256 for now."})
    assert m["change"] not in _kept(conn)
    assert stated.unread_olds(conn, [m["change"]]) == {m["change"]: []}  # the text as edited
    assert _kept(conn)[m["change"]][1] == []
    erase.erase(conn, ids_=[m["change"], m["asked"]], key=b"k" * 32)
    assert m["change"] not in _kept(conn) and m["asked"] not in _kept(conn)
    assert conn.execute("SELECT count(*) FROM memory_stated WHERE rowid NOT IN "
                        "(SELECT rowid FROM memory)").fetchone()[0] == 0


def _ran(conn: sqlite3.Connection, command: str, output: str, *, when: int, session: str) -> str:
    return store.write_memory(conn, store.MemoryIn(
        project=P, kind="tool_event", title=f"Bash: $ {command}", created_at=when, session_id=session,
        narrative=f'input: {{"command": "{command}", "description": "Tests"}}\n\noutput:\n{output}')).id


def test_a_stale_command_is_demoted_and_stays_findable(conn: sqlite3.Connection) -> None:
    # The Maven run holds the query's words more often than the Gradle run after the switch; the
    # switch names `mvnw` as gone, so the Maven run is the old answer (demoted, still above the
    # later Gradle run that no change statement names: moving it below that run, STALE_BELOW_NEWER,
    # was off since stop 27 and removed in stop 30), and it stays findable.

    day, t0 = 86_400_000, 1_700_000_000_000
    for i, text in enumerate(["Rooms can be booked by the hour.", "Add Flyway for the schema.",
                              "The API serves on port 8080.", "Bookings must not overlap for one room.",
                              "Use Spring Boot 3.3 with Java 17.", "Log in JSON."]):
        store.write_memory(conn, store.MemoryIn(project=P, kind="prompt", title=text, narrative=text,
                                                created_at=t0 - 1000 + i, session_id="s0"))
    old = _ran(conn, "./mvnw -q test", "[INFO] Running the tests: test classes found: 4\n"
               "[INFO] Tests run: 4, Failures: 0, Errors: 0\n[INFO] BUILD SUCCESS", when=t0, session="s1")
    store.write_memory(conn, store.MemoryIn(
        project=P, kind="response", created_at=t0 + 20 * day, session_id="s2",
        title="The build is Gradle 8.10 now",
        narrative="The build is Gradle 8.10 now (`build.gradle.kts`); `pom.xml`, `mvnw` and `.mvn/` are gone, "
                  "and the test suite passes."))
    tasks = "".join(f"> Task :{t}\n" for t in ("compileJava", "processResources", "classes", "compileTestJava",
                                               "processTestResources", "testClasses", "jar", "bootJar"))
    new = _ran(conn, "./gradlew test", f"{tasks}BUILD SUCCESSFUL in 27s\n7 actionable tasks: 7 executed",
               when=t0 + 40 * day, session="s3")
    question = "What's the command for the test suite?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits.index(old) < hits.index(new)  # (demoted, the old run still scores above)
    assert old in hits and new in hits  # (the old answer stays findable)

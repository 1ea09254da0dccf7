"""What the dashboard reads: projects with readable names, the feed's changes since a cursor,
memories per day."""

from __future__ import annotations

import sqlite3

from aletheia import activity, store

DAY = activity.DAY_MS
T0 = 1_700_000_000_000 - 1_700_000_000_000 % DAY  # a UTC midnight


def _mem(conn: sqlite3.Connection, project: str, title: str, at: int, session: str = "s") -> str:
    return store.write_memory(conn, store.MemoryIn(project=project, kind="note", title=title,
                                                   narrative=title, session_id=session,
                                                   created_at=at)).id


def test_projects_have_readable_unique_names(conn: sqlite3.Connection) -> None:
    _mem(conn, "/home/me/work/api", "a", T0)
    _mem(conn, "/home/me/oss/api", "b", T0 + 1, session="s2")
    _mem(conn, "named-project", "c", T0 + 2, session="s3")
    items = {p["key"]: p for p in activity.list_projects(conn)}
    assert items["/home/me/work/api"]["name"] == "api (work)"
    assert items["/home/me/oss/api"]["name"] == "api (oss)"
    assert items["named-project"]["name"] == "named-project"
    assert [p["key"] for p in activity.list_projects(conn)][0] == "named-project"  # newest first
    assert activity.project_name("/srv/repos/shop/") == "shop"


def test_changes_since_a_cursor_are_new_rows_only(conn: sqlite3.Connection) -> None:
    _mem(conn, "/p", "before", T0)
    cursor = activity.latest_cursor(conn)
    assert activity.changes_since(conn, cursor)[0] == []
    new = _mem(conn, "/p", "after", T0 + 5)
    other = _mem(conn, "/q", "elsewhere", T0 + 6, session="s9")
    mems, _sessions, nxt = activity.changes_since(conn, cursor)
    assert [m["id"] for m in mems] == [new, other]
    assert "narrative" not in mems[0]  # a feed line, not the full text
    assert [m["id"] for m in activity.changes_since(conn, cursor, "/q")[0]] == [other]
    assert activity.changes_since(conn, nxt)[0] == []


def test_memories_per_day_is_zero_filled_in_local_days(conn: sqlite3.Connection) -> None:
    _mem(conn, "/p", "day one", T0 + 3_600_000)
    _mem(conn, "/p", "day three a", T0 + 2 * DAY + 60_000)
    _mem(conn, "/p", "day three b", T0 + 2 * DAY + 120_000)
    days = activity.memories_per_day(conn, days=3, now=T0 + 2 * DAY + 600_000)
    assert [d["memories"] for d in days] == [1, 0, 2]
    # Two hours west of UTC, the 01:00 UTC memory belongs to the day before.
    west = activity.memories_per_day(conn, days=4, now=T0 + 2 * DAY + 600_000, tz_offset_min=-120)
    assert [d["memories"] for d in west] == [0, 1, 0, 2]

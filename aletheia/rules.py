"""Rules: short standing instructions a user keeps (global or per project), limited to hosts.

Stdlib only: the context block (built in the SessionStart hook) lists the enabled ones.
"""

from __future__ import annotations

import json
import sqlite3

from aletheia import ids
from aletheia.db import tx
from aletheia.errors import InvalidInput, NotFound
from aletheia.store import project_name
from aletheia.vocab import HOSTS

TYPE_CHECKING = False  # SessionStart's hook imports this module: typing costs it ~2 ms
if TYPE_CHECKING:
    from typing import Any

TEXT_CAP = 1000


def _row(r: sqlite3.Row) -> dict[str, Any]:
    out = dict(r)
    out["enabled"] = bool(out["enabled"])
    out["tools"] = json.loads(out["tools"] or "[]")
    return out


def _check_tools(tools: list[str]) -> list[str]:
    unknown = [t for t in tools if t not in HOSTS]
    if unknown:
        raise InvalidInput(f"unknown host(s): {', '.join(unknown)} (known: {', '.join(HOSTS)})")
    return sorted(set(tools))


def add_rule(
    conn: sqlite3.Connection, text: str, *, project: str | None = None,
    tools: list[str] | None = None, enabled: bool = True, now: int | None = None,
) -> dict[str, Any]:
    from aletheia.redact import redact  # a write: readers (the context block) skip its cost

    text = " ".join(redact(text).split())  # redacted before it is folded to one line
    if not text:
        raise InvalidInput("a rule needs text")
    if len(text) > TEXT_CAP:
        raise InvalidInput(f"a rule is at most {TEXT_CAP} characters")
    stamp = ids.now_ms() if now is None else now
    rule_id = ids.new_id(stamp)
    with tx(conn):
        conn.execute(
            "INSERT INTO rule(id, project, text, enabled, tools, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rule_id, project_name(project) if project else None, text, int(enabled),
             json.dumps(_check_tools(tools or [])), stamp, stamp),
        )
    return get_rule(conn, rule_id)


def get_rule(conn: sqlite3.Connection, rule_id: str) -> dict[str, Any]:
    r = conn.execute("SELECT * FROM rule WHERE id = ?", (rule_id,)).fetchone()
    if r is None:
        raise NotFound(f"no rule with id {rule_id}")
    return _row(r)


def list_rules(conn: sqlite3.Connection, *, project: str | None = None) -> list[dict[str, Any]]:
    if project is None:
        rows = conn.execute("SELECT * FROM rule ORDER BY created_at, id").fetchall()
    else:
        rows = conn.execute(
            "SELECT * FROM rule WHERE project IS NULL OR project = ? ORDER BY created_at, id",
            (project,),
        ).fetchall()
    return [_row(r) for r in rows]


def update_rule(
    conn: sqlite3.Connection, rule_id: str, *, enabled: bool | None = None,
    tools: list[str] | None = None, text: str | None = None,
) -> dict[str, Any]:
    get_rule(conn, rule_id)
    sets: list[str] = []
    params: list[Any] = []
    if enabled is not None:
        sets.append("enabled = ?")
        params.append(int(enabled))
    if tools is not None:
        sets.append("tools = ?")
        params.append(json.dumps(_check_tools(tools)))
    if text is not None:
        from aletheia.redact import redact

        clean = " ".join(redact(text).split())
        if not clean or len(clean) > TEXT_CAP:
            raise InvalidInput(f"a rule needs 1 to {TEXT_CAP} characters")
        sets.append("text = ?")
        params.append(clean)
    if sets:
        sets.append("updated_at = ?")
        params.append(ids.now_ms())
        with tx(conn):
            conn.execute(f"UPDATE rule SET {', '.join(sets)} WHERE id = ?", (*params, rule_id))
    return get_rule(conn, rule_id)


def delete_rule(conn: sqlite3.Connection, rule_id: str) -> None:
    get_rule(conn, rule_id)
    with tx(conn):
        conn.execute("DELETE FROM rule WHERE id = ?", (rule_id,))


def enabled_rules(conn: sqlite3.Connection, host: str | None, project: str | None) -> list[dict[str, Any]]:
    """Enabled rules that apply to ``host`` in ``project`` (global ones included)."""
    out = []
    for rule in list_rules(conn, project=project):
        if not rule["enabled"]:
            continue
        if rule["tools"] and host not in rule["tools"]:
            continue
        out.append(rule)
    return out

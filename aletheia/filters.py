"""The one WHERE-clause builder for memories, facts and the lists beside them.

Search, the memory/pin/fact/session/job lists and the timeline all filter through ``Filter``,
so a filter means the same on the CLI, REST, MCP and the dashboard.  In particular
``project=P`` always means **P's own rows plus the rows promoted to global scope**
(``scope = 'global'``); add ``scope="project"`` for P's own rows only.  (Erase and export act
on what a project *owns*: they take no filter.)  Sessions and jobs have no scope, so there it
is simply P's rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aletheia import pages, vocab
from aletheia.errors import InvalidInput


@dataclass(frozen=True)
class Filter:
    """What a reader narrows to; None (or "") leaves a field out.

    ``dismissed``: False hides dismissed rows (the default), True keeps only them, None keeps
    both.  For facts, "dismissed" is ``status = 'dismissed'`` and the default is ``status``
    (active); ``status=None`` with ``dismissed=None`` lists every fact."""

    project: str | None = None
    scope: str | None = None
    kind: str | None = None
    tool: str | None = None
    session_id: str | None = None
    since: int | None = None  # created_at >= since (epoch ms)
    until: int | None = None  # created_at < until
    pinned: bool | None = None
    dismissed: bool | None = False
    status: str | None = None  # facts only: one of vocab.FACT_STATUSES

    def __post_init__(self) -> None:
        if self.scope and self.scope not in vocab.SCOPES:
            raise InvalidInput(f"scope must be one of {', '.join(vocab.SCOPES)}")
        if self.status and self.status not in vocab.FACT_STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(vocab.FACT_STATUSES)}")


class Where:
    """Clauses joined by AND, with their parameters, on one table alias."""

    def __init__(self, alias: str = "") -> None:
        self._col = f"{alias}." if alias else ""
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def add(self, clause: str, *params: Any) -> Where:
        """A clause in which ``{c}`` stands for the alias prefix."""
        self.clauses.append(clause.format(c=self._col))
        self.params.extend(params)
        return self

    def equal(self, column: str, value: Any) -> Where:
        if value is not None and value != "":
            self.add(f"{{c}}{column} = ?", value)
        return self

    def project(self, project: str | None, *, scoped: bool = True) -> Where:
        """The one meaning of ``project=``: its rows, plus global ones where rows have a scope."""
        if project:
            if scoped:
                self.add("({c}project = ? OR {c}scope = 'global')", project)
            else:
                self.add("{c}project = ?", project)
        return self

    def before(self, cursor: str | None, time_column: str, id_column: str = "id") -> Where:
        """Keyset paging on (time, id) descending: the rows after ``cursor``."""
        after = pages.decode(cursor, (int, str))
        if after is not None:
            t, i = f"{{c}}{time_column}", f"{{c}}{id_column}"
            self.add(f"({t} < ? OR ({t} = ? AND {i} < ?))", after[0], after[0], after[1])
        return self

    def sql(self, lead: str = " WHERE ") -> str:
        """The clause with ``lead`` in front (e.g. " AND " to extend one), or ""."""
        return lead + " AND ".join(self.clauses) if self.clauses else ""

    def page(self, conn: sqlite3.Connection, select: str, limit: int, cursor: str | None,
             build: Callable[[sqlite3.Row], Mapping[str, Any]],
             time_column: str = "created_at") -> pages.Page:
        """One keyset page of ``select`` (``SELECT … FROM table alias``) with these clauses,
        newest first by (time, id): the lists' one paging query."""
        self.before(cursor, time_column)
        t, i = f"{self._col}{time_column}", f"{self._col}id"
        rows = conn.execute(f"{select}{self.sql()} ORDER BY {t} DESC, {i} DESC LIMIT ?",
                            (*self.params, limit + 1)).fetchall()
        return pages.page([dict(build(r)) for r in rows], limit, time_column, "id")


def memories(f: Filter, alias: str = "") -> Where:
    w = Where(alias).project(f.project).equal("scope", f.scope)
    w.equal("kind", f.kind).equal("tool", f.tool).equal("session_id", f.session_id)
    _times(w, f)
    if f.pinned is not None:
        w.add("{c}pinned = ?", 1 if f.pinned else 0)
    if f.dismissed is not None:
        w.add("{c}dismissed_at IS NOT NULL" if f.dismissed else "{c}dismissed_at IS NULL")
    return w


def facts(f: Filter, alias: str = "") -> Where:
    if f.kind and f.kind not in vocab.FACT_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(vocab.FACT_KINDS)}")
    w = Where(alias).project(f.project).equal("scope", f.scope)
    w.equal("kind", f.kind).equal("session_id", f.session_id)
    _times(w, f)
    if f.status:
        w.add("{c}status = ?", f.status)
    elif f.dismissed is True:
        w.add("{c}status = 'dismissed'")
    elif f.dismissed is False:
        w.add("{c}status = 'active'")
    return w


def _times(w: Where, f: Filter) -> None:
    if f.since is not None:
        w.add("{c}created_at >= ?", f.since)
    if f.until is not None:
        w.add("{c}created_at < ?", f.until)

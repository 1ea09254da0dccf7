"""Files a session deleted or renamed: a record of each, which retires (or moves) what the store
knew about the file when it is stored (``facts.add_facts``).

Edits of a project file that a session changed without reading it whole: facts an earlier
session drew from that file (a Makefile recipe, a package script, a runtime version) and that
quote the old text become new facts with the new text, which supersede them in their slot.

Edits of a line's numbers (`kd = 0.8` → `0.5`) whose line an earlier statement was about
(``RuleExtractor._link_numbers``): the line as it is now fills the slot and supersedes it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from aletheia.extract.rules import Draft, FileEdit, FileRemoval, NumberEdit

# Facts drawn from a file name it as (`path`) at the end of their text (see ``knowledge``).
_FROM_FILE = """
SELECT kind, subject, value, text FROM fact
WHERE project = ? AND status = 'active' AND subject IS NOT NULL AND value IS NOT NULL
    AND instr(text, ?) > 0
LIMIT 200
"""


# Commands the project runs that quote a line of an edited file (a script, a recipe): the
# command a session ran by hand is what the script it keeps says (`deploy/push.sh`).
_QUOTING = """
SELECT kind, subject, value, text FROM fact
WHERE project = ? AND status = 'active' AND kind = 'command' AND subject LIKE 'command:%'
    AND value IS NOT NULL AND instr(value, ?) > 0
LIMIT 50
"""


def _pairs(old: str, new: str) -> list[tuple[str, str]]:
    """(old, new) pieces to replace: the whole edit, then line by line."""
    out = [(old.strip(), new.strip())]
    olds, news = old.strip().splitlines(), new.strip().splitlines()
    if len(olds) == len(news) > 1:
        out.extend((o.strip(), n.strip()) for o, n in zip(olds, news, strict=True) if o.strip() != n.strip())
    return [(o, n) for o, n in out if o]


def file_edit_drafts(conn: sqlite3.Connection, project: str, edits: Iterable[FileEdit]) -> list[Draft]:
    out: list[Draft] = []
    for edit in edits:
        for row in conn.execute(_FROM_FILE, (project, f"(`{edit.path}`)")).fetchall():
            value, text = str(row["value"]), str(row["text"])
            for old, new in _pairs(edit.old, edit.new):
                if old in value:
                    value = value.replace(old, new)
                    text = text.replace(old, new)
            if value != row["value"] and text != row["text"]:
                out.append(Draft(str(row["kind"]), text, [edit.item_id], str(row["subject"]), value,
                                 confirmed=1, at=edit.at))
        for old, new in _pairs(edit.old, edit.new):
            # a whole command line the edit changed (not a word of one): it no longer runs
            if "\n" in old or "\n" in new or " " not in old or " " not in new or len(old) < 12 \
                    or old in edit.new:
                continue
            for row in conn.execute(_QUOTING, (project, old)).fetchall():
                value, text = str(row["value"]), str(row["text"])
                if old in text and f"(`{edit.path}`)" not in text:  # (that one is done above)
                    out.append(Draft(str(row["kind"]), text.replace(old, new), [edit.item_id], str(row["subject"]),
                                     value.replace(old, new), confirmed=1, at=edit.at))
    return out


# The newest fact of a line's slot (``set:<line>``), whatever its status.
_LINE_SLOT = """
SELECT kind FROM fact WHERE project = ? AND subject = ? ORDER BY observed_at DESC, rowid DESC LIMIT 1
"""


def number_drafts(conn: sqlite3.Connection, project: str, edits: Iterable[NumberEdit]) -> list[Draft]:
    """The line each edit left, for the lines a statement of an earlier session was about: "30
    days is too long — she wants two weeks" and `$graceDays = 30` → `14` in that session, then
    `$graceDays = 14` → `21` alone: `$graceDays = 21` is current, the statement is history."""
    last: dict[str, NumberEdit] = {}
    for edit in edits:
        last[edit.key] = edit
    out: list[Draft] = []
    for key, edit in last.items():
        row = conn.execute(_LINE_SLOT, (project, f"set:{key}")).fetchone()
        if row is not None:
            out.append(Draft(str(row["kind"]), f"`{edit.line}` (`{edit.path}`).", [edit.item_id], f"set:{key}",
                             " ".join(edit.new), confirmed=1, at=edit.at))
    return out


def removal_drafts(removals: Iterable[FileRemoval]) -> list[Draft]:
    out: list[Draft] = []
    for r in removals:
        if r.new:
            text, value = f"`{r.path}` was renamed to `{r.new}`.", f"(moved to {r.new})"
        else:
            text, value = f"`{r.path}` was deleted.", "(deleted)"
        out.append(Draft("file_role", text, [r.item_id], f"file:{r.path}", value, at=r.at, ends=True,
                         removes_file=r.path, moved_to=r.new))
    return out


def tool_now_drafts(text: str, item_id: str, *, stated: bool, at: int) -> list[Draft]:
    """A record for each purpose a prompt or an answer says another tool now serves ("we switched
    the unit tests over to Vitest", "swap it for valibot": ``claims.tool_claims``), kept as
    history (never current itself): the fact store retires what the project used before for that
    purpose (``facts._tools_replaced``)."""
    from aletheia.claims import tool_claims

    return [Draft("decision", f"`{tool}` is now the project's {purpose.replace('-', ' ')}.", [item_id],
                  f"now:{purpose}", tool, stated=stated, at=at, ends=True)
            for purpose, (tool, now) in tool_claims(text).items() if now]

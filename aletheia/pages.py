"""Keyset pagination shared by every list (REST, CLI, dashboard): a cursor and a page.

A cursor is the sort key of the last row returned (``1796157447283.01M8SN…`` for time + id,
``42`` for a job id), so a page never skips or repeats a row when new ones arrive meanwhile
(offsets would), and every string of that shape is a valid position (``CURSOR_PATTERN``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from aletheia.errors import InvalidInput

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
# What a cursor looks like, for an API schema: a time "." an id, or a number.  Every string of
# that shape is a valid position.
TIME_ID_CURSOR = r"^-?[0-9]{1,18}\.[^\n]{1,300}$"
NUMBER_CURSOR = r"^-?[0-9]{1,18}$"
_TIME_ID = re.compile(r"(-?[0-9]{1,18})\.([^\n]{1,300})")
_NUMBER = re.compile(r"-?[0-9]{1,18}")


@dataclass
class Page:
    items: list[dict[str, Any]] = field(default_factory=list)
    next_cursor: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "next_cursor": self.next_cursor}


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
    return limit


def encode(*key: Any) -> str:
    return ".".join(str(k) for k in key)


def decode(cursor: str | None, types: tuple[type, ...]) -> tuple[Any, ...] | None:
    """The sort key inside ``cursor``: ``(int, str)`` or ``(int,)``; None for the first page."""
    if cursor is None or cursor == "":
        return None
    if types == (int, str):
        m = _TIME_ID.fullmatch(cursor)
        if m:
            return int(m.group(1)), m.group(2)
    elif types == (int,) and _NUMBER.fullmatch(cursor):
        return (int(cursor),)
    raise InvalidInput("not a valid cursor (pass next_cursor from the previous page)")


def page(rows: list[dict[str, Any]], limit: int, *key_names: str) -> Page:
    """``rows`` were fetched with ``limit + 1``: the extra row only says that more exist."""
    if len(rows) <= limit:
        return Page(rows, None)
    items = rows[:limit]
    last = items[-1]
    return Page(items, encode(*(last[k] for k in key_names)))

"""Bounds on what enters the store: identity fields, numbers and times, checked at every edge.

Stdlib only (the hook imports it).  A value out of range is refused with ``InvalidInput`` (a
400, a CLI line, an MCP tool error): we refuse rather than clamp, because a clamped time or
weight would be stored as if the user had said it.  Text identity fields (project, session,
tool, kind, source, event key) are *cut*, not refused, and cut before anything else touches
them, so a 2 MB ``session_id`` costs what a 200-character one does.
"""

from __future__ import annotations

import math
import time

from aletheia.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Identity fields (characters).  The REST schemas use the same numbers.
SESSION_ID_CAP = 200
PROJECT_CAP = 1000
EVENT_KEY_CAP = 500
NAME_CAP = 100  # tool, kind, source
PATH_CAP = 4096  # a cwd longer than PATH_MAX is not a directory

# Times are epoch milliseconds.  Ids keep 48 bits of milliseconds (ulid), so a time past 2^48
# would wrap its id; a time far in the future would sit at the top of "recent" for good.
MAX_TIME_MS = (1 << 48) - 1
FUTURE_SLACK_MS = 24 * 3600 * 1000  # clocks of two machines (a bundle) may disagree this much
# SQLite integers are signed 64-bit; any integer we store or compare with fits well inside.
MAX_INT = (1 << 53) - 1


def cut(value: str, cap: int) -> str:
    """``value`` cut to ``cap`` characters (an ellipsis marks the cut)."""
    return value if len(value) <= cap else value[: cap - 1] + "…"


def timestamp_ms(value: Any, name: str, *, now: int | None = None) -> int:
    """An epoch-ms time from an interface: an integer in 0 … 2^48 and at most a day ahead of
    ``now``.  Refused otherwise (``InvalidInput`` naming the field)."""
    value = time_in_window(value, name)
    stamp = int(time.time() * 1000) if now is None else now
    if value > stamp + FUTURE_SLACK_MS:
        raise InvalidInput(f"{name} is more than a day in the future")
    return int(value)


def time_in_window(value: Any, name: str) -> int:
    """An epoch-ms time in 0 … 2^48 (the window ids can hold), future or not: what the store's
    write API enforces for every caller.  The future check (``timestamp_ms``) is for data that
    arrives from elsewhere: imports, bundles, ``capture --jsonl``, the spool."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        else:
            raise InvalidInput(f"{name} must be an integer number of epoch milliseconds")
    if value < 0 or value > MAX_TIME_MS:
        raise InvalidInput(f"{name} must be between 0 and {MAX_TIME_MS} epoch milliseconds")
    return int(value)


def time_filter_ms(value: Any, name: str) -> int:
    """A time used to filter (``since``/``until``/``at``): the 0 … 2^48 window, no future check
    (asking for "until next year" is a fine question)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer number of epoch milliseconds")
    if value < 0 or value > MAX_TIME_MS:
        raise InvalidInput(f"{name} must be between 0 and {MAX_TIME_MS} epoch milliseconds")
    return value


def finite(value: Any, name: str, lo: float, hi: float) -> float:
    """A float (or int) that is finite and within ``lo … hi``: never inf or NaN in the store."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"{name} must be a number")
    number = float(value) if not isinstance(value, float) else value
    if isinstance(value, int) and abs(value) > MAX_INT:
        raise InvalidInput(f"{name} must be between {lo:g} and {hi:g}")
    if not math.isfinite(number):
        raise InvalidInput(f"{name} must be a finite number")
    if not lo <= number <= hi:
        raise InvalidInput(f"{name} must be between {lo:g} and {hi:g}")
    return number


def integer(value: Any, name: str, lo: int, hi: int) -> int:
    """An int within ``lo … hi`` (bools refused; a float only if it is a whole number)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer")
    if not lo <= value <= hi:
        raise InvalidInput(f"{name} must be between {lo} and {hi}")
    return value

"""Stored settings (the ``setting`` table): each key is read by the code it claims to control.

The keys, their types, defaults and meaning are ``config.SETTINGS`` (one table with the
environment variables).  Stdlib only (the hook reads ``excluded_projects``).  Values are JSON;
unknown keys are refused.
"""

from __future__ import annotations

import json
import sqlite3

from aletheia import config, ids
from aletheia.errors import InvalidInput

TYPE_CHECKING = False  # the hook imports this module: importing typing costs it ~2 ms
if TYPE_CHECKING:
    from typing import Any


SETTINGS = config.SETTINGS


def get(conn: sqlite3.Connection, key: str) -> Any:
    spec = _spec(key)
    row = conn.execute("SELECT value FROM setting WHERE key = ?", (key,)).fetchone()
    if row is None:
        return spec.default
    try:
        return json.loads(row[0])
    except ValueError:
        return spec.default


def stored(conn: sqlite3.Connection) -> dict[str, Any]:
    """The settings a user has set (the others have their default)."""
    out: dict[str, Any] = {}
    for key, value in conn.execute("SELECT key, value FROM setting"):
        if key in SETTINGS:
            try:
                out[key] = json.loads(value)
            except ValueError:
                continue
    return out


def all_settings(conn: sqlite3.Connection) -> dict[str, Any]:
    stored = {r[0]: r[1] for r in conn.execute("SELECT key, value FROM setting")}
    out: dict[str, Any] = {}
    for key, spec in SETTINGS.items():
        try:
            out[key] = json.loads(stored[key]) if key in stored else spec.default
        except ValueError:
            out[key] = spec.default
    return out


def validate(key: str, value: Any) -> Any:
    spec = _spec(key)
    if spec.kind is bool:
        if not isinstance(value, bool):
            raise InvalidInput(f"{key} must be true or false")
    elif spec.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{key} must be an integer")
        if spec.minimum is not None and value < spec.minimum:
            raise InvalidInput(f"{key} must be at least {spec.minimum}")
        if spec.maximum is not None and value > spec.maximum:
            raise InvalidInput(f"{key} must be at most {spec.maximum}")
    elif spec.kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidInput(f"{key} must be a list of strings")
    elif spec.kind is str and not isinstance(value, str):
        raise InvalidInput(f"{key} must be a string")
    return value


def put(conn: sqlite3.Connection, key: str, value: Any) -> Any:
    value = validate(key, value)
    # Settings are stored text too (a provider URL can carry a key): redact like everything else.
    from aletheia.redact import redact

    if isinstance(value, str):
        value = redact(value)
    elif isinstance(value, list):
        value = [redact(v) for v in value]
    conn.execute(
        "INSERT INTO setting(key, value, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (key, json.dumps(value), ids.now_ms()),
    )
    return value


def _spec(key: str) -> config.Setting:
    try:
        return SETTINGS[key]
    except KeyError:
        raise InvalidInput(f"unknown setting: {key}") from None

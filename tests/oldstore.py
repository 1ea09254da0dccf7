"""A hub.db as an older version left it: the migrations before ``version`` and no more."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia import db
from aletheia.schema import MIGRATIONS


def make_store_at(path: Path, version: int) -> sqlite3.Connection:
    """Create ``path`` at schema ``version``; returns a raw connection (no upgrade run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")  # as every store aletheia made
    # What the upgrades call, as ``db`` registers it for them (schema 7 fills the idents column).
    raw.create_function("aletheia_idents", 5, db._idents, deterministic=True)
    for number in sorted(n for n in MIGRATIONS if n <= version):
        for statement in db._split(MIGRATIONS[number]):
            raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {version}")
    return raw

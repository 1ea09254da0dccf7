"""Tombstones: what an erase leaves behind so the erased cannot come back, holding no text.

Erase deletes a memory for good, but the same content can arrive again: a transcript import
or ``aletheia watch`` re-reads the host's own log, a spooled item is replayed, a bundle made
before the erase is imported.  So erase records hashes, never text:

- ``content``: the memory's content hash (the store's dedupe key), for any exact re-capture;
- ``text``: a hash of its project and normalised title and narrative, for the same words
  arriving by another path (another source, session or event key);
- ``session``: a hash of an erased session's id: nothing of that session is captured again;
- ``fact``: an erased fact's content hash (facts are keyed by their normalised text).

``shingle`` rows keep 64-bit hashes of every 8-word window of the erased text, per receipt:
erase uses them to find derived copies (summaries, facts) that quote what it erased, and
``receipts verify`` uses them to check that no copy came back.

Stdlib only, and cheap: the store's write API (so the hook) checks every new memory here.
"""

from __future__ import annotations

import re
import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from hashlib import sha256 as sha256  # (re-exported: aletheia.stated takes it from here)
    from typing import Any
else:
    # CPython's built-in hashes (hashlib would load OpenSSL first, ~2.5 ms of a hook run).
    try:
        from _sha256 import sha256  # 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # 3.12+
        except ImportError:
            from hashlib import sha256

SHINGLE_WORDS = 8
# Texts whose normalised words are fewer than this are too generic to block by text alone
# ("ls", "5 passed"): only their exact content hash is buried.
_TEXT_MIN_CHARS = 24
_WORD = re.compile(r"\w+", re.UNICODE)

_BLOCKED = "SELECT 1 FROM tombstone WHERE hash IN ({marks}) LIMIT 1"
_BURY = "INSERT OR IGNORE INTO tombstone(hash, kind, receipt_id, created_at) VALUES (?, ?, ?, ?)"
_SHINGLE = "INSERT OR IGNORE INTO erased_shingle(receipt_id, hash) VALUES (?, ?)"


def _digest(kind: str, *parts: str) -> str:
    blob = "\x1f".join((kind, *parts)).encode("utf-8", "surrogatepass")
    return sha256(blob).hexdigest()


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def text_hash(project: str, title: str, narrative: str) -> str | None:
    """The ``text`` tombstone of a memory, or None when its text is too short to be telling."""
    normal = " ".join(words(f"{title}\n{narrative}"))
    if len(normal) < _TEXT_MIN_CHARS:
        return None
    return _digest("text", project, normal)


def session_hash(session_id: str) -> str:
    return _digest("session", session_id)


def fact_key(project: str, content_hash: str) -> str:
    return _digest("fact", project, content_hash)


def memory_keys(row: Any) -> list[str]:
    """Every tombstone a memory row (a prepared row or a stored one) would match."""
    keys = [row["content_hash"]]
    text = text_hash(row["project"], row["title"] or "", row["narrative"] or "")
    if text is not None:
        keys.append(text)
    if row["session_id"]:
        keys.append(session_hash(row["session_id"]))
    return keys


def blocked(conn: sqlite3.Connection, keys: list[str]) -> bool:
    return conn.execute(_BLOCKED.format(marks=",".join("?" * len(keys))), keys).fetchone() is not None


def bury(conn: sqlite3.Connection, entries: Iterable[tuple[str, str]], receipt_id: str,
         now: int) -> int:
    """Record ``(hash, kind)`` tombstones; returns how many were new."""
    added = 0
    for digest, kind in entries:
        added += conn.execute(_BURY, (digest, kind, receipt_id, now)).rowcount
    return added


def shingles(text: str) -> Iterator[int]:
    """Signed 64-bit hashes of every 8-word window (the whole text when it is shorter)."""
    ws = words(text)
    if not ws:
        return
    if len(ws) < SHINGLE_WORDS:
        windows: Iterable[list[str]] = [ws]
    else:
        windows = (ws[i:i + SHINGLE_WORDS] for i in range(len(ws) - SHINGLE_WORDS + 1))
    try:  # only erase and verify come here: the hook's write path never loads it
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    for window in windows:
        value = int.from_bytes(blake2b(" ".join(window).encode("utf-8", "surrogatepass"),
                                       digest_size=8).digest(), "big", signed=True)
        yield value


def copies(text: str, stored: set[int]) -> bool:
    """Whether ``text`` holds an 8-word window whose hash is in ``stored``."""
    return bool(stored) and bool(long_shingles(text) & stored)


def long_shingles(text: str) -> set[int]:
    """Only the full 8-word windows: a shorter text is too generic to call a copy."""
    return set(shingles(text)) if len(words(text)) >= SHINGLE_WORDS else set()


def keep_shingles(conn: sqlite3.Connection, receipt_id: str, values: Iterable[int]) -> int:
    n = 0
    for value in values:
        n += conn.execute(_SHINGLE, (receipt_id, value)).rowcount
    return n


def receipt_shingles(conn: sqlite3.Connection, receipt_id: str) -> set[int]:
    return {r[0] for r in conn.execute("SELECT hash FROM erased_shingle WHERE receipt_id = ?",
                                       (receipt_id,))}

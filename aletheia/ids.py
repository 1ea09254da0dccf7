"""Sortable unique ids (UUIDv7-shaped, 26-char Crockford base32 like ULID) and clock helpers."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id(ms: int | None = None, rand: bytes | None = None) -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, so ids sort by creation time."""
    ms = now_ms() if ms is None else ms
    rand = os.urandom(10) if rand is None else rand
    value = (ms & ((1 << 48) - 1)) << 80 | int.from_bytes(rand[:10], "big")
    out = []
    for _ in range(26):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def iso(ms: int | None) -> str:
    """Render epoch milliseconds as an ISO-8601 UTC string (second precision)."""
    if ms is None:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))

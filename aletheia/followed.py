"""A value followed into a later edit: the best answers to a query state a value ("the default
analysis window is 4096 samples", "the 2024.06 Compose BOM") and a later edit's diff replaces
that value at a key the answer names next to it (`windowSize = 4096` → `8192`, `composeBom =
"2024.06.00"` → `"2024.10.01"`).  Then the edit is the newer answer, though it holds none of the
query's words: a diff names the key, not what the user calls it.  Text only (search does the
reading): which values a text states, and what an edit's diff replaces at which key."""

from __future__ import annotations

import re

from aletheia.changes import edit_input, edit_pairs, projects_own

# A value worth following: a dotted version (2.0.21, 2024.06) or a number of three or more
# digits (4096, 8080).  Smaller numbers ("2 tests", "50 %") are everywhere, in every diff.
_VALUE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+|\d{3,})(?![\w]|\.\d)")
# `key = value` / `key: value` at the end of a line, after whatever declares it (a type, `val`,
# `const`): the key is the last word before the sign.
_AT_KEY = re.compile(r"""(?P<key>[A-Za-z_][\w-]*)["']?\s*(?:=|:)\s*["']?(?P<value>[\w.+-]{1,40})["']?\s*[,;]?\s*"""
                     r"""(?:#.*|//.*)?$""")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_BOUNDARY = re.compile(r"[.!?;]\s|\n")
NEAR = 40  # characters around a stated value in which the answer must name the key


def stated_values(text: str) -> list[str]:
    """The values worth following that ``text`` states, once each, in order."""
    return list(dict.fromkeys(m.group(1) for m in _VALUE.finditer(text)))


def key_words(key: str) -> set[str]:
    """The words of a key: `windowSize` → window, size; `compose-bom` → compose, bom."""
    return {p.lower() for p in _PART.findall(key) if len(p) >= 3 and not p.isdigit()}


def replaced_at_keys(narrative: str) -> list[tuple[str, str, str]]:
    """(key, old value, new value) for each value an edit's diff replaces at the same key, from
    its tool event's text (``input: {…}`` as the hook stores it).  Not in tests or lockfiles."""
    data = edit_input(narrative)
    if data is None:
        return []
    path = data.get("file_path") or data.get("path") or ""
    if not isinstance(path, str) or not projects_own(path):
        return []
    out: list[tuple[str, str, str]] = []
    for old, new in edit_pairs(data):
        after: dict[str, str] = {}
        for line in new.splitlines():
            m = _AT_KEY.search(line)
            if m:
                after.setdefault(m.group("key"), m.group("value"))
        for line in old.splitlines():
            m = _AT_KEY.search(line)
            if m and after.get(m.group("key"), m.group("value")) != m.group("value"):
                out.append((m.group("key"), m.group("value"), after[m.group("key")]))
    return out


def same_value(stated: str, old: str) -> bool:
    """Is ``old`` (a diff's value) the value ``stated`` names: the same, or a version the
    statement gives shorter ("2024.06" for 2024.06.00)?"""
    return old == stated or old.startswith(stated + ".")


def _near(text: str, value: str) -> list[str]:
    """The stretches of ``text`` (lower-cased) around each place it states ``value``, within its
    sentence (a title and its text are joined: the next one is about something else)."""
    low = text.lower()
    out = []
    for m in re.finditer(r"(?<![\w.])" + re.escape(value) + r"(?![\w])", low):
        start = max([m.start() - NEAR, *(b.end() for b in _BOUNDARY.finditer(low, 0, m.start()))])
        after = _BOUNDARY.search(low, m.end())
        out.append(low[max(0, start):min(m.end() + NEAR, after.start() if after else len(low))])
    return out


def asked_near(text: str, value: str, asked: set[str]) -> int:
    """How many words of the query ``text`` says beside ``value`` ("the default analysis window
    is 4096 samples" for "How many samples long is a default analysis frame?": three).  An answer
    states many values; only the one the query is about makes a later edit of it the newer
    answer (the port in "created: Next.js 14.2, TypeScript strict, serves on localhost:3000" is
    not what "How strict is the TypeScript config?" asks)."""
    near = " ".join(_near(text, value))
    return sum(1 for w in asked if len(w) >= 3 and re.search(r"\b" + re.escape(w[:5]), near))


def about(text: str, value: str, key: str, asked: set[str]) -> bool:
    """Is the query about the value an edit replaced at ``key``: the query names the key (`composeBom`
    for "Which Compose bill of materials…"), or two of its words are beside the value where the
    answer states it (one may be any word: "run" beside `npm run dev` on localhost:3000 is not a
    question about the port)?  And the answer names the key there (``names_key``)."""
    return names_key(text, value, key, set()) and (
        bool(key_words(key) & asked) or asked_near(text, value, asked) >= 2)


def names_key(text: str, value: str, key: str, asked: set[str]) -> bool:
    """Does ``text`` name ``key`` near where it states ``value`` ("the 2024.06 Compose BOM" for
    `composeBom`), or does the query name it?  A value alone is not enough: 4096 is many things."""
    parts = key_words(key)
    if not parts:
        return False
    if parts & asked:
        return True
    return any(re.search(r"\b" + re.escape(p), near) for near in _near(text, value) for p in parts)

"""The apply_patch format, how Codex edits files: ``*** Begin Patch``, then per file
``*** Update File: P`` (maybe followed by ``*** Move to: Q``), ``*** Add File: P`` or
``*** Delete File: P``, then ``*** End Patch``.  One reading of its headers for the hook (what
an edit touches, per-file recall) and the extractor (files, removals).  Stdlib only: the hook
imports it."""

from __future__ import annotations

import re

# Compiled on first use (``re``'s cache): most hook events hold no patch.
_HEADER = r"^\*\*\* (Update File|Add File|Delete File|Move to): (.+)$"
_KINDS = {"Update File": "update", "Add File": "add", "Delete File": "delete", "Move to": "move"}


def is_patch(command: str) -> bool:
    """A shell command that runs apply_patch on a patch it holds (a here document)."""
    return command.lstrip().startswith("apply_patch") and "*** Begin Patch" in command


def headers(text: str) -> list[tuple[str, str]]:
    """(update | add | delete | move, path) for each header, in order (the first 64 KiB)."""
    if "*** " not in text:
        return []
    found = []
    for m in re.finditer(_HEADER, text[:65536], re.M):
        path = m.group(2).strip()
        if path:
            found.append((_KINDS[m.group(1)], path))
    return found


def files(text: str) -> list[str]:
    """The files a patch updates, adds or deletes (not where a move takes one), once each."""
    out: list[str] = []
    for kind, path in headers(text):
        if kind != "move" and path not in out:
            out.append(path)
    return out


def removals(text: str) -> list[tuple[str, str | None]]:
    """(old, new or None): ``Delete File: a`` → (a, None); ``Update File: a`` then
    ``Move to: b`` → (a, b)."""
    out: list[tuple[str, str | None]] = []
    updating: str | None = None
    for kind, path in headers(text):
        if kind == "delete":
            out.append((path, None))
        elif kind == "move" and updating and path != updating:
            out.append((updating, path))
        updating = path if kind == "update" else None
    return out

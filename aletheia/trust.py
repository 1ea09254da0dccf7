"""Trusted ``.aletheia-project`` files.

A ``.aletheia-project`` file names the project a directory's memories go to, and so whose pinned
notes, facts and context its sessions read.  A cloned repository could ship one that names
another of the user's projects; so a file takes effect only once the user has trusted it, in the
manner of direnv's ``allow``: trust is given to one file's real path *and* the name it holds
now, so editing the file (or a checkout that changes it) revokes it until trusted again.

Stdlib only: the hook reads this (lazily, and only when it meets such a file).
"""

from __future__ import annotations

import contextlib
import json
import os

from aletheia import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TRUST_NAME = "trusted-projects.json"
# One short line per entry; a store this size is far beyond any real use and keeps a hook's
# read bounded.
_READ_LIMIT = 1024 * 1024


def trust_file(home: str | None = None) -> str:
    return os.path.join(paths.home_dir() if home is None else home, TRUST_NAME)


def load(home: str | None = None) -> dict[str, str]:
    """``{real path of a .aletheia-project file: the project name it was trusted with}``.

    A missing, unreadable or damaged trust file trusts nothing (never raises).
    """
    try:
        with open(trust_file(home), "rb") as handle:
            doc = json.loads(handle.read(_READ_LIMIT))
    except (OSError, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def is_trusted(path: str, name: str, entries: Mapping[str, str]) -> bool:
    return entries.get(path) == name


def _save(entries: dict[str, str], home: str | None) -> None:
    target = trust_file(home)
    paths.ensure_dir(os.path.dirname(target))
    tmp = f"{target}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "files": dict(sorted(entries.items()))}, handle, indent=1)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def grant(path: str, name: str, home: str | None = None) -> None:
    entries = load(home)
    entries[path] = name
    _save(entries, home)


def revoke(path: str, home: str | None = None) -> bool:
    entries = load(home)
    if entries.pop(path, None) is None:
        return False
    _save(entries, home)
    return True


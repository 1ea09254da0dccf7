"""The spool's quarantine: lines a replay could not write, kept byte for byte with the reason.

``spool/quarantine.jsonl`` (0600), one record per line: ``id`` (the first 12 hex digits of
the line's SHA-256, so the same line is kept once however often it is replayed), ``at``,
``reason``, ``source``, ``tries`` and the line itself (``line`` when it is UTF-8 text,
``line_b64`` otherwise).  ``aletheia spool list|retry|drop`` works on it; ``doctor`` counts it.
Stdlib only: a hook's replay may quarantine a line.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import time

from aletheia import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

QUARANTINE_NAME = "quarantine.jsonl"
_LOCK_NAME = ".quarantine.lock"


class Entry:
    """One quarantined line."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.id: str = str(record.get("id", ""))
        self.at: int = int(record.get("at") or 0)
        self.reason: str = str(record.get("reason", ""))
        self.source: str = str(record.get("source", ""))
        self.tries: int = int(record.get("tries") or 1)
        if isinstance(record.get("line"), str):
            self.line = record["line"].encode("utf-8", "surrogatepass")
        else:
            self.line = base64.b64decode(str(record.get("line_b64", "")))

    def to_dict(self, *, with_line: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "at": self.at, "reason": self.reason,
                               "source": self.source, "tries": self.tries,
                               "bytes": len(self.line)}
        if with_line:
            out["line"] = self.line.decode("utf-8", "replace")
        return out


def path_in(folder: str) -> str:
    return os.path.join(folder, QUARANTINE_NAME)


def _default_folder() -> str:
    return os.path.dirname(paths.spool_file_name())


def line_id(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()[:12]


@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
    paths.ensure_dir(folder)
    fd = os.open(os.path.join(folder, _LOCK_NAME), os.O_RDWR | os.O_CREAT, paths.FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _record(line: bytes, reason: str, source: str, tries: int, at: int) -> dict[str, Any]:
    record: dict[str, Any] = {"id": line_id(line), "at": at, "reason": reason[:1000],
                              "source": source, "tries": tries}
    try:
        record["line"] = line.decode("utf-8")
    except UnicodeDecodeError:
        record["line_b64"] = base64.b64encode(line).decode("ascii")
    return record


def _read(folder: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with open(path_in(folder), "rb") as fh:
            for raw in fh:
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # a record cut by a crash: its line is still in its claim file
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    out.append(record)
    except FileNotFoundError:
        pass
    return out


def add(folder: str, lines: Iterable[tuple[bytes, str]], *, source: str,
        tries: dict[str, int] | None = None, now: int | None = None) -> int:
    """Quarantine ``(line, reason)`` pairs; a line already there gets the new reason and one
    more try instead of a second record.  Raises ``OSError`` when it cannot write (the caller
    keeps the lines where they were)."""
    stamp = int(time.time() * 1000) if now is None else now
    with _locked(folder):
        records = _read(folder)
        by_id = {r["id"]: r for r in records}
        fresh: list[dict[str, Any]] = []
        changed = False
        for line, reason in lines:
            key = line_id(line)
            if key in by_id:
                by_id[key].update(reason=reason[:1000], at=stamp,
                                  tries=int(by_id[key].get("tries") or 1) + 1)
                changed = True
                continue
            record = _record(line, reason, source, (tries or {}).get(key, 1), stamp)
            by_id[key] = record
            fresh.append(record)
        if changed:
            _rewrite(folder, list(by_id.values()))
        elif fresh:
            _append(folder, fresh)
        return len(fresh)


def _encode(records: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass") + b"\n" for r in records)


def _append(folder: str, records: list[dict[str, Any]]) -> None:
    target = path_in(folder)
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
    try:
        start = os.fstat(fd).st_size
        data = _encode(records)
        try:
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def _rewrite(folder: str, records: list[dict[str, Any]]) -> None:
    target = path_in(folder)
    tmp = f"{target}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        try:
            data = _encode(records)
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def entries(folder: str | None = None) -> list[Entry]:
    """Every quarantined line, oldest first."""
    folder = _default_folder() if folder is None else folder
    return sorted((Entry(r) for r in _read(folder)), key=lambda e: (e.at, e.id))


def count(folder: str | None = None) -> int:
    return len(_read(_default_folder() if folder is None else folder))


def take(ids: Iterable[str] | None, folder: str | None = None) -> list[Entry]:
    """Remove the entries with these ids (or every entry when ``ids`` is None) and return
    them.  An id may be a unique prefix; an unknown one is an error before anything changes."""
    from aletheia.errors import InvalidInput, NotFound

    folder = _default_folder() if folder is None else folder
    with _locked(folder):
        records = _read(folder)
        if ids is None:
            chosen = {r["id"] for r in records}
        else:
            chosen = set()
            for wanted in ids:
                matches = [r["id"] for r in records if r["id"].startswith(wanted.strip().lower())]
                if not wanted.strip() or not matches:
                    raise NotFound(f"no quarantined line with id {wanted!r}")
                if len(matches) > 1:
                    raise InvalidInput(f"id {wanted!r} matches {len(matches)} lines: give more of it")
                chosen.add(matches[0])
        if not chosen:
            return []
        _rewrite(folder, [r for r in records if r["id"] not in chosen])
    return [Entry(r) for r in records if r["id"] in chosen]


def put_back(entries_: Iterable[Entry], folder: str | None = None) -> None:
    """Return entries taken by ``take`` (a retry that could not reach the spool)."""
    folder = _default_folder() if folder is None else folder
    with _locked(folder):
        records = _read(folder)
        known = {r["id"] for r in records}
        again = [_record(e.line, e.reason, e.source, e.tries, e.at) for e in entries_
                 if e.id not in known]
        if again:
            _append(folder, again)

"""The hook spool: already-redacted items a hook could not write, replayed by the next writer.

Appends and claims take an ``flock`` on the spool file so a replay never deletes a line that
an appender is writing: the replayer renames the file away while holding the lock, and an
appender that locked an inode which has since been renamed reopens the path.
Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from aletheia import paths

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

_CLAIM_PREFIX = "hook-spool.claim-"
_FALLBACK_PREFIX = "hook-spool.pid-"
# A claim file older than this whose owner is gone is taken over (its replayer died).
_STALE_CLAIM_S = 30.0


class ReplayResult:
    """Counts from one replay (a plain class: the hook imports this module)."""

    def __init__(self) -> None:
        self.items = 0
        self.inserted = 0
        self.stops = 0
        self.bad_lines = 0

    def __repr__(self) -> str:
        return f"ReplayResult({self.__dict__})"


def _spool_path(spool: Path | None) -> Path:
    return spool if spool is not None else paths.spool_file()


def append(item: dict[str, Any], spool: Path | None = None, *, lock_wait_s: float | None = None) -> Path:
    """Append one JSON line.  ``lock_wait_s`` bounds the wait for the lock (the watchdog uses
    it); past it the item goes to a per-process file that replay also reads, never nowhere."""
    path = _spool_path(spool)
    paths.ensure_dir(path.parent)
    line = (json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "surrogatepass"
    )
    deadline = None if lock_wait_s is None else time.monotonic() + lock_wait_s
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
        try:
            if not _lock(fd, deadline):
                break
            try:
                if os.fstat(fd).st_ino != os.stat(path).st_ino:
                    continue  # renamed away by a replayer after we opened it: reopen
            except FileNotFoundError:
                continue
            os.write(fd, line)
            return path
        finally:
            os.close(fd)
    # Written under a name replay ignores, then renamed: a replayer never claims a half-made file.
    name = f"{os.getpid()}-{time.time_ns()}.jsonl"
    partial = path.parent / f".partial-{name}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    fallback = path.parent / f"{_FALLBACK_PREFIX}{name}"
    os.rename(partial, fallback)
    return fallback


def _lock(fd: int, deadline: float | None) -> bool:
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)


def pending_size(spool: Path | None = None) -> int:
    """Bytes waiting in the spool and in any claimed or fallback files."""
    path = _spool_path(spool)
    total = 0
    for p in _all_files(path):
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


def _all_files(path: Path) -> list[Path]:
    if not path.parent.exists():
        return []
    out = [path] if path.exists() else []
    for p in path.parent.iterdir():
        if p.name.startswith((_CLAIM_PREFIX, _FALLBACK_PREFIX)):
            out.append(p)
    return out


def _claim(path: Path) -> list[Path]:
    """Move the spool (and orphaned claims / fallback files) aside for this replayer."""
    claimed: list[Path] = []
    if path.exists():
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                target = path.parent / f"{_CLAIM_PREFIX}{os.getpid()}-{time.time_ns()}.jsonl"
                try:
                    if os.fstat(fd).st_ino == os.stat(path).st_ino:
                        os.rename(path, target)
                        claimed.append(target)
                except FileNotFoundError:
                    pass
            finally:
                os.close(fd)
    now = time.time()
    for p in path.parent.iterdir() if path.parent.exists() else []:
        if p in claimed:
            continue
        if p.name.startswith(_FALLBACK_PREFIX) or (
            p.name.startswith(_CLAIM_PREFIX) and _orphaned(p, now)
        ):
            target = path.parent / f"{_CLAIM_PREFIX}{os.getpid()}-{time.time_ns()}.jsonl"
            try:
                os.rename(p, target)
                claimed.append(target)
            except FileNotFoundError:
                continue
    return claimed


def _orphaned(p: Path, now: float) -> bool:
    try:
        pid = int(p.name[len(_CLAIM_PREFIX):].split("-", 1)[0])
    except ValueError:
        return True
    if pid != os.getpid() and not _alive(pid):
        return True
    try:
        return now - p.stat().st_mtime > _STALE_CLAIM_S
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_items(p: Path) -> Iterator[dict[str, Any] | None]:
    with open(p, "rb") as fh:
        for raw in fh:
            try:
                item = json.loads(raw.decode("utf-8", "surrogatepass"))
            except ValueError:
                yield None
                continue
            yield item if isinstance(item, dict) else None


def replay(conn: sqlite3.Connection, spool: Path | None = None) -> ReplayResult:
    """Write every spooled item through the store's write API (which re-redacts and dedupes).

    A claimed file is deleted only after its items are committed; if the database is still
    locked the claim is handed back to the spool so nothing is dropped.
    """
    from aletheia import (
        settings,
        store,  # late: keeps ``append`` importable without the store
    )
    from aletheia.project import excluded_patterns, is_excluded

    path = _spool_path(spool)
    result = ReplayResult()
    # A hook that could not read the stored exclusion setting spooled anyway: decide here.
    patterns = excluded_patterns(extra=settings.get(conn, "excluded_projects"))
    for claimed in _claim(path):
        rows: list[dict[str, Any]] = []
        stops: list[dict[str, Any]] = []
        for item in _read_items(claimed):
            if item is None:
                result.bad_lines += 1
                continue
            result.items += 1
            project = item.get("project") or (item.get("row") or {}).get("project")
            if isinstance(project, str) and is_excluded(project, patterns):
                continue
            if item.get("type") == "stop":
                stops.append(item)
            elif item.get("type") == "memory" and isinstance(item.get("row"), dict):
                try:
                    rows.append(store.prepare(store.memory_in_from_row(item["row"])))
                except Exception:
                    result.bad_lines += 1
            else:
                result.bad_lines += 1
        try:
            written = store.insert_rows(conn, rows) if rows else []
            for stop in stops:
                store.queue_stop(
                    conn, str(stop["session_id"]), str(stop["project"]), stop.get("tool"),
                    now=int(stop.get("at") or 0) or None,
                )
        except sqlite3.Error:
            _give_back(claimed, path)
            raise
        result.inserted += sum(1 for w in written if w.inserted)
        result.stops += len(stops)
        with contextlib.suppress(FileNotFoundError):
            claimed.unlink()
    return result


def _give_back(claimed: Path, path: Path) -> None:
    """Append a claimed file's lines back to the live spool (replay failed)."""
    with contextlib.suppress(FileNotFoundError):
        for item in _read_items(claimed):
            if item is not None:
                append(item, path)
        claimed.unlink()

"""The hook spool: already-redacted items a hook could not write, replayed by the next writer.

Appends and claims take an ``flock`` on the spool file so a replay never deletes a line that
an appender is writing: the replayer renames the file away while holding the lock, and an
appender that locked an inode which has since been renamed reopens the path.
Stdlib only, and plain string paths (no pathlib on the hook path).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import time

from aletheia import paths

TYPE_CHECKING = False  # the hook path: typing (~2 ms) and pathlib (~3.5 ms) stay out of it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    PathLike = str | os.PathLike[str]

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


def _spool_path(spool: PathLike | None) -> str:
    return os.fspath(spool) if spool is not None else paths.spool_file_name()


def append(item: dict[str, Any], spool: PathLike | None = None, *, lock_wait_s: float | None = None) -> str:
    """Append one JSON line.  ``lock_wait_s`` bounds the wait for the lock (the watchdog uses
    it); past it the item goes to a per-process file that replay also reads, never nowhere."""
    path = _spool_path(spool)
    folder = os.path.dirname(path)
    paths.ensure_dir(folder)
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
    partial = os.path.join(folder, f".partial-{name}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    fallback = os.path.join(folder, f"{_FALLBACK_PREFIX}{name}")
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


def pending_size(spool: PathLike | None = None) -> int:
    """Bytes waiting in the spool and in any claimed or fallback files."""
    path = _spool_path(spool)
    total = 0
    for p in _all_files(path):
        with contextlib.suppress(OSError):
            total += os.stat(p).st_size
    return total


def _siblings(path: str) -> list[str]:
    """Names in the spool's folder (none when it does not exist)."""
    try:
        return os.listdir(os.path.dirname(path))
    except FileNotFoundError:
        return []


def _all_files(path: str) -> list[str]:
    folder, own = os.path.split(path)
    return [os.path.join(folder, name) for name in _siblings(path)
            if name == own or name.startswith((_CLAIM_PREFIX, _FALLBACK_PREFIX))]


def _claim_name(folder: str) -> str:
    """A fresh claim file name owned by this process (the pid tells others whether it lives)."""
    return os.path.join(folder, f"{_CLAIM_PREFIX}{os.getpid()}-{time.time_ns()}.jsonl")


def _claim(path: str) -> list[str]:
    """Move the spool (and orphaned claims / fallback files) aside for this replayer."""
    claimed: list[str] = []
    folder = os.path.dirname(path)
    if os.path.exists(path):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                target = _claim_name(folder)
                try:
                    if os.fstat(fd).st_ino == os.stat(path).st_ino:
                        os.rename(path, target)
                        claimed.append(target)
                except FileNotFoundError:
                    pass
            finally:
                os.close(fd)
    now = time.time()
    for name in _siblings(path):
        p = os.path.join(folder, name)
        if p in claimed:
            continue
        if name.startswith(_FALLBACK_PREFIX) or (
            name.startswith(_CLAIM_PREFIX) and _orphaned(p, now)
        ):
            target = _claim_name(folder)
            try:
                os.rename(p, target)
                claimed.append(target)
            except FileNotFoundError:
                continue
    return claimed


def _orphaned(p: str, now: float) -> bool:
    try:
        pid = int(os.path.basename(p)[len(_CLAIM_PREFIX):].split("-", 1)[0])
    except ValueError:
        return True
    if pid != os.getpid() and not _alive(pid):
        return True
    try:
        return now - os.stat(p).st_mtime > _STALE_CLAIM_S
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


def _read_items(p: str) -> Iterator[dict[str, Any] | None]:
    with open(p, "rb") as fh:
        for raw in fh:
            try:
                item = json.loads(raw.decode("utf-8", "surrogatepass"))
            except ValueError:
                yield None
                continue
            yield item if isinstance(item, dict) else None


def replay(conn: sqlite3.Connection, spool: PathLike | None = None) -> ReplayResult:
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
            os.unlink(claimed)
    return result


def _give_back(claimed: str, path: str) -> None:
    """Append a claimed file's lines back to the live spool (replay failed)."""
    with contextlib.suppress(FileNotFoundError):
        for item in _read_items(claimed):
            if item is not None:
                append(item, path)
        os.unlink(claimed)

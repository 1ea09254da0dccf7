"""The hook spool: already-redacted items a hook could not write, replayed by the next writer.

It delays an item and never loses it:

- an append is a whole line or nothing (a short write is finished or cut back, and a line left
  half-written by a killed process is closed before the next one starts);
- on a full disk the append takes the space of a reserve file kept for that moment, and only
  when even that is gone does it count the item as lost, in place, where ``doctor`` shows it
  (``spool_reserve``);
- a line that cannot be replayed goes to the quarantine file with the reason
  (``spool_quarantine``; ``aletheia spool list|retry|drop``), never in the way of the others,
  and no line can make a replay (so a command) fail.

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
    from collections.abc import Iterable, Iterator
    from typing import Any

    PathLike = str | os.PathLike[str]

_CLAIM_PREFIX = "hook-spool.claim-"
_FALLBACK_PREFIX = "hook-spool.pid-"
# A claim file older than this whose owner is gone is taken over (its replayer died).
_STALE_CLAIM_S = 30.0
# A spool line is one redacted, capped item (well under 200 KB); a longer line is read in
# pieces and quarantined as it is, never parsed.
LINE_CAP = 16 << 20
# errno values that mean "no room": a full disk, a quota, a file size limit (RLIMIT_FSIZE).
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
ITEM_TYPES = ("memory", "stop")


class SpoolLost(OSError):
    """Nothing could be written, not even into the reserve: the item was counted as lost."""


class ReplayResult:
    """Counts from one replay (a plain class: the hook imports this module).

    ``items`` lines read = ``inserted`` + ``duplicates`` (already stored) + ``stops`` +
    ``excluded`` + ``quarantined``; nothing read leaves the spool any other way.
    """

    def __init__(self) -> None:
        self.items = 0
        self.inserted = 0
        self.duplicates = 0
        self.stops = 0
        self.excluded = 0
        self.quarantined = 0

    @property
    def bad_lines(self) -> int:  # the name earlier callers used
        return self.quarantined

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        return f"ReplayResult({self.__dict__})"


def _spool_path(spool: PathLike | None) -> str:
    return os.fspath(spool) if spool is not None else paths.spool_file_name()


def encode(item: dict[str, Any]) -> bytes:
    """One spool line.  ``allow_nan=False``: a non-finite number would not read back as JSON."""
    return (json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            + "\n").encode("utf-8", "surrogatepass")


def append(item: dict[str, Any], spool: PathLike | None = None, *, lock_wait_s: float | None = None) -> str:
    """Append one item; return the file it went to.

    ``lock_wait_s`` bounds the wait for the lock (the watchdog uses it); past it the item goes
    to a per-process file that replay also reads, never nowhere.  On a full disk the reserve
    is given up for it; if even that fails the item is counted as lost and ``SpoolLost`` is
    raised (a hook swallows it: it exits 0 whatever happens).
    """
    written = append_line(encode(item), spool, lock_wait_s=lock_wait_s)
    if item.get("why"):  # a hook's item: counted by reason (doctor, bench/lock_hold.py)
        from aletheia import spool_reserve

        spool_reserve.count_spooled(os.path.dirname(written), str(item["why"]))
    return written


def append_line(line: bytes, spool: PathLike | None = None, *, lock_wait_s: float | None = None) -> str:
    """Append one already-encoded line (``encode``, or a quarantined line being retried)."""
    if not line.endswith(b"\n"):
        line += b"\n"
    path = _spool_path(spool)
    folder = os.path.dirname(path)
    try:
        paths.ensure_dir(folder)
        return _append(path, folder, line, lock_wait_s)
    except OSError as exc:
        if exc.errno not in _NO_ROOM:
            raise
    # No room: write into the reserve's blocks (allocated for this moment), else count it.
    from aletheia import spool_reserve

    if spool_reserve.append(folder, line, lock_wait_s=lock_wait_s):
        return os.path.join(folder, spool_reserve.RESERVE_NAME)
    spool_reserve.record_loss(folder, items=1, size=len(line), reason="disk full")
    raise SpoolLost(errno.ENOSPC, "no room for the spool, not even in its reserve")


def _append(path: str, folder: str, line: bytes, lock_wait_s: float | None) -> str:
    deadline = None if lock_wait_s is None else time.monotonic() + lock_wait_s
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
        try:
            if not lock_until(fd, deadline):
                break
            try:
                if os.fstat(fd).st_ino != os.stat(path).st_ino:
                    continue  # renamed away by a replayer after we opened it: reopen
            except FileNotFoundError:
                continue
            _write_line(fd, line)
            return path
        finally:
            os.close(fd)
    # Written under a name replay ignores, then renamed: a replayer never claims a half-made file.
    name = f"{os.getpid()}-{time.time_ns()}.jsonl"
    partial = os.path.join(folder, f".partial-{name}")
    fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    try:
        try:
            _write_line(fd, line)
        finally:
            os.close(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    fallback = os.path.join(folder, f"{_FALLBACK_PREFIX}{name}")
    os.rename(partial, fallback)
    return fallback


def _write_line(fd: int, line: bytes) -> None:
    """Write all of ``line`` at the end of the (locked) file, or nothing.

    ``os.write`` may write less than asked (a disk filling up mid-write): the rest is written
    in a loop, and if a write fails the file is cut back to where it was, so no half line is
    left for the next append to run into.  A line a killed process left unterminated is closed
    first (the replay quarantines it; this line stays whole).
    """
    start = os.fstat(fd).st_size
    data = line
    if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
        data = b"\n" + line
    done = 0
    try:
        while done < len(data):
            written = os.write(fd, data[done:])
            if written <= 0:
                raise OSError(errno.EIO, "the spool write wrote nothing")
            done += written
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def lock_until(fd: int, deadline: float | None) -> bool:
    """``flock`` ``fd`` exclusively, waiting until ``deadline`` (monotonic; None: for ever);
    False when the deadline passed first."""
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
    """Bytes waiting in the spool, in any claimed or fallback files and in the reserve."""
    from aletheia import spool_reserve

    path = _spool_path(spool)
    total = spool_reserve.used_bytes(os.path.dirname(path))
    for p in _all_files(path):
        with contextlib.suppress(OSError):
            total += os.stat(p).st_size
    return total


def pending_lines(spool: PathLike | None = None) -> int:
    """Lines waiting (read in blocks: cheap for any spool a hook could write)."""
    from aletheia import spool_reserve

    path = _spool_path(spool)
    count = 0
    for p in _all_files(path):
        with contextlib.suppress(OSError), open(p, "rb") as fh:
            last = b"\n"
            while block := fh.read(1 << 20):
                count += block.count(b"\n")
                last = block[-1:]
            count += last != b"\n"
    with spool_reserve.peek(os.path.dirname(path)) as lines:
        count += len(lines)
    return count


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
    for name in sorted(_siblings(path)):
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


def read_lines(p: str) -> Iterator[tuple[bytes, bool]]:
    """(line without its newline, whole) for each line of ``p``; a line longer than
    ``LINE_CAP`` comes back in full but marked not whole (it is never parsed)."""
    with open(p, "rb") as fh:
        while True:
            raw = fh.readline(LINE_CAP + 1)
            if not raw:
                return
            if len(raw) > LINE_CAP and not raw.endswith(b"\n"):
                parts = [raw]
                while True:
                    more = fh.readline(LINE_CAP)
                    parts.append(more)
                    if not more or more.endswith(b"\n"):
                        break
                raw = b"".join(parts)
                yield raw.rstrip(b"\n"), False
                continue
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line.strip():
                yield line, raw.endswith(b"\n")


class Poison(ValueError):
    """A spool line that cannot be replayed; the message is the reason quarantine keeps."""


def _str(item: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise Poison(f"{key} must be a non-empty string")
    return value


def decode(line: bytes, whole: bool = True) -> tuple[str, Any]:
    """(type, what to write) for one spool line, or ``Poison`` saying why it cannot be replayed.

    A memory row goes through the store's ``prepare`` again (validation, caps, redaction:
    the same checks as a new memory), so a line cannot store what the write API refuses.
    """
    from aletheia import bounds, store
    from aletheia.errors import InvalidInput

    if not whole:
        raise Poison("incomplete line (its writer was stopped mid-write), or longer than "
                     f"{LINE_CAP} bytes")
    try:
        item = json.loads(line.decode("utf-8", "surrogatepass"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise Poison(f"not JSON: {str(exc)[:200]}") from None
    if not isinstance(item, dict):
        raise Poison("not a JSON object")
    kind = item.get("type")
    try:
        if kind == "memory":
            row = item.get("row")
            if not isinstance(row, dict):
                raise Poison("a memory line needs a row object")
            if row.get("created_at") is not None:  # a hook's own clock: never far ahead
                bounds.timestamp_ms(row["created_at"], "created_at")
            return kind, store.prepare(store.memory_in_from_row(row))
        if kind == "stop":
            at = item.get("at")
            return kind, {
                "session_id": _str(item, "session_id"), "project": _str(item, "project"),
                "tool": _str(item, "tool", required=False),
                "at": None if at is None else bounds.timestamp_ms(at, "at"),
            }
    except InvalidInput as exc:
        raise Poison(exc.message) from None
    except TypeError as exc:
        raise Poison(f"wrong field: {exc}") from None
    raise Poison(f"unknown item type {str(kind)[:40]!r} (expected one of {', '.join(ITEM_TYPES)})")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _project_of(kind: str, data: Any) -> str | None:
    project = data.get("project") if isinstance(data, dict) else None
    return project if isinstance(project, str) else None


def replay(conn: sqlite3.Connection, spool: PathLike | None = None) -> ReplayResult:
    """Write every spooled item through the write APIs (which re-redact and dedupe).

    A claimed file is deleted only once each of its lines is committed, excluded (the project
    is excluded now) or quarantined.  When the database cannot be written (locked, full,
    read-only) the claim is handed back untouched and the ``sqlite3.Error`` propagates: the
    caller decides whether that matters (a hook spools its own item too; a command goes on).
    Nothing in a line can raise from here.
    """
    path = _spool_path(spool)
    folder = os.path.dirname(path)
    result = ReplayResult()
    patterns = _patterns(conn)
    for claimed in _claim(path):
        try:
            poison = _process(conn, read_lines(claimed), patterns, result)
            if poison:
                from aletheia import spool_quarantine

                spool_quarantine.add(folder, poison, source=os.path.basename(path))
                result.quarantined += len(poison)
        except BaseException:
            _give_back(claimed)
            raise
        with contextlib.suppress(FileNotFoundError):
            os.unlink(claimed)
    _replay_reserve(conn, folder, patterns, result)
    return result


def _replay_reserve(conn: sqlite3.Connection, folder: str, patterns: list[str],
                    result: ReplayResult) -> None:
    """What a full disk left in the reserve: written like a claim, then the reserve is marked
    empty (if anything raises, its lines stay for the next replay)."""
    from aletheia import spool_reserve

    if not spool_reserve.used_bytes(folder):
        return
    with spool_reserve.claimed(folder) as lines:
        poison = _process(conn, ((line, True) for line in lines), patterns, result)
        if poison:
            from aletheia import spool_quarantine

            spool_quarantine.add(folder, poison, source=spool_reserve.RESERVE_NAME)
            result.quarantined += len(poison)


def retry(conn: sqlite3.Connection, ids: list[str] | None = None,
          spool: PathLike | None = None) -> ReplayResult:
    """Replay quarantined lines (these ids, or all): what goes through leaves the quarantine,
    what fails again stays with its new reason.  A database that cannot be written leaves the
    quarantine as it was (and raises)."""
    from aletheia import spool_quarantine

    folder = os.path.dirname(_spool_path(spool))
    taken = spool_quarantine.take(ids, folder)
    result = ReplayResult()
    try:
        poison = _process(conn, ((e.line, True) for e in taken), _patterns(conn), result)
        if poison:
            tries = {e.id: e.tries + 1 for e in taken}
            spool_quarantine.add(folder, poison, source="retry", tries=tries)
            result.quarantined += len(poison)
    except BaseException:
        spool_quarantine.put_back(taken, folder)
        raise
    return result


def _patterns(conn: sqlite3.Connection) -> list[str]:
    from aletheia import settings
    from aletheia.project import excluded_patterns

    # A hook that could not read the stored exclusion setting spooled anyway: decide here.
    return list(excluded_patterns(extra=settings.get(conn, "excluded_projects")))


def _process(conn: sqlite3.Connection, lines: Iterable[tuple[bytes, bool]],
             patterns: list[str], result: ReplayResult) -> list[tuple[bytes, str]]:
    """Decode and write ``lines``; return the ones that must be quarantined, with why."""
    from aletheia.project import is_excluded

    good: list[tuple[bytes, str, Any]] = []
    poison: list[tuple[bytes, str]] = []
    for line, whole in lines:
        result.items += 1
        try:
            kind, data = decode(line, whole)
        except Poison as exc:
            poison.append((line, str(exc)))
            continue
        project = _project_of(kind, data)
        if project is not None and is_excluded(project, patterns):
            result.excluded += 1
            continue
        good.append((line, kind, data))
    poison.extend(_write(conn, good, result))
    return poison


def _write(conn: sqlite3.Connection, good: list[tuple[bytes, str, Any]],
           result: ReplayResult) -> list[tuple[bytes, str]]:
    """Write the decoded items in one transaction; if the data (not the database) is at fault,
    one at a time, returning the lines the store refused with the reason."""
    from aletheia.db import tx

    try:
        with tx(conn):
            counts = _write_items(conn, good)
        _count(result, counts)
        return []
    except sqlite3.OperationalError:
        raise  # locked, full, read-only, I/O: the claim goes back as it is
    except Exception:
        pass
    refused: list[tuple[bytes, str]] = []
    for entry in good:
        try:
            with tx(conn):
                counts = _write_items(conn, [entry])
            _count(result, counts)
        except sqlite3.OperationalError:
            raise
        except Exception as exc:
            refused.append((entry[0], f"the store refused it: {type(exc).__name__}: {exc}"[:500]))
    return refused


def _count(result: ReplayResult, counts: dict[str, int]) -> None:
    # Counted once the transaction has committed (a rolled-back one counts nothing).
    for name, n in counts.items():
        setattr(result, name, getattr(result, name) + n)


def _write_items(conn: sqlite3.Connection, good: list[tuple[bytes, str, Any]]) -> dict[str, int]:
    from aletheia import store

    counts = {"inserted": 0, "duplicates": 0, "stops": 0}
    rows = [data for _, kind, data in good if kind == "memory"]
    for written in store.insert_rows(conn, rows) if rows else []:
        counts["inserted" if written.inserted else "duplicates"] += 1
    for _, kind, data in good:
        if kind == "stop":
            store.queue_stop(conn, data["session_id"], data["project"], data["tool"],
                             now=data["at"])
            counts["stops"] += 1
    return counts


def _give_back(claimed: str) -> None:
    """Hand a claimed file back, as it is, under a name the next replayer takes (a rename:
    it needs no room on a full disk, and keeps every line, readable or not)."""
    folder = os.path.dirname(claimed)
    target = os.path.join(folder, f"{_FALLBACK_PREFIX}{os.getpid()}-{time.time_ns()}.jsonl")
    with contextlib.suppress(FileNotFoundError):
        os.rename(claimed, target)

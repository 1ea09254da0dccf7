"""What the spool does when the disk is full: a reserve written in place, and a count of what
was lost.

``spool/reserve`` is a file of ``RESERVE_BYTES`` whose blocks are allocated up front.  When an
append to the spool finds no room, the line is written *into* those blocks (a header says how
much of the file holds lines): overwriting allocated blocks needs no new space, and no other
writer (SQLite, say) can take that room first, as it could if the file were deleted to free
it.  Replay reads the reserve like any spool file and then marks it empty again, keeping its
blocks for the next time.

``spool/lost`` is a small file allocated up front too: when even the reserve is full, the loss
is counted there, in place.  ``doctor`` shows both.  (In-place writes need no new space on
ext4, xfs and tmpfs; a copy-on-write filesystem may still refuse them.)  ``ensure`` — called by
the server, the worker and the CLI, never the hook — makes the files.  Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time

from aletheia import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

RESERVE_NAME = "reserve"
LOST_NAME = "lost"
TALLY_NAME = "tally"  # how many items hooks spooled, and why (same fixed-size, in-place form)
RESERVE_BYTES = 1 << 20  # about 30 of the largest hook items, hundreds of typical ones
LOST_BYTES = 4096
_HEADER = 64
_MAGIC = b"aletheia-spool-reserve v1 used="


def _folder(folder: str | None) -> str:
    return os.path.dirname(paths.spool_file_name()) if folder is None else folder


def _header(used: int) -> bytes:
    head = _MAGIC + b"%012d" % used
    return head + b" " * (_HEADER - 1 - len(head)) + b"\n"


def _used(fd: int) -> int | None:
    raw = os.pread(fd, _HEADER, 0)
    if not raw.startswith(_MAGIC):
        return None
    try:
        return int(raw[len(_MAGIC):len(_MAGIC) + 12])
    except ValueError:
        return None


def _allocate(path: str, size: int) -> int:
    """Open ``path`` with ``size`` bytes of allocated blocks; returns the fd."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, paths.FILE_MODE)
    try:
        if os.fstat(fd).st_size < size or os.fstat(fd).st_blocks * 512 < size:
            try:
                os.posix_fallocate(fd, 0, size)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate: zeros
                    raise
                os.pwrite(fd, b"\0" * size, 0)
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def ensure(folder: str | None = None) -> bool:
    """Make the reserve and the loss counter if missing; False when there is no room yet."""
    folder = _folder(folder)
    try:
        paths.ensure_dir(folder)
        lost = os.path.join(folder, LOST_NAME)
        if not os.path.exists(lost):
            os.close(_allocate(lost, LOST_BYTES))
            _write_record(lost, _empty())
        tally = os.path.join(folder, TALLY_NAME)
        if not os.path.exists(tally):  # allocated now: counting works on a full disk too
            os.close(_allocate(tally, LOST_BYTES))
            _write_record(tally, _empty_tally())
        fd = _allocate(os.path.join(folder, RESERVE_NAME), RESERVE_BYTES)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _used(fd) is None:
                os.pwrite(fd, _header(0), 0)
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def reserve_ready(folder: str | None = None) -> bool:
    """The reserve exists, is allocated and has room for at least a typical item."""
    return free(folder) >= 64 * 1024


def _state(folder: str | None) -> tuple[int | None, int]:
    """(bytes of lines in the reserve or None when it is missing or unreadable, its size)."""
    try:
        fd = os.open(os.path.join(_folder(folder), RESERVE_NAME), os.O_RDONLY)
    except OSError:
        return None, 0
    try:
        return _used(fd), os.fstat(fd).st_size
    finally:
        os.close(fd)


def free(folder: str | None = None) -> int:
    """Bytes the reserve can still take (0 when it is missing or spent)."""
    used, size = _state(folder)
    return 0 if used is None else max(0, size - _HEADER - used)


def used_bytes(folder: str | None = None) -> int:
    """Bytes of lines waiting in the reserve."""
    return _state(folder)[0] or 0


def append(folder: str | None, line: bytes, *, lock_wait_s: float | None = None) -> bool:
    """Write ``line`` into the reserve's allocated blocks; False when it has no room for it
    (or there is no reserve, or its lock could not be had in time)."""
    path = os.path.join(_folder(folder), RESERVE_NAME)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        from aletheia.spool import lock_until

        if not lock_until(fd, None if lock_wait_s is None else time.monotonic() + lock_wait_s):
            return False
        used = _used(fd)
        if used is None or _HEADER + used + len(line) > os.fstat(fd).st_size:
            return False
        # The line first, then the header that counts it: a crash between leaves the line
        # beyond what the header counts, ignored, and the reserve consistent.
        if os.pwrite(fd, line, _HEADER + used) != len(line):
            return False
        os.pwrite(fd, _header(used + len(line)), 0)
        _update_lost(_folder(folder), reserve_used_at=int(time.time() * 1000))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def claimed(folder: str | None = None) -> Iterator[list[bytes]]:
    """The reserve's lines, under its lock; once the block exits normally the reserve is marked
    empty (its blocks stay allocated).  If it raises, the lines stay for the next replay."""
    path = os.path.join(_folder(folder), RESERVE_NAME)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        yield []
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        used = _used(fd) or 0
        data = os.pread(fd, used, _HEADER) if used else b""
        yield [line for line in data.split(b"\n") if line.strip()]
        if used:
            os.pwrite(fd, _header(0), 0)
    finally:
        os.close(fd)


@contextlib.contextmanager
def peek(folder: str | None = None) -> Iterator[list[bytes]]:
    """The reserve's lines, read without claiming them."""
    try:
        fd = os.open(os.path.join(_folder(folder), RESERVE_NAME), os.O_RDONLY)
    except OSError:
        yield []
        return
    try:
        used = _used(fd) or 0
        data = os.pread(fd, used, _HEADER) if used else b""
    finally:
        os.close(fd)
    yield [line for line in data.split(b"\n") if line.strip()]


def _empty() -> dict[str, Any]:
    return {"items": 0, "bytes": 0, "first_at": None, "last_at": None, "last_reason": None,
            "reserve_used_at": None}


def _read_record(path: str, empty: dict[str, Any] | None = None) -> dict[str, Any]:
    out = _empty() if empty is None else dict(empty)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(LOST_BYTES)
    except OSError:
        return out
    try:
        data = json.loads(raw.rstrip(b"\0 \n") or b"{}")
    except ValueError:
        return out
    if isinstance(data, dict):
        out.update({k: v for k, v in data.items() if k in out})
    return out


def _write_record(path: str, data: dict[str, Any]) -> None:
    blob = json.dumps(data, separators=(",", ":")).encode()[: LOST_BYTES - 1]
    # Same length every time, over the same (already allocated) blocks: no new space needed.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, paths.FILE_MODE)
    try:
        os.pwrite(fd, blob + b" " * (LOST_BYTES - 1 - len(blob)) + b"\n", 0)
    finally:
        os.close(fd)


def _update_lost(folder: str, **changes: Any) -> None:
    path = os.path.join(folder, LOST_NAME)
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = _read_record(path)
            data.update(changes)
            _write_record(path, data)
        finally:
            os.close(fd)


def record_loss(folder: str | None, *, items: int, size: int, reason: str) -> bool:
    """Count ``items`` that could be written nowhere; False when even that failed."""
    folder = _folder(folder)
    path = os.path.join(folder, LOST_NAME)
    now = int(time.time() * 1000)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _read_record(path)
        data["items"] = int(data["items"] or 0) + items
        data["bytes"] = int(data["bytes"] or 0) + size
        data["first_at"] = data["first_at"] or now
        data["last_at"] = now
        data["last_reason"] = reason[:200]
        _write_record(path, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _empty_tally() -> dict[str, Any]:
    return {"since": None, "total": 0, "by_why": {}, "last_at": None}


def count_spooled(folder: str | None, why: str) -> None:
    """One more item a hook spooled, and why (``locked``, ``watchdog``, …); never raises.
    Only the spooling path pays for it (a small in-place write under a lock)."""
    path = os.path.join(_folder(folder), TALLY_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, paths.FILE_MODE)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _read_record(path, _empty_tally())
        now = int(time.time() * 1000)
        by_why = data["by_why"] if isinstance(data["by_why"], dict) else {}
        key = str(why)[:40]
        if key not in by_why and len(by_why) >= 20:
            key = "other"
        by_why[key] = int(by_why.get(key) or 0) + 1
        data.update(since=data["since"] or now, total=int(data["total"] or 0) + 1,
                    by_why=by_why, last_at=now)
        _write_record(path, data)
    except (OSError, ValueError, TypeError):
        pass
    finally:
        os.close(fd)


def spooled_tally(folder: str | None = None) -> dict[str, Any]:
    """How many items hooks have spooled since the tally began, by reason."""
    return _read_record(os.path.join(_folder(folder), TALLY_NAME), _empty_tally())


def losses(folder: str | None = None) -> dict[str, Any]:
    """What was lost (``items`` 0 when nothing), and when the reserve was last written."""
    return _read_record(os.path.join(_folder(folder), LOST_NAME))


def clear_losses(folder: str | None = None) -> dict[str, Any]:
    """Forget the losses once the user has seen them; returns what was cleared."""
    folder = _folder(folder)
    before = losses(folder)
    path = os.path.join(folder, LOST_NAME)
    if os.path.exists(path):
        reserve_used_at = before.get("reserve_used_at")
        _write_record(path, {**_empty(), "reserve_used_at": reserve_used_at})
    return before

"""Context files under ``$ALETHEIA_HOME/context/``: what a read-only hook needs without
building anything.

- ``blocks/``: the SessionStart block precomputed per project and host, with the
  ``context_state`` version it was built at.  Whoever writes what the block shows rebuilds it
  (the worker after a job; any reader that finds it stale), so SessionStart reads one row and
  one file; when the store cannot answer at all, the file is printed as it is.
- ``sessions/``: per session, one JSON line per injection (the block, a per-prompt block, a
  per-file block) with the ids it listed and its size — so a session is never told the same
  thing twice, and ``aletheia stats`` can say what context cost and whether it was used.
- ``undelivered.jsonl``: a SessionStart (or prompt) block that should have been printed and
  was not, with the reason; ``doctor`` and the dashboard read it (``undelivered_check``).
- ``fetches.jsonl``: detail fetches (search, timeline, get_observations) with their project,
  to see how often an injection was followed by one.

Stdlib only, plain string paths (the hook imports this).  Small appends use ``O_APPEND`` (one
``write`` of a short line is not interleaved with another's); files are 0600, folders 0700.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
import zlib

from aletheia import paths

TYPE_CHECKING = False  # the hook path: typing costs ~2 ms
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

LINE_CAP = 3500  # an appended line stays one short write
UNDELIVERED_KEEP = 500  # lines kept in undelivered.jsonl / fetches.jsonl when it is trimmed
FETCHES_KEEP = 20_000
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_VERSION = "SELECT coalesce(sum(version), 0) FROM context_state WHERE project IN (?, '*')"


def folder(*parts: str) -> str:
    return os.path.join(paths.home_dir(), "context", *parts)


def _name(text: str, cap: int = 60) -> str:
    """A file name for ``text``: readable, and unique through a checksum of the whole."""
    base = _SAFE.sub("_", os.path.basename(text.rstrip("/")) or "root")[:cap].strip("._") or "x"
    return f"{base}-{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def block_file(project: str, host: str | None) -> str:
    return os.path.join(folder("blocks"), f"{_name(project)}.{_name(host or 'any', 30)}.json")


def session_file(session_id: str) -> str:
    return os.path.join(folder("sessions"), _name(session_id, 80) + ".jsonl")


# --- precomputed blocks ----------------------------------------------------------------------


def version(conn: sqlite3.Connection, project: str) -> int:
    """How many changes that alter a block this project (and everything global) has seen."""
    try:
        return int(conn.execute(_VERSION, (project,)).fetchone()[0])
    except sqlite3.OperationalError:  # a store from before context_state: never current
        return -1


def _write_atomic(path: str, data: bytes) -> None:
    paths.ensure_dir(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def save(project: str, host: str | None, at_version: int, text: str) -> None:
    record = {"project": project, "host": host, "version": at_version,
              "built_at": int(time.time() * 1000), "text": text}
    _write_atomic(block_file(project, host), json.dumps(record, ensure_ascii=False).encode())


def load(project: str, host: str | None) -> dict[str, Any] | None:
    try:
        with open(block_file(project, host), "rb") as f:
            record = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("project") != project \
            or not isinstance(record.get("text"), str):
        return None
    return record


def current(conn: sqlite3.Connection, project: str, host: str | None,
            session_id: str | None = None) -> str:
    """The block, from its precomputed file when that is current, else built (and saved)."""
    from aletheia import context

    now = version(conn, project)
    record = load(project, host)
    if record is not None and now >= 0 and record.get("version") == now:
        return str(record["text"])
    text = context.build_block(conn, project, host=host, session_id=session_id)
    if now >= 0:
        try:
            save(project, host, now, text)
        except OSError:
            pass  # a read-only or full disk: the block is still printed
    return text


def forget() -> int:
    """Delete every precomputed block (after an erase: a copy may quote what was erased; the
    next reader rebuilds it).  Each file is overwritten before it is unlinked."""
    removed = 0
    try:
        names = os.listdir(folder("blocks"))
    except OSError:
        return 0
    for name in names:
        full = os.path.join(folder("blocks"), name)
        try:
            size = os.path.getsize(full)
            with open(full, "r+b") as f:
                f.write(b"\0" * size)
                f.flush()
                os.fsync(f.fileno())
            os.unlink(full)
            removed += 1
        except OSError:
            continue
    return removed


def refresh(conn: sqlite3.Connection, project: str, hosts: list[str | None] | None = None) -> int:
    """Rebuild the precomputed blocks of ``project`` (for the hosts that already have one, and
    ``hosts``); what the worker runs after a job.  Returns how many were written."""
    from aletheia import context

    wanted: list[str | None] = list(hosts or [])
    prefix = _name(project) + "."
    try:
        for entry in os.listdir(folder("blocks")):
            if entry.startswith(prefix) and entry.endswith(".json"):
                try:
                    with open(os.path.join(folder("blocks"), entry), "rb") as f:
                        host = json.loads(f.read()).get("host")
                except (OSError, ValueError):
                    continue
                if host not in wanted:
                    wanted.append(host)
    except OSError:
        pass
    now = version(conn, project)
    written = 0
    for host in wanted:
        save(project, host, now, context.build_block(conn, project, host=host))
        written += 1
    return written


# --- what a session was given -----------------------------------------------------------------


def _append(path: str, record: dict[str, Any]) -> None:
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if len(line) > LINE_CAP:
        record = dict(record, ids=list(record.get("ids") or [])[:40], detail="")
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))[:LINE_CAP]
    paths.ensure_dir(os.path.dirname(path))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
    try:
        os.write(fd, (line + "\n").encode("utf-8", "surrogatepass"))
    finally:
        os.close(fd)


def _lines(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return []
    out = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a torn line (a process killed mid-write) is skipped, not fatal
        if isinstance(item, dict):
            out.append(item)
    return out


def record_injection(session_id: str | None, *, kind: str, project: str, host: str | None,
                     text: str, ids: list[str], path: str | None = None) -> None:
    """Note what a session was given (``kind``: block, prompt, file)."""
    if not session_id or not text:
        return
    item: dict[str, Any] = {"kind": kind, "project": project, "host": host, "session": session_id,
                            "chars": len(text), "ids": ids, "at": int(time.time() * 1000)}
    if path:
        item["path"] = path
    _append(session_file(session_id), item)


def session_log(session_id: str | None) -> list[dict[str, Any]]:
    """What this session was given, in order."""
    return _lines(session_file(session_id)) if session_id else []


def given(session_id: str | None) -> tuple[set[str], set[str]]:
    """(ids, file paths) this session has already been given."""
    if not session_id:
        return set(), set()
    ids: set[str] = set()
    files: set[str] = set()
    for item in _lines(session_file(session_id)):
        ids.update(str(i) for i in item.get("ids") or ())
        if item.get("path"):
            files.add(str(item["path"]))
    return ids, files


def injections(since: int = 0) -> list[dict[str, Any]]:
    """Every injection recorded since ``since`` (epoch ms), oldest first."""
    out: list[dict[str, Any]] = []
    try:
        names = os.listdir(folder("sessions"))
    except OSError:
        return out
    for name in names:
        full = os.path.join(folder("sessions"), name)
        try:
            if os.stat(full).st_mtime * 1000 < since:
                continue
        except OSError:
            continue
        out.extend(i for i in _lines(full) if int(i.get("at") or 0) >= since)
    out.sort(key=lambda i: int(i.get("at") or 0))
    return out


# --- undelivered blocks and detail fetches ------------------------------------------------------


def _trim(path: str, keep: int) -> None:
    try:
        if os.path.getsize(path) < keep * 400:
            return
        items = _lines(path)[-keep:]
        _write_atomic(path, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items).encode())
    except OSError:
        pass


def record_undelivered(*, event: str, project: str | None, host: str | None,
                       session_id: str | None, reason: str) -> None:
    """A block that should have reached the agent and did not; never raises."""
    try:
        path = os.path.join(folder(), "undelivered.jsonl")
        _append(path, {"event": event, "project": project, "host": host, "session": session_id,
                       "reason": reason[:300], "at": int(time.time() * 1000)})
        _trim(path, UNDELIVERED_KEEP)
    except Exception:
        pass


def undelivered(since: int = 0) -> list[dict[str, Any]]:
    return [i for i in _lines(os.path.join(folder(), "undelivered.jsonl"))
            if int(i.get("at") or 0) >= since]


def undelivered_check(*, days: int = 7, now: int | None = None) -> dict[str, Any]:
    """For ``doctor`` and the dashboard: context blocks that went undelivered lately.
    ``{"ok": bool, "count": n, "by_event": {...}, "last": {...} | None, "message": str}``."""
    stamp = int(time.time() * 1000) if now is None else now
    found = undelivered(stamp - days * 86_400_000)
    by_event: dict[str, int] = {}
    for item in found:
        by_event[str(item.get("event"))] = by_event.get(str(item.get("event")), 0) + 1
    last = found[-1] if found else None
    if not found:
        message = f"every context block was delivered (last {days} days)"
    else:
        message = (f"{len(found)} context blocks were not delivered in the last {days} days "
                   f"(latest: {last['event'] if last else '?'}, {last.get('reason') if last else ''})")
    return {"ok": not found, "count": len(found), "by_event": by_event, "last": last,
            "message": message}


def record_fetch(kind: str, project: str | None, via: str) -> None:
    """A detail fetch (``search``, ``timeline``, ``get_observations``); never raises.  A person
    browsing the dashboard (``via="dashboard"``) is not the agent fetching detail: not kept."""
    if via == "dashboard":
        return
    try:
        path = os.path.join(folder(), "fetches.jsonl")
        _append(path, {"kind": kind, "project": project, "via": via, "at": int(time.time() * 1000)})
        _trim(path, FETCHES_KEEP)
    except Exception:
        pass


def record_fetch_of(kind: str, rows: Sequence[Mapping[str, Any]], via: str) -> None:
    """A fetch of memories by id: its project is the first memory's."""
    project = next((str(r["project"]) for r in rows if r.get("project")), None)
    record_fetch(kind, project, via)


def fetches(since: int = 0) -> list[dict[str, Any]]:
    return [i for i in _lines(os.path.join(folder(), "fetches.jsonl"))
            if int(i.get("at") or 0) >= since]


# --- economics ------------------------------------------------------------------------------

FOLLOW_MS = 30 * 60_000  # a fetch up to this long after a session's last injection follows it
KINDS = ("block", "prompt", "file")


def economics(project: str | None = None, *, days: int = 30, now: int | None = None,
              recent: int = 50) -> dict[str, Any]:
    """Per project, what context cost and whether it was used: tokens injected per session
    (characters / 4) for the block, per-prompt and per-file recall, and how often a session was
    followed by a detail fetch (search, timeline, get_observations in its project after its
    first injection and no later than ``FOLLOW_MS`` after its last).  Fetches carry no session
    id (an MCP server serves a host, not a session), so a fetch is given to the project's
    session that started last before it.  ``sessions``: the ``recent`` latest sessions, each
    with its own figures, newest first."""
    stamp = int(time.time() * 1000) if now is None else now
    since = stamp - days * 86_400_000
    sessions: dict[str, dict[str, Any]] = {}
    for item in injections(since):
        p = item.get("project")
        if not isinstance(p, str) or (project is not None and p != project):
            continue
        s = sessions.setdefault(str(item.get("session")), {"project": p, "first": item["at"],
                                                            "last": item["at"], "chars": {},
                                                            "count": {}, "host": item.get("host")})
        s["last"] = max(int(s["last"]), int(item["at"]))
        kind = str(item.get("kind"))
        s["chars"][kind] = s["chars"].get(kind, 0) + int(item.get("chars") or 0)
        s["count"][kind] = s["count"].get(kind, 0) + 1
    # Each fetch goes to the session of its project that started last before it (and had an
    # injection no longer than FOLLOW_MS before it): the session most likely to have made it.
    attributed: dict[str, int] = {}
    for f in fetches(since):
        at = int(f.get("at") or 0)
        owners = [(int(s["first"]), key) for key, s in sessions.items()
                  if s["project"] == f.get("project") and int(s["first"]) <= at <= int(s["last"]) + FOLLOW_MS]
        if owners:
            key = max(owners)[1]
            attributed[key] = attributed.get(key, 0) + 1
    out: dict[str, Any] = {}
    listed: list[dict[str, Any]] = []
    for key, s in sessions.items():
        row = out.setdefault(s["project"], {"sessions": 0, "tokens": dict.fromkeys(KINDS, 0),
                                            "injections": dict.fromkeys(KINDS, 0),
                                            "followed_by_fetch": 0, "fetches": 0})
        row["sessions"] += 1
        tokens = {k: s["chars"].get(k, 0) // 4 for k in KINDS}
        for kind in KINDS:
            row["tokens"][kind] += tokens[kind]
            row["injections"][kind] += s["count"].get(kind, 0)
        row["fetches"] += attributed.get(key, 0)
        row["followed_by_fetch"] += key in attributed
        listed.append({"session": key, "project": s["project"], "host": s["host"],
                       "first_at": int(s["first"]), "last_at": int(s["last"]),
                       "tokens": {**tokens, "total": sum(tokens.values())},
                       "injections": {k: s["count"].get(k, 0) for k in KINDS},
                       "fetches": attributed.get(key, 0)})
    for row in out.values():
        n = max(1, row["sessions"])
        row["tokens_per_session"] = {k: round(v / n, 1) for k, v in row["tokens"].items()}
        row["tokens_per_session"]["total"] = round(sum(row["tokens"].values()) / n, 1)
        row["fetch_rate"] = round(row["followed_by_fetch"] / n, 3)
    listed.sort(key=lambda r: (-r["first_at"], r["session"]))
    return {"days": days, "projects": out, "sessions": listed[:max(0, recent)]}

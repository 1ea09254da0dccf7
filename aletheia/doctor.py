"""``aletheia doctor``: what state the store is in, said plainly, with what to do about it.

Each check gives ``ok``, ``warn`` (worth knowing) or ``problem`` (needs the user: the CLI
exits non-zero).  The same report is ``aletheia doctor --json`` and ``GET /v1/doctor``.
Other sections (the configuration, say) add themselves with ``register_section``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from aletheia import db, ids, paths, spool, spool_quarantine, spool_reserve
from aletheia.schema import MIGRATIONS

OK, WARN, PROBLEM = "ok", "warn", "problem"
# Disk: below this much free space a full disk is near (hooks then live on the spool's reserve).
DISK_PROBLEM_BYTES = 32 << 20
DISK_WARN_BYTES = 512 << 20
INCIDENT_DAYS = 7
_SPOOL_SCAN_BYTES = 8 << 20  # how much of a waiting spool is read to say why it spooled


@dataclass
class Check:
    name: str
    status: str
    summary: str
    hint: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


Section = Callable[[sqlite3.Connection], list[Check]]
_SECTIONS: dict[str, Section] = {}


def register_section(name: str, section: Section) -> None:
    """Add a section of checks (run after the built-in ones, in the order registered)."""
    _SECTIONS[name] = section


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def _ago(ms: int | None, now: int) -> str:
    if not ms:
        return "never"
    seconds = max(0, (now - ms) // 1000)
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    if seconds < 172800:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def _size(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} bytes"


def check_files() -> Check:
    """Modes: the home and folders 0700, every file 0600 (they hold prompts and tool output)."""
    home = paths.home_dir()
    wrong: list[str] = []
    seen: dict[str, str] = {}

    def want(path: str, mode: int) -> None:
        got = _mode(path)
        if got is None:
            return
        seen[os.path.relpath(path, home) if path != home else "~"] = oct(got)
        if got & 0o077:
            wrong.append(f"{path} is {oct(got)} (want {oct(mode)})")

    want(home, paths.DIR_MODE)
    hub = paths.hub_db_file()
    for p in (hub, hub + "-wal", hub + "-shm", os.path.join(home, "queue.db")):
        want(p, paths.FILE_MODE)
    for folder in (os.path.dirname(paths.spool_file_name()), os.path.join(home, "keys")):
        want(folder, paths.DIR_MODE)
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        for name in names:
            p = os.path.join(folder, name)
            if os.path.isfile(p):
                want(p, paths.FILE_MODE)
    if wrong:
        return Check("files", PROBLEM, "files readable by others: " + "; ".join(wrong[:5]),
                     "chmod 700 the folders and 600 the files (aletheia creates them so)",
                     {"modes": seen, "wrong": wrong})
    return Check("files", OK, f"home {oct(_mode(home) or 0)}, {len(seen)} paths private",
                 data={"modes": seen})


def check_store(conn: sqlite3.Connection, before: int, *, full: bool,
                integrity: bool = True) -> list[Check]:
    latest = max(MIGRATIONS)
    version = db.schema_version(conn)
    out = [Check("schema", OK if version >= latest else PROBLEM,
                 f"schema {version}" + (f" (upgraded from {before} just now)"
                                        if 0 < before < version else " (current)"),
                 None if version >= latest else "run any aletheia command (not a hook) to upgrade",
                 {"version": version, "latest": latest})]
    if integrity:
        pragma = "integrity_check" if full else "quick_check"
        result = str(conn.execute(f"PRAGMA {pragma}").fetchone()[0])
        out.append(Check("integrity", OK if result == "ok" else PROBLEM,
                         f"{pragma}: {result}",
                         None if result == "ok" else "restore hub.db from a backup, or export what reads",
                         {"result": result, "full": full}))
    out.append(_check_writable(conn))
    return out


def _check_writable(conn: sqlite3.Connection) -> Check:
    """Can hub.db be written now?  A write lock taken and given back at once."""
    hub = paths.hub_db_file()
    try:
        conn.execute("PRAGMA busy_timeout = 500")
        conn.execute("BEGIN IMMEDIATE")
        try:
            # A row written and rolled back: a read-only file only refuses an actual write.
            conn.execute("INSERT INTO worker (name, hostname, pid, started_at, beat_at) "
                         "VALUES ('doctor-probe', '', 0, 0, 0)")
        finally:
            conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return Check("writable", WARN, "another process held the write lock for 500 ms",
                         "normal under load; if it lasts, a process is stuck holding hub.db",
                         {"error": text})
        return Check("writable", PROBLEM, f"hub.db cannot be written: {text}",
                     f"hooks keep their items in the spool until it can; check {hub} and its "
                     "folder (permissions, a read-only or full filesystem)", {"error": text})
    finally:
        conn.execute(f"PRAGMA busy_timeout = {db.DEFAULT_BUSY_MS}")
    return Check("writable", OK, "hub.db takes writes")


def check_worker(conn: sqlite3.Connection, now: int) -> list[Check]:
    from aletheia.tasks import heartbeat, jobs

    workers = heartbeat.live(conn, now=now)
    last = heartbeat.last_seen(conn)
    counts = jobs.counts(conn)
    stops = int(conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0])
    waiting = stops + counts["pending"] + counts["retry_wait"] + counts["running"]
    data = {"workers": workers, "last_seen": last, "stop_queue": stops, "jobs": counts,
            "waiting": waiting}
    out: list[Check] = []
    if workers:
        names = ", ".join(f"{w['name']} (beat {_ago(w['beat_at'], now)})" for w in workers[:3])
        out.append(Check("worker", OK, f"{len(workers)} worker(s) running: {names}; "
                         f"{waiting} session(s) queued or compressing", data=data))
    elif waiting:
        seen = f"last heartbeat {_ago(last['beat_at'], now)}" if last else "no worker has ever run"
        out.append(Check(
            "worker", PROBLEM,
            f"{waiting} session(s) wait for compression and no worker is running ({seen})",
            "run `aletheia compress` to compress them now, and keep `aletheia worker` running "
            "(`honcho start` runs it beside the server)", data))
    else:
        seen = f"last heartbeat {_ago(last['beat_at'], now)}" if last else "none has run yet"
        out.append(Check("worker", OK, f"no worker running ({seen}); nothing waits", data=data))
    if counts["dead"]:
        out.append(Check("jobs", WARN, f"{counts['dead']} compression job(s) failed 5 times",
                         "`aletheia jobs --state dead` shows why; `aletheia jobs retry ID`",
                         {"dead": counts["dead"]}))
    return out


def _spool_reasons(limit: int = _SPOOL_SCAN_BYTES) -> dict[str, int]:
    """Why the waiting items were spooled (``why`` in each line), from the first ``limit``
    bytes of the spool files."""
    reasons: dict[str, int] = {}
    budget = limit
    for p in spool._all_files(paths.spool_file_name()):
        if budget <= 0:
            break
        try:
            with open(p, "rb") as fh:
                data = fh.read(budget)
        except OSError:
            continue
        budget -= len(data)
        _count_reasons(data.splitlines(), reasons)
    with spool_reserve.peek() as lines:
        _count_reasons(lines, reasons)
    return reasons


def _count_reasons(lines: list[bytes], reasons: dict[str, int]) -> None:
    import json

    for raw in lines:
        if not raw.strip():
            continue
        try:
            why = json.loads(raw).get("why") or "not recorded"
        except (ValueError, AttributeError):
            why = "unreadable"
        reasons[str(why)] = reasons.get(str(why), 0) + 1


def check_spool(now: int) -> list[Check]:
    out: list[Check] = []
    size = spool.pending_size()
    lines = spool.pending_lines() if size else 0
    if size:
        reasons = _spool_reasons()
        why = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))
        out.append(Check("spool", WARN, f"{lines} item(s) ({_size(size)}) wait in the spool"
                         + (f" (spooled because: {why})" if why else ""),
                         "the next writer replays them (any aletheia command, the worker, a hook)",
                         {"lines": lines, "bytes": size, "why": reasons}))
    else:
        out.append(Check("spool", OK, "the spool is empty", data={"lines": 0, "bytes": 0}))
    tally = spool_reserve.spooled_tally()
    if tally["total"]:
        why = ", ".join(f"{k} {v}" for k, v in sorted(tally["by_why"].items(), key=lambda kv: -kv[1]))
        out[-1].summary += (f"; hooks have spooled {tally['total']} item(s) since "
                            f"{ids.iso(tally['since'])} ({why}), last {_ago(tally['last_at'], now)}")
        out[-1].data["tally"] = tally
    entries = spool_quarantine.entries()
    if entries:
        latest = entries[-1]
        out.append(Check(
            "quarantine", PROBLEM,
            f"{len(entries)} spooled line(s) could not be replayed and are quarantined "
            f"(latest {_ago(latest.at, now)}: {latest.reason[:120]})",
            "`aletheia spool list` shows each with its reason; `aletheia spool retry --all` "
            "once the cause is fixed, or `aletheia spool drop ID`",
            {"count": len(entries), "entries": [e.to_dict() for e in entries[-20:]],
             "file": spool_quarantine.path_in(os.path.dirname(paths.spool_file_name()))}))
    else:
        out.append(Check("quarantine", OK, "nothing quarantined", data={"count": 0}))
    lost = spool_reserve.losses()
    if lost["items"]:
        out.append(Check(
            "lost", PROBLEM,
            f"{lost['items']} hook item(s) ({_size(int(lost['bytes'] or 0))}) were lost: "
            f"{lost['last_reason']} (from {ids.iso(lost['first_at'])} to {ids.iso(lost['last_at'])}); "
            "everything else was kept",
            "free disk space; then `aletheia spool drop --lost` to clear this notice", lost))
    elif not spool_reserve.reserve_ready():
        used = lost.get("reserve_used_at")
        out.append(Check(
            "lost", WARN,
            "nothing lost, but the spool's disk-full reserve is "
            + (f"full (last written {_ago(used, now)}; the next replay empties it)" if used
               else "not made yet (the next aletheia command makes it)"),
            "free disk space", lost))
    else:
        out.append(Check("lost", OK, "nothing lost; the disk-full reserve is ready", data=lost))
    return out


def check_context() -> Check:
    """Context blocks (SessionStart, per-prompt recall) that should have reached the agent and
    did not: the hook records them (``aletheia.blocks.record_undelivered``); read here."""
    from aletheia import blocks

    found = blocks.undelivered_check(days=INCIDENT_DAYS)
    if found["ok"]:
        return Check("context", OK, found["message"], data=found)
    return Check("context", PROBLEM, found["message"],
                 "sessions started without their memory block: `aletheia context` shows what they "
                 "should have got; a busy machine or a locked store is the usual cause "
                 f"(the record: {blocks.folder()}/undelivered.jsonl)", found)


def check_host_hooks() -> Check:
    """Hooks and MCP entries of ours, in any host config, whose interpreter or script is gone
    (a moved clone, a removed venv): the host runs them, they fail, and nobody is told."""
    from aletheia.install.health import broken_entries

    broken = broken_entries()
    data = {"broken": [b.to_dict() for b in broken]}
    if not broken:
        return Check("host hooks", OK, "every installed hook and MCP entry points at this install",
                     data=data)
    hosts = sorted({b.host for b in broken})
    return Check("host hooks", PROBLEM,
                 f"{len(broken)} installed entr{'y' if len(broken) == 1 else 'ies'} point at "
                 "something gone: " + "; ".join(b.line() for b in broken[:3]),
                 "re-run " + " and ".join(f"`aletheia install {h}`" for h in hosts)
                 + " to point them at this install", data)


def check_disk() -> Check:
    home = paths.home_dir()
    try:
        vfs = os.statvfs(home)
    except OSError as exc:
        return Check("disk", WARN, f"free space unknown: {exc}")
    free = vfs.f_bavail * vfs.f_frsize
    total = vfs.f_blocks * vfs.f_frsize
    data = {"free_bytes": free, "total_bytes": total}
    summary = f"{_size(free)} free of {_size(total)} on the disk holding {home}"
    # Absolute floors, scaled down for a small filesystem (a 4 MB one is not "full" at 3 MB).
    if free < min(DISK_PROBLEM_BYTES, total // 20):
        return Check("disk", PROBLEM, summary + (" — the disk is full" if free == 0 else ""),
                     "free space: hooks then write into the spool's reserve, and past it lose items (counted)", data)
    if free < min(DISK_WARN_BYTES, total // 10):
        return Check("disk", WARN, summary, "free space soon: the store cannot grow much", data)
    return Check("disk", OK, summary, data=data)


def run(*, full: bool = False, integrity: bool = True, now: int | None = None) -> dict[str, Any]:
    """Every check; ``full`` runs SQLite's full integrity check instead of the quick one;
    ``integrity=False`` runs neither (a page's health banner: they read all of hub.db)."""
    stamp = ids.now_ms() if now is None else now
    checks: list[Check] = [check_files()]
    before = _raw_version()
    try:
        conn = db.connect()
    except (sqlite3.Error, OSError) as exc:
        conn = None
        checks.append(Check("store", PROBLEM, f"hub.db cannot be opened: {exc}",
                            f"check {paths.hub_db_file()} and its folder"))
    checks_after: list[Check] = []
    if conn is not None:
        try:
            checks.extend(check_store(conn, before, full=full, integrity=integrity))
            checks.extend(check_worker(conn, stamp))
            for section in _SECTIONS.values():
                checks_after.extend(section(conn))
        finally:
            conn.close()
    checks.extend(check_spool(stamp))
    checks.append(check_context())
    checks.append(check_disk())
    checks.append(check_host_hooks())
    checks.extend(checks_after)
    problems = [c for c in checks if c.status == PROBLEM]
    return {
        "home": paths.home_dir(),
        "ok": not problems,
        "problems": len(problems),
        "warnings": sum(1 for c in checks if c.status == WARN),
        "checks": [asdict(c) for c in checks],
        "at": ids.iso(stamp),
    }


def _raw_version() -> int:
    """The schema version before this run's connect upgrades it (0: no store yet)."""
    path = paths.hub_db_file()
    if not os.path.exists(path):
        return 0
    try:
        raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(raw.execute("PRAGMA user_version").fetchone()[0])
        finally:
            raw.close()
    except sqlite3.Error:
        return 0


def render(report: dict[str, Any]) -> str:
    """The text form: one line per check, a hint under each that is not ok, a verdict."""
    lines = [f"aletheia doctor — {report['home']}"]
    label = {OK: "ok", WARN: "warn", PROBLEM: "PROBLEM"}
    for c in report["checks"]:
        lines.append(f"  {label[c['status']]:<8} {c['name']:<11} {c['summary']}")
        if c["status"] != OK and c.get("hint"):
            lines.append(f"  {'':<8} {'':<11} → {c['hint']}")
        detail = c.get("data", {}).get("detail")  # lines a check wants shown under it
        if isinstance(detail, list):
            lines.extend(f"  {'':<8} {'':<11} {line}" for line in detail)
    n = report["problems"]
    lines.append("ok" if not n else f"{n} problem{'s' if n > 1 else ''} need{'s' if n == 1 else ''} you")
    return "\n".join(lines)


def _config_section(conn: sqlite3.Connection) -> list[Check]:
    from aletheia import config

    return [Check(**config.doctor_check(conn))]


register_section("config", _config_section)

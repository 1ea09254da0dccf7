"""``aletheia hook <tool> <event>``: the process shell around the capture pipeline
(``aletheia.capture.ingest``): read stdin, arm the watchdog, fall back to the spool, exit 0.

A watchdog ends the process after 150 ms, but first spools whatever it has not committed
(already redacted), so a hung write delays an item and never loses it; the content hash
makes a double write (committed *and* spooled) harmless.  Standard library only, and it can
run as ``python -I -S /path/to/hooks/run.py <tool> <event>`` for the fastest start.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

if __name__ == "__main__" and __package__ in (None, ""):
    # Direct ``python -I -S …/run.py``: put the folder that holds the ``aletheia`` package on
    # sys.path.  In a checkout this file is ``<repo>/hooks/run.py`` (the package is beside
    # this folder); installed, it is ``<site>/aletheia/hooks/run.py`` (one level further up).
    _up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(_up, "__init__.py")):
        _up = os.path.dirname(_up)
    sys.path.insert(0, _up)

WATCHDOG_S = 0.150
# Reading, parsing and redacting are bounded CPU work; only the database can hang.  So when the
# watchdog fires before the item is ready (a slow start on a loaded machine), it waits this
# long for it rather than exit with nothing spooled.
PREPARE_GRACE_S = 2.0
BUSY_MS = 50
STDIN_CAP = 2 * 1024 * 1024  # bytes parsed; the rest is drained and dropped (truncated, not refused)
_DRAIN_BUDGET_S = 0.030
_SALVAGE_KEYS = ("session_id", "hook_event_name", "cwd", "tool_name", "prompt", "tool_use_id")


# A read-only hook that answers the host (the block at SessionStart, per-prompt and per-file
# recall) has a budget of its own, counted from the start of the process: the 150 ms watchdog
# still spools what is owed at 150 ms, but the answer may take this long on a saturated machine
# (a block is a handful of indexed reads and one file; a prompt runs one search).  Past it, the
# SessionStart block precomputed for the project is printed as it is, and what could not be
# given is recorded (``blocks.record_undelivered``) for ``doctor`` and the dashboard.
OUTPUT_BUDGET_S = {"block": 3.0, "prompt": 2.5, "file": 1.5}
_STARTED = time.monotonic()


class _Pending:
    """What this process still owes the store; the watchdog spools it.

    Items leave the list only once they are committed or written to the spool, and spooling
    holds ``spooling``: so the watchdog never ends the process between the main thread taking
    an item and writing it (it waits for that write, then finds nothing left).

    When the event answers the host (``speaks``: block, prompt or file), the answer is written
    once under ``out_lock`` by whoever gets there first: the main thread, or the watchdog with
    the precomputed block when the main thread has not answered within the budget.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spooling = threading.Lock()
        self.items: list[dict[str, Any]] = []
        self.prepared = threading.Event()
        self.in_db = False  # past preparing: opening, replaying into or writing hub.db
        self.speaks = ""  # "block", "prompt", "file" or "" (nothing to say)
        self.out_lock = threading.Lock()
        self.out_done = threading.Event()
        self.answered = False
        self.stdout: Any = None
        self.about: dict[str, Any] = {}  # host, event, cwd, session: to find the fallback

    def answer(self, text: str) -> bool:
        """Write the host's answer unless one was written already; True when this one was."""
        with self.out_lock:
            if self.answered or self.stdout is None:
                return False
            if text:
                self.stdout.write(text)
                self.stdout.flush()
            self.answered = True
            return True

    def owe(self, items: list[dict[str, Any]]) -> None:
        """The capture pipeline's ledger: these prepared, redacted items are owed."""
        with self.lock:
            self.items.extend(items)
        self.prepared.set()

    def paid(self) -> None:
        with self.lock:
            self.items = []

    def spool(self, *, lock_wait_s: float, why: str, wait_for_other_s: float = 1.0) -> None:
        if not self.spooling.acquire(timeout=wait_for_other_s):
            return
        try:
            with self.lock:
                items = list(self.items)
            for item in items:
                item["why"] = why  # what made it spool: doctor and the lock bench count these
            _spool_items(items, lock_wait_s=lock_wait_s)
            with self.lock:
                self.items = [i for i in self.items if all(i is not done for done in items)]
        finally:
            self.spooling.release()


def _spool_items(items: list[dict[str, Any]], *, lock_wait_s: float | None) -> None:
    from aletheia import spool

    for item in items:
        with contextlib.suppress(Exception):
            spool.append(item, lock_wait_s=lock_wait_s)


def _watchdog(pending: _Pending) -> None:
    pending.prepared.wait(PREPARE_GRACE_S)
    # Past the budget while waiting on hub.db (a lock, a slow disk) or before reaching it (a
    # slow start on a busy CPU): the lock bench tells the two apart.
    pending.spool(lock_wait_s=0.02, why="watchdog-db" if pending.in_db else "watchdog")
    if pending.speaks:
        left = OUTPUT_BUDGET_S[pending.speaks] - (time.monotonic() - _STARTED)
        if not pending.out_done.wait(max(0.0, left)):
            with contextlib.suppress(Exception):
                _fallback(pending, "no answer within the hook's budget")
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(0)


def _fallback(pending: _Pending, reason: str) -> None:
    """The main thread could not answer: print the precomputed block (SessionStart), and
    record what the agent did not get."""
    from aletheia import blocks, context
    from aletheia.project import resolve_project

    about = pending.about
    host, event = about.get("host") or "", about.get("event") or ""
    project = about.get("project")
    if project is None and about.get("cwd"):
        project = resolve_project(about["cwd"])
    if pending.speaks == "block" and project and not context.opted_out():
        record = blocks.load(project, host)
        block = str(record["text"]) if record is not None else ""
        if block and pending.answer(context.host_form(host, "SessionStart", block)):
            blocks.record_injection(about.get("session"), kind="block", project=project,
                                    host=host, text=block, ids=context.listed_ids(block))
            return
    if not pending.answered and pending.speaks in ("block", "prompt"):
        pending.answer("")  # nothing from here on: the main thread must not print late
        blocks.record_undelivered(event=event, project=project, host=host,
                                  session_id=about.get("session"), reason=reason)


def read_stdin(stream: Any, cap: int = STDIN_CAP) -> tuple[bytes, bool]:
    """Read at most ``cap`` bytes; drain (briefly) and drop the rest.  Returns (data, truncated)."""
    data = stream.read(cap + 1)
    if len(data) <= cap:
        return data, False
    deadline = time.monotonic() + _DRAIN_BUDGET_S
    while time.monotonic() < deadline and stream.read(1 << 20):
        pass
    return data[:cap], True


def parse_payload(data: bytes, truncated: bool) -> dict[str, Any] | None:
    text = data.decode("utf-8", "replace")
    if not truncated:
        try:
            payload = json.loads(text)
        except ValueError:
            return None
        return payload if isinstance(payload, dict) else None
    # A huge payload: keep what identifies the event and the head of its content.
    salvaged: dict[str, Any] = {}
    head = text[:65536]
    for key in _SALVAGE_KEYS:
        m = re.search(r'"' + key + r'"\s*:\s*"((?:[^"\\]|\\.){0,4000})"', head)
        if m:
            try:
                salvaged[key] = json.loads(f'"{m.group(1)}"')
            except ValueError:
                continue
    if not salvaged:
        return None
    salvaged["tool_response"] = f"[payload truncated at {len(data)} bytes]\n{text[:200_000]}"
    salvaged.pop("prompt", None) if "tool_name" in salvaged else None
    return salvaged


def _hang_if_asked(conn: Any) -> None:
    # Fault injection for tests: make every SQLite step hang once the store is open.
    from aletheia import config

    if config.env("ALETHEIA_HOOK_FAULT") == "hang-write":

        def stall() -> int:
            time.sleep(5)
            return 0

        conn.set_progress_handler(stall, 1)


def _here() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # deleted under us: only an event with an absolute cwd is kept
        return None


def run(
    host: str, event: str, stdin: Any, stdout: Any, pending: _Pending, *, close: bool = True
) -> None:
    """Capture one event through the capture pipeline.  The hook process passes
    ``close=False``: closing the last connection checkpoints the WAL (~3 ms), which the next
    writer's autocheckpoint does anyway."""
    from aletheia.regex_cache import importing

    with importing("capture"):  # (the write path's module-level patterns: ~7 ms a process)
        from aletheia import db, paths
        from aletheia.capture.adapters import adapt
        from aletheia.capture.ingest import ingest, speaks

    data, truncated = read_stdin(stdin)
    payload = parse_payload(data, truncated)
    if payload is None:
        return
    opened: list[Any] = []

    def connect() -> Any:
        pending.in_db = True
        paths.ensure_home()
        conn = db.connect(busy_ms=BUSY_MS, upgrade=False)  # SchemaBehind: spooled
        opened.append(conn)
        _hang_if_asked(conn)
        return conn

    ev = adapt(host, event, payload)
    pending.stdout = stdout
    pending.speaks = speaks(ev)
    pending.about = {"host": host, "event": event, "cwd": ev.cwd or _here(),
                     "session": ev.session_id}
    try:
        summary = ingest(connect, [ev], source="hook", cwd=_here(), placeholder=True,
                         context="host", replay_spool=True, ledger=pending)
        out = summary.last.context if summary.last is not None else None
        if summary.last is not None:
            pending.about["project"] = summary.last.project
        if out:
            pending.answer(out)
    except Exception as exc:
        if pending.speaks:  # the store could not answer: the precomputed block, or a record
            with contextlib.suppress(Exception):
                _fallback(pending, f"{type(exc).__name__}: {exc}")
        raise
    finally:
        pending.out_done.set()
        if close:
            for conn in opened:
                conn.close()


def _why(exc: BaseException) -> str:
    """A short word for why an item was spooled (``locked`` is the one the lock bench counts)."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "locked"
    if "full" in text or "no space" in text:
        return "disk-full"
    if "disk i/o" in text:
        return "disk-io"  # what SQLite says when the disk fills up under its WAL
    if "readonly" in text or "read-only" in text:
        return "read-only"
    if type(exc).__name__ == "SchemaBehind":
        return "schema-upgrade"
    return type(exc).__name__[:40]


def main(argv: list[str] | None = None) -> None:
    """Entry point; never returns normally and never exits non-zero."""
    pending = _Pending()
    timer: threading.Timer | None = None
    try:
        args = sys.argv[1:] if argv is None else argv
        timer = threading.Timer(WATCHDOG_S, _watchdog, args=(pending,))
        timer.daemon = True
        timer.start()
        if len(args) >= 2:
            try:
                run(args[0], args[1], sys.stdin.buffer, sys.stdout, pending, close=False)
            finally:
                pending.prepared.set()
    except BaseException as exc:
        # Locked, full disk, bad input… whatever it was, keep what we have and exit 0.
        with contextlib.suppress(BaseException):
            pending.spool(lock_wait_s=0.05, why=_why(exc))
    finally:
        if timer is not None:
            timer.cancel()
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()

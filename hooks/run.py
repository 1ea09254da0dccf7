"""``aletheia hook <tool> <event>``: read the host's JSON, capture it, always exit 0.

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


class _Pending:
    """What this process still owes the store; the watchdog spools it.

    Items leave the list only once they are committed or written to the spool, and spooling
    holds ``spooling``: so the watchdog never ends the process between the main thread taking
    an item and writing it (it waits for that write, then finds nothing left).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spooling = threading.Lock()
        self.items: list[dict[str, Any]] = []
        self.prepared = threading.Event()

    def add(self, item: dict[str, Any]) -> None:
        with self.lock:
            self.items.append(item)

    def committed(self) -> None:
        with self.lock:
            self.items = []

    def spool(self, *, lock_wait_s: float, wait_for_other_s: float = 1.0) -> None:
        if not self.spooling.acquire(timeout=wait_for_other_s):
            return
        try:
            with self.lock:
                items = list(self.items)
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
    pending.spool(lock_wait_s=0.02)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(0)


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
    # Fault injection for tests: make the SQLite write itself hang mid-transaction.
    if os.environ.get("ALETHEIA_HOOK_FAULT") == "hang-write":

        def stall() -> int:
            time.sleep(5)
            return 0

        conn.set_progress_handler(stall, 1)


def run(
    host: str, event: str, stdin: Any, stdout: Any, pending: _Pending, *, close: bool = True
) -> None:
    """Capture one event.  The hook process passes ``close=False``: closing the last connection
    checkpoints the WAL (~3 ms), which the next writer's autocheckpoint does anyway."""
    from aletheia import db, paths, settings, spool, store
    from aletheia.hooks.adapters import IGNORE, RESPONSE_STOP, SESSION_END, SESSION_START, adapt
    from aletheia.hooks.capture import to_memory
    from aletheia.project import excluded_patterns, is_excluded, resolve_project

    data, truncated = read_stdin(stdin)
    payload = parse_payload(data, truncated)
    if payload is None:
        return
    ev = adapt(host, event, payload)
    if ev.type == IGNORE:
        return
    project = resolve_project(ev.cwd or os.getcwd())
    patterns = excluded_patterns()
    if is_excluded(project, patterns):
        return

    items: list[dict[str, Any]] = []
    memory = to_memory(ev, project)
    if memory is not None:
        try:
            row = store.prepare(memory)
        except Exception:
            # Never store what could not be redacted, but keep the fact that the event happened.
            row = store.prepare(store.MemoryIn(
                project=project, kind=memory.kind, session_id=memory.session_id, tool=host,
                source="hook", event_key=memory.event_key,
                title=f"{memory.kind} event (content not kept: it could not be processed)",
            ))
        items.append({"type": "memory", "row": row})
    if ev.type in (RESPONSE_STOP, SESSION_END) and ev.session_id:
        items.append({"type": "stop", "session_id": ev.session_id, "project": project,
                      "tool": host, "at": int(time.time() * 1000)})
    for item in items:
        pending.add(item)
    pending.prepared.set()

    paths.ensure_home()
    conn = db.connect(busy_ms=BUSY_MS, upgrade=False)  # SchemaBehind: spooled
    try:
        if is_excluded(project, excluded_patterns(extra=settings.get(conn, "excluded_projects"))):
            pending.committed()  # nothing is owed for an excluded project
            return
        if spool.pending_size() > 0:
            spool.replay(conn)
        _hang_if_asked(conn)
        rows = [i["row"] for i in items if i["type"] == "memory"]
        if rows:
            store.insert_rows(conn, rows)
        for item in items:
            if item["type"] == "stop":
                store.queue_stop(conn, item["session_id"], project, host, now=item["at"])
        pending.committed()
        if ev.type == SESSION_START:
            from aletheia.context import render_for_host

            out = render_for_host(conn, host, project, session_id=ev.session_id)
            if out:
                stdout.write(out)
                stdout.flush()
    finally:
        if close:
            conn.close()


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
    except BaseException:
        # Locked, full disk, bad input… whatever it was, keep what we have and exit 0.
        with contextlib.suppress(BaseException):
            pending.spool(lock_wait_s=0.05)
    finally:
        if timer is not None:
            timer.cancel()
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()

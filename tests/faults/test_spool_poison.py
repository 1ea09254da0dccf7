"""Poison spool lines of every kind: each is quarantined with its reason, counted, shown by
``doctor`` and ``aletheia spool``, and none stops a command or another item (nothing lost)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from aletheia import db, paths, spool, spool_quarantine, store
from aletheia.cli import cli
from aletheia.store import MemoryIn
from tests.hookproc import claude_tool, run_hook
from tests.settle import settled_count

# (name, raw line) — each one something a replay must not choke on.
POISON: list[tuple[str, bytes]] = [
    ("stop without a session (the line that bricked every command)", b'{"type":"stop","project":"x"}'),
    ("not JSON", b"not json at all"),
    ("a JSON list", b"[1, 2, 3]"),
    ("a JSON string", b'"memory"'),
    ("JSON null", b"null"),
    ("no type", b'{"row": {"project": "/p", "kind": "note", "title": "t"}}'),
    ("unknown type", b'{"type": "telemetry", "x": 1}'),
    ("memory without a row", b'{"type": "memory"}'),
    ("memory row not an object", b'{"type": "memory", "row": "title"}'),
    ("memory row title not a string", b'{"type":"memory","row":{"project":"/p","kind":"note","title":7}}'),
    ("memory row facts not a list", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","facts":{"a":1}}}'),
    ("memory row empty project", b'{"type":"memory","row":{"project":"","kind":"note","title":"t"}}'),
    ("memory row bad scope", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","scope":"world"}}'),
    ("memory row created_at 1e300", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","created_at":1e300}}'),
    ("memory row created_at 2^63", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","created_at":9223372036854775808}}'),
    ("memory row created_at negative", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","created_at":-5}}'),
    ("memory row created_at far future", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","created_at":253402300799000}}'),
    ("memory row importance NaN", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","importance":NaN}}'),
    ("memory row importance Infinity", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","importance":Infinity}}'),
    ("memory row importance 1e309", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","importance":1e309}}'),
    ("memory row importance text", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","importance":"high"}}'),
    ("memory row id not a string", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","id":12}}'),
    ("memory row empty", b'{"type":"memory","row":{"project":"/p","kind":"note"}}'),
    ("stop with a text time", b'{"type":"stop","session_id":"s","project":"/p","at":"soon"}'),
    ("stop with a huge time", b'{"type":"stop","session_id":"s","project":"/p","at":1e300}'),
    ("stop with a list session", b'{"type":"stop","session_id":["s"],"project":"/p"}'),
    ("a type this version does not know", b'{"type":"incident","at":1700000000000}'),
    ("invalid UTF-8", b'{"type":"memory","row":{"project":"/p","kind":"note","title":"\xff\xfe"}}'),
    ("deeply nested", b"[" * 100_000 + b"]" * 100_000),
]


def _good(i: int) -> bytes:
    row = store.prepare(MemoryIn(project="/p", kind="note", title=f"good {i}", narrative=f"kept {i}"))
    return spool.encode({"type": "memory", "row": row}).rstrip(b"\n")


def _stop(i: int) -> bytes:
    return spool.encode({"type": "stop", "session_id": f"s{i}", "project": "/p", "tool": "codex",
                         "at": 1_700_000_000_000 + i}).rstrip(b"\n")


def _write_spool(lines: list[bytes], *, tail: bytes = b"") -> None:
    folder = paths.spool_dir()
    paths.ensure_dir(folder)
    (folder / paths.SPOOL_NAME).write_bytes(b"".join(line + b"\n" for line in lines) + tail)


def _mixed() -> tuple[list[bytes], int, int]:
    """Good memories and stops between every poison line (and a half line at the end)."""
    lines: list[bytes] = []
    for i, (_, raw) in enumerate(POISON):
        lines += [_good(i), raw, _stop(i)]
    return lines, len(POISON), len(POISON)


def cli_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def store_ready() -> Iterator[None]:
    db.connect().close()
    yield


def test_every_poison_kind_is_quarantined_and_nothing_is_lost(store_ready: None) -> None:
    lines, goods, stops = _mixed()
    _write_spool(lines, tail=b'{"type":"memory","row":{"project":"/p","ti')  # a writer killed mid-line
    code, out = cli_run("stats", "--json")  # any command replays; none may fail
    assert code == 0, out
    conn = db.connect()
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == goods
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == stops
    conn.close()
    entries = spool_quarantine.entries()
    assert len(entries) == len(POISON) + 1  # every poison line, plus the half line
    assert spool.pending_size() == 0
    kept = {e.line for e in entries}
    assert all(raw in kept for _, raw in POISON)  # byte for byte, invalid UTF-8 included
    assert all(e.reason for e in entries)
    qfile = paths.spool_dir() / spool_quarantine.QUARANTINE_NAME
    assert stat.S_IMODE(os.stat(qfile).st_mode) == 0o600
    reasons = {e.line: e.reason for e in entries}
    assert "session_id" in reasons[POISON[0][1]]
    assert "between 0 and" in reasons[b'{"type":"memory","row":{"project":"/p","kind":"note","title":"t","created_at":1e300}}']
    assert "NaN" in reasons[POISON[17][1]]


@pytest.mark.parametrize("name,raw", POISON, ids=[n for n, _ in POISON])
def test_no_poison_line_stops_a_command(name: str, raw: bytes, store_ready: None) -> None:
    for args in (("stats",), ("search", "--all-projects", "kept"), ("save", "--project", "/p", "a note"),
                 ("context", "--project", "/p"), ("sessions",), ("jobs",), ("compress", "--json")):
        _write_spool([_good(1), raw, _stop(1)])
        code, out = cli_run(*args)
        assert code == 0, (args, out)
    assert settled_count() == 2  # the good line (once) and the note
    assert spool_quarantine.count() == 1


def test_doctor_and_spool_commands_show_and_resolve_the_quarantine(store_ready: None) -> None:
    _write_spool([_good(1), POISON[0][1], b"not json", _good(2)])
    assert cli_run("stats")[0] == 0
    code, out = cli_run("doctor")
    assert code == 1 and "PROBLEM  quarantine  2 spooled line(s)" in out, out
    assert "aletheia spool list" in out
    report = json.loads(cli_run("doctor", "--json")[1])
    quarantine = next(c for c in report["checks"] if c["name"] == "quarantine")
    assert quarantine["status"] == "problem" and quarantine["data"]["count"] == 2
    listed = json.loads(cli_run("spool", "list", "--json")[1])
    assert len(listed["quarantined"]) == 2
    ids_ = [e["id"] for e in listed["quarantined"]]
    # Retrying unchanged poison keeps it (one more try, same reason); nothing is lost.
    code, out = cli_run("spool", "retry", "--all")
    assert code == 0 and "2 quarantined again" in out
    assert {e.tries for e in spool_quarantine.entries()} == {2}
    # A line fixed by hand goes through on retry.
    fixed = spool.encode({"type": "stop", "session_id": "s-fixed", "project": "x"}).rstrip(b"\n")
    stop_entry = next(e for e in spool_quarantine.entries() if e.line == POISON[0][1])
    spool_quarantine.take([stop_entry.id])
    spool_quarantine.add(str(paths.spool_dir()), [(fixed, "fixed by hand")], source="test")
    code, out = cli_run("spool", "retry", spool_quarantine.line_id(fixed))
    assert code == 0 and "1 written" in out
    assert settled_count("SELECT count(*) FROM stop_queue WHERE session_id = 's-fixed'") == 1
    # Drop the rest, by id prefix; an unknown id is a one-line error.
    remaining = [e.id for e in spool_quarantine.entries()]
    assert remaining == [i for i in ids_ if i != stop_entry.id]
    assert cli_run("spool", "drop", "ffffffffffff")[0] == 1
    code, out = cli_run("spool", "drop", remaining[0][:8])
    assert code == 0 and "dropped 1" in out
    assert spool_quarantine.count() == 0
    code, out = cli_run("doctor")  # the replayed stop waits for a worker: that is the problem now
    assert code == 1 and "ok       quarantine  nothing quarantined" in out
    assert "PROBLEM  worker      1 session(s) wait for compression and no worker is running" in out
    assert cli_run("compress")[0] == 0
    assert cli_run("doctor")[0] == 0
    assert settled_count() == 2


def test_a_store_refusal_quarantines_only_that_line(conn: sqlite3.Connection) -> None:
    # The store itself refuses one row (a constraint of the database, not of the line's shape):
    # the others in the same batch are still written.
    conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON memory WHEN new.title = 'refused' "
                 "BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END")
    refused = spool.encode({"type": "memory", "row": store.prepare(
        MemoryIn(project="/p", kind="note", title="refused"))}).rstrip(b"\n")
    _write_spool([_good(1), refused, _good(2)])
    result = spool.replay(conn)
    assert (result.items, result.inserted, result.quarantined) == (3, 2, 1)
    assert "refused by a trigger" in spool_quarantine.entries()[0].reason


def test_an_overlong_line_is_quarantined_whole(conn: sqlite3.Connection,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "LINE_CAP", 1000)
    long_line = b'{"type":"memory","row":{"title":"' + b"x" * 5000 + b'"}}'
    _write_spool([_good(1), long_line, _good(2)])
    result = spool.replay(conn)
    assert (result.items, result.inserted, result.quarantined) == (3, 2, 1)
    assert spool_quarantine.entries()[0].line == long_line


def test_a_hook_is_not_stopped_by_poison(hook_env: dict[str, str], tmp_path: Path) -> None:
    db.connect().close()
    _write_spool([raw for _, raw in POISON] + [_good(1)])
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("h", str(tmp_path), "echo hi", "hi", "toolu_h"), hook_env)
    assert (r.code, r.stdout) == (0, "")
    assert settled_count() == 2  # the hook's own item and the good spooled one
    assert spool_quarantine.count() == len(POISON)


def test_the_append_closes_a_half_line_left_by_a_killed_writer(store_ready: None) -> None:
    _write_spool([_good(1)], tail=b'{"type":"memory","row":{"proj')
    spool.append({"type": "stop", "session_id": "after", "project": "/p"})
    raw = (paths.spool_dir() / paths.SPOOL_NAME).read_bytes()
    assert raw.endswith(b'{"proj\n' + spool.encode({"type": "stop", "session_id": "after", "project": "/p"}))
    conn = db.connect()
    result = spool.replay(conn)
    conn.close()
    assert (result.items, result.inserted, result.stops, result.quarantined) == (3, 1, 1, 1)


SHORT_WRITE = r"""
import json, os, resource, sys
from aletheia import spool, spool_reserve
folder = os.path.dirname(spool.paths.spool_file_name())
spool_reserve.ensure(folder)
spool.append({"type": "stop", "session_id": "before", "project": "/p"})
path = spool.paths.spool_file_name()
size = os.path.getsize(path)
# The kernel writes up to the limit and no further (a short write), then refuses (EFBIG).
limit = max(size + 100, spool_reserve.LOST_BYTES + 1)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    spool.append({"type": "memory", "row": {"title": "x" * (limit * 2)}})
    outcome = "written"
except spool.SpoolLost:
    outcome = "lost"
print(json.dumps({"outcome": outcome, "size_before": size, "size_after": os.path.getsize(path),
                  "lost": spool_reserve.losses()["items"], "tail": open(path, "rb").read()[-1:].decode()}))
"""


def test_a_short_write_leaves_no_half_line_and_the_loss_is_counted(hook_env: dict[str, str]) -> None:
    out = subprocess.run([sys.executable, "-c", SHORT_WRITE], env=hook_env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # The item could not fit (a per-file limit: the reserve cannot help), so it is counted as
    # lost; the spool is cut back to its last whole line, so the items before it are intact.
    assert got == {"outcome": "lost", "size_before": got["size_before"],
                   "size_after": got["size_before"], "lost": 1, "tail": "\n"}
    conn = db.connect()
    assert spool.replay(conn).stops == 1
    conn.close()

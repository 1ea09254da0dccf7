"""aletheia watch: follow transcript folders, add only what the hooks missed, resume by offset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aletheia import store
from aletheia.capture.adapters import adapt
from aletheia.capture.memory import to_memory
from aletheia.watch import Watcher

SESSION = "s-watch-1"


def _line(cwd: Path, kind: str, content: Any, ts: str, **extra: Any) -> str:
    return json.dumps({"type": kind, "sessionId": SESSION, "cwd": str(cwd), "timestamp": ts,
                       "message": {"role": kind, "content": content}, **extra}) + "\n"


def _count(conn: Any) -> int:
    return int(conn.execute("SELECT count(*) FROM memory").fetchone()[0])


def test_watch_follows_a_growing_transcript(conn: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    root = tmp_path / "projects"
    (root / "-work").mkdir(parents=True)
    path = root / "-work" / f"{SESSION}.jsonl"
    w = Watcher([("claude-code", root), ("codex", tmp_path / "no-codex")], settle_s=30)

    # The hook captured the first prompt live.
    hooked = to_memory(adapt("claude-code", "UserPromptSubmit", {
        "session_id": SESSION, "cwd": str(work), "prompt": "first prompt"}, env={}),
        str(work.resolve()))
    assert hooked is not None
    store.write_memory(conn, hooked)

    path.write_text(_line(work, "user", "first prompt", "2026-12-01T10:00:00Z")
                    + _line(work, "assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                 "input": {"command": "ls"}}],
                            "2026-12-01T10:00:01Z")
                    + '{"type": "user", "half-written')
    s1 = w.poll(conn, now=1000.0)
    assert (s1.read, s1.inserted, s1.already) == (1, 0, 1)  # the prompt: already stored

    with path.open("a") as fh:  # finish the half line: a tool result, then the answer
        fh.write(' line that was never finished"}\n')
        fh.write(_line(work, "user", [{"type": "tool_result", "tool_use_id": "t1",
                                       "content": "a.txt"}], "2026-12-01T10:00:02Z",
                       toolUseResult={"stdout": "a.txt", "stderr": ""}))
        fh.write(_line(work, "assistant", [{"type": "text", "text": "There is a.txt."}],
                       "2026-12-01T10:00:03Z"))
    s2 = w.poll(conn, now=1001.0)
    assert (s2.read, s2.inserted) == (1, 1)  # the tool event; the answer waits for the turn
    assert s2.sessions_queued == 1
    assert w.poll(conn, now=1010.0).read == 0  # quiet, but not settled yet
    s3 = w.poll(conn, now=1040.0)  # settled: the turn's last answer is final
    assert (s3.read, s3.inserted) == (1, 1)
    kinds = sorted(r[0] for r in conn.execute("SELECT kind FROM memory"))
    assert kinds == ["prompt", "response", "tool_event"]

    # A new watcher (a restart) resumes from the saved offsets: nothing is added twice.
    again = Watcher([("claude-code", root)], settle_s=0)
    assert again.poll(conn, now=2000.0).inserted == 0
    with path.open("a") as fh:
        fh.write(_line(work, "user", "second prompt", "2026-12-01T11:00:00Z"))
    s4 = again.poll(conn, now=2001.0)
    assert (s4.read, s4.inserted) == (1, 1)
    assert _count(conn) == 4


def test_watch_starts_over_when_a_file_shrinks(conn: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    path = root / "p" / "x.jsonl"
    path.write_text(_line(work, "user", "one", "2026-12-01T10:00:00Z")
                    + _line(work, "user", "two", "2026-12-01T10:00:01Z"))
    w = Watcher([("claude-code", root)])
    assert w.poll(conn, now=1.0).inserted == 2
    path.write_text(_line(work, "user", "three", "2026-12-01T10:00:02Z"))
    assert w.poll(conn, now=2.0).inserted == 1
    assert _count(conn) == 3


def test_watch_cli_once(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from aletheia.cli import cli

    work = tmp_path / "w"
    work.mkdir()
    root = tmp_path / "projects" / "x"
    root.mkdir(parents=True)
    (root / "s.jsonl").write_text(_line(work, "user", "from the cli", "2026-12-01T10:00:00Z"))
    out = CliRunner().invoke(cli, ["watch", "--once", "--claude-dir", str(tmp_path / "projects"),
                                   "--codex-dir", str(tmp_path / "none"), "--json"],
                             catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["inserted"] == 1

"""The one capture pipeline (``aletheia.capture.ingest``), step by step, in-process."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from aletheia import db, settings, store
from aletheia.capture.adapters import adapt
from aletheia.capture.event import PROMPT, Event
from aletheia.capture.ingest import ingest
from aletheia.errors import InvalidInput


class Ledger:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def owe(self, items: list[dict[str, Any]]) -> None:
        self.calls.append(("owe", len(items)))

    def paid(self) -> None:
        self.calls.append(("paid", 0))


def _prompt(cwd: str, text: str = "make the tests pass", session: str = "s1") -> Event:
    return adapt("claude-code", "UserPromptSubmit",
                 {"session_id": session, "cwd": cwd, "prompt": text}, env={})


def test_everything_is_prepared_and_owed_before_the_store_is_opened(tmp_path: Path) -> None:
    opened: list[sqlite3.Connection] = []
    ledger = Ledger()

    def connect() -> sqlite3.Connection:
        assert ledger.calls == [("owe", 2)]  # the memory and the stop, already redacted
        opened.append(db.connect())
        return opened[0]

    stop = adapt("claude-code", "Stop", {"session_id": "s1", "cwd": str(tmp_path),
                                         "last_assistant_message": "done"}, env={})
    done = ingest(connect, [stop], source="hook", cwd=str(tmp_path), ledger=ledger)
    assert ledger.calls == [("owe", 2), ("paid", 0)]
    assert done.last is not None and done.last.stop_queued and done.last.inserted
    assert opened[0].execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 1
    opened[0].close()


def test_the_stored_exclusion_is_checked_once_the_store_is_open(conn: Any, tmp_path: Path) -> None:
    settings.put(conn, "excluded_projects", [tmp_path.name])
    ledger = Ledger()
    done = ingest(lambda: conn, [_prompt(str(tmp_path))], source="hook", cwd="/", ledger=ledger)
    assert done.last is not None and done.last.status == "excluded"
    assert (done.excluded, done.inserted) == (1, 0)
    assert ledger.calls[-1] == ("paid", 0)  # nothing is owed for an excluded project
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


def test_a_server_needs_a_project_or_an_absolute_cwd(conn: Any) -> None:
    with pytest.raises(InvalidInput, match="absolute cwd"):
        ingest(conn, [_prompt("relative/dir")], source="rest", env={})
    done = ingest(conn, [_prompt("relative/dir")], source="rest", env={}, project="given")
    assert done.last is not None and done.last.project == "given"


def test_the_host_environment_decides_the_project_override(conn: Any, tmp_path: Path) -> None:
    ev = _prompt(str(tmp_path))
    done = ingest(conn, [ev], source="rest", env={"ALETHEIA_PROJECT": "from-host"})
    assert done.last is not None and done.last.project == "from-host"


def test_content_that_cannot_be_processed(conn: Any, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    real = store.prepare
    calls = {"n": 0}

    def failing_once(m: store.MemoryIn, **kw: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise InvalidInput("no")
        return real(m, **kw)

    monkeypatch.setattr(store, "prepare", failing_once)
    strict = ingest(conn, [_prompt(str(tmp_path), "a")], source="rest", env={})
    assert strict.last is not None and (strict.last.status, strict.last.error) == ("invalid", "no")
    assert strict.invalid == 1
    calls["n"] = 0
    hook = ingest(conn, [_prompt(str(tmp_path), "b")], source="hook", cwd="/", placeholder=True)
    assert hook.inserted == 1
    title = conn.execute("SELECT title FROM memory").fetchone()[0]
    assert title == "prompt event (content not kept: it could not be processed)"


def test_imports_queue_each_session_that_got_a_new_row_once(conn: Any, tmp_path: Path) -> None:
    events = [Event(PROMPT, "claude-code", session_id=s, cwd=str(tmp_path), prompt=f"p {i}", at=i)
              for i, s in enumerate(["a", "a", "b"], 1)]
    done = ingest(conn, events, source="import:x", cwd="/", stops=False, queue_touched=True)
    assert (done.inserted, done.sessions_queued) == (3, 2)
    again = ingest(conn, events, source="import:x", cwd="/", stops=False, queue_touched=True)
    assert (again.already, again.sessions_queued) == (3, 0)
    times = [r[0] for r in conn.execute("SELECT created_at FROM memory ORDER BY created_at")]
    assert times == [1, 2, 3]


def test_ignored_events_touch_nothing(tmp_path: Path) -> None:
    def connect() -> sqlite3.Connection:
        raise AssertionError("an ignored event must not open the store")

    ev = adapt("claude-code", "Notification", {"cwd": str(tmp_path)}, env={})
    done = ingest(connect, [ev], source="hook", cwd="/", context="host")
    assert done.last is not None and done.last.status == "ignored"


def test_a_prompt_gets_its_block_in_the_host_form_and_it_is_noted(conn: Any, tmp_path: Path) -> None:
    """In-process, the path the UserPromptSubmit hook takes: the per-prompt block comes back in
    Claude Code's JSON form and is noted for the session (no name the branch needs is left
    unbound: the hook would swallow that error and print nothing)."""
    from aletheia import blocks

    earlier = [_prompt(str(tmp_path), "the release checklist has five steps: tag, build, sign, upload, "
                                      "announce", session="s0")]
    ingest(conn, earlier, source="hook", cwd="/")
    done = ingest(conn, [_prompt(str(tmp_path), "what is on the release checklist", session="s1")],
                  source="hook", cwd="/", context="host")
    assert done.last is not None and done.last.status == "ok"
    form = json.loads(done.last.context)
    assert form["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "five steps" in form["hookSpecificOutput"]["additionalContext"]
    assert [r["kind"] for r in blocks.session_log("s1")] == ["prompt"]

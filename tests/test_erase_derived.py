"""Erase reaches everything derived, and nothing brings the erased back.

A Claude Code session is imported from its transcript in two halves (the host appends to the
file), compressed after each (so the session has facts, a live summary and a superseded one,
and the project a summary), then erased.  Its made-up words must then be absent from search,
the context block, the facts and the bytes of every file in the data directory; re-importing
the same transcript, replaying a spooled copy and importing a bundle made before the erase
add nothing; the receipt verifies until a copy is planted back.
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia import db, paths, receipts, spool, spool_quarantine, store
from aletheia.cli import cli

SESSION = "5c1e0b7a-2f4d-4c1e-9d3a-7b2e6f1a9c40"
KEEP_SESSION = "0d9f3e21-8c47-4b6a-a1f0-3e5d7c9b2a18"


def _word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(12))


def run(*args: str, code: int = 0) -> str:
    """The command's standard output (progress lines go to stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout


class Transcript:
    """A Claude Code transcript (the 2.1.x line shapes the importer reads), written as the host
    writes it: appended to as the session goes on."""

    def __init__(self, path: Path, cwd: Path, session: str) -> None:
        self.path, self.cwd, self.session = path, cwd, session
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _base(self) -> dict[str, Any]:
        self.n += 1
        return {"sessionId": self.session, "cwd": str(self.cwd), "version": "2.1.197",
                "isSidechain": False, "timestamp": f"2026-11-20T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"}

    def prompt(self, text: str) -> None:
        self.lines.append({**self._base(), "type": "user",
                           "message": {"role": "user", "content": text}})

    def bash(self, command: str, stdout: str, *, error: bool = False) -> None:
        tid = f"toolu_{self.session[:4]}_{self.n}"
        self.lines.append({**self._base(), "type": "assistant", "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                                              "input": {"command": command}}]}})
        self.lines.append({**self._base(), "type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": stdout, "is_error": error}]},
            "toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": False}})

    def answer(self, text: str) -> None:
        self.lines.append({**self._base(), "type": "assistant",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})

    def flush(self) -> None:
        self.path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def _all_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def _rows(conn: sqlite3.Connection, sql: str, *args: Any) -> list[Any]:
    return [r[0] for r in conn.execute(sql, args)]


@pytest.fixture
def world(tmp_path: Path, aletheia_home: Path) -> dict[str, Any]:
    rng = random.Random(2026)
    secret = [_word(rng) for _ in range(4)]
    keep = _word(rng)
    work = tmp_path / "shop"
    work.mkdir()
    (work / ".git").mkdir()  # a repository root: the project is this directory
    root = tmp_path / "projects" / "-shop"
    root.mkdir(parents=True)

    t = Transcript(root / f"{SESSION}.jsonl", work, SESSION)
    t.prompt(f"The uploads go through the {secret[0]} bucket, never the default one; "
             f"the retry budget is the {secret[1]} setting.")
    t.bash("pytest -q tests/test_upload.py",
           f"FAILED tests/test_upload.py::test_retry - KeyError: '{secret[2]}'\n1 failed in 0.12s",
           error=True)
    t.answer(f"The {secret[2]} key was missing from the settings; I added it next to {secret[1]}.")
    t.bash("pytest -q tests/test_upload.py", "3 passed in 0.10s")
    t.flush()
    other = Transcript(root / f"{KEEP_SESSION}.jsonl", work, KEEP_SESSION)
    other.prompt(f"Rename the {keep} helper in the billing module and keep its tests green.")
    other.bash("pytest -q tests/test_billing.py", "5 passed in 0.20s")
    other.answer(f"Renamed {keep}; the billing tests pass.")
    other.flush()

    run("import", "transcripts", str(root.parent))
    run("compress")
    # The host appends to the transcript as the session goes on; a later pass imports the
    # rest and the session's first summary is superseded by a new one.
    t.prompt(f"Also document the {secret[3]} flag in the README for the uploader.")
    t.bash("git diff --stat", f" README.md | 4 ++++ ({secret[3]})\n 1 file changed, 4 insertions(+)")
    t.answer(f"Documented {secret[3]} in the README.")
    t.flush()
    run("import", "transcripts", str(root.parent))
    run("compress")
    bundle = tmp_path / "before.jsonl"
    run("export", "--all", "-o", str(bundle))
    return {"secret": secret, "keep": keep, "root": root.parent, "work": work, "bundle": bundle,
            "transcript": t}


def test_erase_a_session_reaches_everything_derived(world: dict[str, Any], aletheia_home: Path) -> None:
    secret, keep, work = world["secret"], world["keep"], world["work"]
    conn = db.connect()
    try:
        # The test means something only if the secret words had spread into derived rows.
        derived = _rows(conn, "SELECT narrative || title FROM memory WHERE source = 'worker'")
        assert any(secret[0] in text for text in derived)
        assert len(_rows(conn, "SELECT id FROM memory WHERE kind = 'summary' AND session_id = ? "
                               "AND dismissed_at IS NOT NULL", SESSION)) >= 1  # superseded
        assert any(secret[2] in text for text in _rows(conn, "SELECT text FROM fact"))
        # SessionStart reads a block precomputed per project: one quoting the session exists.
        from aletheia import blocks

        precomputed = blocks.current(conn, str(work.resolve()), "claude-code")
        assert any(word in precomputed for word in secret)
        assert blocks.load(str(work.resolve()), "claude-code") is not None
    finally:
        conn.close()

    receipt = json.loads(run("erase", "--session", SESSION, "--yes", "--json"))
    counts = receipt["body"]["counts"]
    assert counts["memories"] >= 8 and counts["derived"] >= 3 and counts["facts"] >= 1

    for word in secret:
        assert json.loads(run("search", "--all-projects", "--json", word)) == []
        assert word not in run("facts", "--all-projects", "--status", "all", "--json")
    block = run("context", "--project", str(work.resolve()))
    assert keep in block or "Project summary" in block
    conn = db.connect()
    try:
        facts = " ".join(_rows(conn, "SELECT text FROM fact"))
        texts = " ".join(_rows(conn, "SELECT coalesce(title,'') || coalesce(narrative,'') || "
                                     "coalesce(facts,'') FROM memory"))
        sessions = " ".join(str(r) for r in _rows(conn, "SELECT first_request FROM session"))
        assert keep in texts
        for word in secret:
            assert word not in facts and word not in texts and word not in sessions
            assert word not in block
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    blob = _all_bytes(aletheia_home)
    for word in secret:
        assert word.encode() not in blob, word


def test_nothing_brings_the_erased_session_back(world: dict[str, Any], aletheia_home: Path) -> None:
    secret = world["secret"]
    receipt = json.loads(run("erase", "--session", SESSION, "--yes", "--json"))
    conn = db.connect()
    try:
        before = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    finally:
        conn.close()

    # The same transcript again (watch and `import transcripts` read the host's own log).
    out = json.loads(run("import", "transcripts", "--json", str(world["root"])))
    assert out["inserted"] == 0
    # A bundle exported before the erase.
    run("import", "bundle", str(world["bundle"]))
    # A copy a hook spooled, replayed after the erase.
    project = str(world["work"].resolve())
    row = store.prepare(store.MemoryIn(project=project, kind="prompt", session_id=SESSION,
                                       tool="claude-code", source="hook",
                                       title=f"late event mentioning {secret[0]} uploads bucket"))
    spool.append({"type": "memory", "row": row})
    conn = db.connect()
    try:
        spool.replay(conn)
        assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == before
        verdict = receipts.verify(receipt, conn=conn)
        assert verdict["valid"] is True, verdict
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    run("compress")
    blob = _all_bytes(aletheia_home)
    for word in secret:
        assert word.encode() not in blob, word
    assert json.loads(run("receipts", "verify", "--json", receipt["id"]))["valid"] is True


def test_verify_fails_when_a_copy_is_planted_back(world: dict[str, Any], tmp_path: Path) -> None:
    secret = world["secret"]
    receipt = json.loads(run("erase", "--session", SESSION, "--yes", "--json"))
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(receipt))
    assert json.loads(run("receipts", "verify", "--json", str(path)))["valid"] is True
    # A new note that quotes eight words of the erased prompt (not the same text, so no
    # tombstone stops it): the receipt no longer verifies.
    project = str(world["work"].resolve())
    run("save", "--project", project,
        f"copied: the uploads go through the {secret[0]} bucket, never the default one")
    verdict = json.loads(run("receipts", "verify", "--json", str(path), code=1))
    assert verdict["valid"] is False and verdict["still_erased"] is False
    assert any("quote the erased text" in p for p in verdict["problems"])


def test_erase_drops_quarantined_spool_lines_of_what_it_erased(world: dict[str, Any],
                                                                aletheia_home: Path) -> None:
    """A hook's spooled line that a replay could not write stays in the quarantine byte for
    byte (``aletheia spool retry`` would bring it back): one of the erased session, or quoting
    its text, goes with the erase; one of another session stays."""
    secret, keep = world["secret"], world["keep"]
    project = str(world["work"].resolve())
    folder = str(paths.spool_dir())
    paths.ensure_dir(folder)

    def line(session: str, title: str) -> bytes:
        row = store.prepare(store.MemoryIn(project=project, kind="prompt", session_id=session,
                                           tool="claude-code", source="hook", title=title))
        return spool.encode({"type": "memory", "row": row})

    spool_quarantine.add(folder, [
        (line(SESSION, f"retry of the upload through {secret[0]}"), "database is locked"),
        (line("7a0c2e11-0000-4000-8000-000000000001",
              f"The uploads go through the {secret[0]} bucket, never the default one"), "bad row"),
        (line(KEEP_SESSION, f"Rename the {keep} helper in the billing module"), "bad row"),
    ], source="spool.jsonl")
    assert len(spool_quarantine.entries(folder)) == 3

    run("erase", "--session", SESSION, "--yes", "--json")
    left = b" ".join(e.line for e in spool_quarantine.entries(folder))
    assert keep.encode() in left
    blob = _all_bytes(aletheia_home)
    for word in secret:
        assert word.encode() not in blob, word


def test_erase_leaves_no_copy_the_hooks_made(tmp_path: Path, aletheia_home: Path,
                                             hook_env: dict[str, str]) -> None:
    """Through the real hooks: a session captured (prompt, a failing test run, an edit), then
    compressed; a later session is given it at SessionStart, per prompt and per file (blocks,
    injection logs). After erasing the first session its words are in no file of the data
    directory, and the later session's blocks no longer carry them."""
    from tests.hookproc import claude_tool, run_hook

    rng = random.Random(2028)
    secret = [_word(rng) for _ in range(3)]
    work = tmp_path / "shop"
    (work / "src").mkdir(parents=True)
    (work / ".git").mkdir()
    target = str(work / "src" / "upload.py")
    cwd = str(work)

    def hook(event: str, payload: dict[str, Any]) -> str:
        r = run_hook("claude-code", event, {"hook_event_name": event, "cwd": cwd, **payload}, hook_env)
        assert r.code == 0, r.stderr
        return r.stdout

    hook("SessionStart", {"session_id": SESSION, "source": "startup"})
    hook("UserPromptSubmit", {"session_id": SESSION,
                              "prompt": f"Uploads must go through the {secret[0]} bucket in src/upload.py"})
    hook("PostToolUse", claude_tool(SESSION, cwd, "pytest -q tests/test_upload.py",
                                    f"FAILED tests/test_upload.py::test_bucket - KeyError: '{secret[1]}'", "toolu_1"))
    hook("PostToolUse", {"session_id": SESSION, "tool_name": "Edit", "tool_use_id": "toolu_2",
                         "tool_input": {"file_path": target, "old_string": "BUCKET = 'default'",
                                        "new_string": f"BUCKET = '{secret[0]}'  # {secret[2]}"},
                         "tool_response": {"filePath": target}})
    hook("Stop", {"session_id": SESSION})
    run("compress")

    later = "9b8a7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
    given = hook("SessionStart", {"session_id": later, "source": "startup"})
    given += hook("UserPromptSubmit", {"session_id": later, "prompt": "which bucket do uploads go through?"})
    given += hook("PreToolUse", {"session_id": later, "tool_name": "Read", "tool_use_id": "toolu_3",
                                 "tool_input": {"file_path": target}})
    assert any(word in given for word in secret)  # the later session was given the first one

    run("erase", "--session", SESSION, "--yes", "--json")
    again = hook("SessionStart", {"session_id": "1c2d3e4f-0000-4000-8000-00000000000a", "source": "startup"})
    again += hook("UserPromptSubmit", {"session_id": later, "prompt": "which bucket do uploads go through?"})
    assert not any(word in again for word in secret)
    blob = _all_bytes(aletheia_home)
    for word in secret:
        assert word.encode() not in blob, word

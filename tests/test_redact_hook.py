"""Every family of the redaction corpus through real hook processes, as Claude Code runs them:
the secrets in a PostToolUse's command (its first line is the title) and output, and in a
UserPromptSubmit's prompt (the title again, and the session's first request). After the spool
is replayed, the bytes of every file in the data directory (hub.db, its WAL and SHM, queue.db,
the spool, logs) hold no 8-character fragment of any secret. Then the cut: a key block that
straddles where a long output is cut, and metadata that is no id."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from aletheia import db, paths, spool, store
from tests.hookproc import claude_tool, run_hook
from tests.redact_corpus import FRAGMENT, Case, Fake, build, leak

CORPUS = build()
FAMILIES = sorted({c.family for c in CORPUS if c.positive})

pytestmark = pytest.mark.slow


def _sample(family: str, n: int = 12) -> list[Case]:
    """Up to n cases of a family, spread over its kinds (deterministic)."""
    cases = [c for c in CORPUS if c.family == family and c.positive]
    by_kind: dict[str, list[Case]] = {}
    for c in cases:
        by_kind.setdefault(c.kind, []).append(c)
    out: list[Case] = []
    while len(out) < n and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(out) < n:
                out.append(by_kind[kind].pop(0))
    return out


def _replayed() -> sqlite3.Connection:
    """The store as a reader finds it: a hook past its watchdog (a busy machine) spooled."""
    c = db.connect()
    spool.replay(c)
    return c


def _data_bytes() -> str:
    """Every file under the data directory, as one string (latin-1 keeps every byte)."""
    blob = bytearray()
    for p in sorted(paths.home().rglob("*")):
        if p.is_file():
            blob += p.read_bytes()
    return blob.decode("latin-1")


def _leaks(cases: list[Case], blob: str) -> list[str]:
    out = []
    for case in cases:
        fragment = leak(case, blob)
        if fragment is not None:
            out.append(f"{case.id}: {fragment!r}")
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_family_through_the_claude_code_hook(family: str, hook_env: dict[str, str],
                                             tmp_path: Path) -> None:
    cwd = tmp_path / "work" / family
    cwd.mkdir(parents=True)
    cases = _sample(family)
    in_command = cases[8:10] or cases[:1]
    in_output = cases[:8]
    in_prompt = cases[10:12] or cases[1:2] or cases[:1]
    # The command's first line is the title; the prompt's beginning is the title and the
    # session's first request.
    command = "\n".join(c.text for c in in_command)
    output = "\n\n".join(c.text for c in in_output)
    prompt = "\n\n".join(c.text for c in in_prompt)
    session = f"s-{family}"
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool(session, str(cwd), command, output, f"toolu_{family}"), hook_env)
    assert r.code == 0, r.stderr
    r = run_hook("claude-code", "UserPromptSubmit",
                 {"session_id": session, "cwd": str(cwd), "transcript_path": "/dev/null",
                  "hook_event_name": "UserPromptSubmit", "prompt": prompt}, hook_env)
    assert r.code == 0, r.stderr
    c = _replayed()
    try:
        rows = c.execute("SELECT kind, title FROM memory WHERE session_id = ?", (session,)).fetchall()
    finally:
        c.close()
    assert sorted(r[0] for r in rows) == ["prompt", "tool_event"], "both events are stored"
    assert all(r[1] for r in rows)
    assert not _leaks(cases, _data_bytes())


def _pgp_block(f: Fake) -> tuple[str, list[str]]:
    body = f.pgp_body() + "\n" + f.pgp_body()  # a key and a subkey: ~100 lines
    lines = body.split("\n")
    return ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + body + "\n-----END PGP PRIVATE KEY BLOCK-----",
            [ln for ln in lines if len(ln) >= 60])


def test_a_key_block_that_straddles_the_cut(hook_env: dict[str, str], tmp_path: Path) -> None:
    """Long output keeps its head and its tail: a key block across either cut loses nothing."""
    f = Fake(random.Random(13))
    head_block, head_lines = _pgp_block(f)
    tail_block, tail_lines = _pgp_block(f)
    filler = "".join(f"line {i}: building module {i % 97} ok\n" for i in range(3000))
    # The first block starts a little before the head cut, the second ends a little after
    # the tail cut begins: each is cut through the middle.
    cut_head = store.NARRATIVE_HEAD - 2000
    output = filler[:cut_head] + head_block + "\n" + filler[cut_head:] + tail_block + "\n" + filler[:3000]
    assert len(output) > store.NARRATIVE_HEAD + store.NARRATIVE_TAIL + 2 * 8000
    cwd = tmp_path / "app"
    cwd.mkdir()
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("cut", str(cwd), "gpg --export-secret-keys --armor", output, "toolu_cut"),
                 hook_env)
    assert r.code == 0, r.stderr
    c = _replayed()
    try:
        narrative = c.execute("SELECT narrative FROM memory WHERE session_id = 'cut'").fetchone()[0]
    finally:
        c.close()
    assert "characters cut" in narrative  # the output was cut
    blob = _data_bytes()
    leaked = [ln for ln in head_lines + tail_lines if any(ln[i : i + FRAGMENT] in blob for i in range(0, len(ln) - FRAGMENT, 4))]
    assert not leaked, f"{len(leaked)} key lines stored"


def test_a_key_pasted_into_a_prompt_is_not_in_its_title(hook_env: dict[str, str], tmp_path: Path) -> None:
    """The title is redacted before its lines are folded (folded first, the key is no longer
    recognised and its body lands in the title and the session's first request)."""
    f = Fake(random.Random(17))
    body = f.key_body("rsa")
    prompt = ("why does this key fail?\n-----BEGIN RSA PRIVATE KEY-----\n" + body
              + "\n-----END RSA PRIVATE KEY-----\n")
    cwd = tmp_path / "app"
    cwd.mkdir()
    payload = {"session_id": "k1", "cwd": str(cwd), "transcript_path": "/dev/null",
               "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    assert run_hook("claude-code", "UserPromptSubmit", payload, hook_env).code == 0
    c = _replayed()
    try:
        title = c.execute("SELECT title FROM memory WHERE session_id = 'k1'").fetchone()[0]
        first = c.execute("SELECT first_request FROM session WHERE id = 'k1'").fetchone()[0]
    finally:
        c.close()
    assert title.startswith("why does this key fail? [redacted:private_key]"), title
    assert first == title
    case = Case("pasted-key", "key_material", "title", prompt, tuple(body.split("\n")))
    assert leak(case, _data_bytes()) is None


def test_session_ids_and_hosts_that_are_no_ids(hook_env: dict[str, str], tmp_path: Path) -> None:
    """A session id that holds a secret or markup is stored as a stable stand-in (its events
    still group), never as it came."""
    f = Fake(random.Random(19))
    token = f.github()
    cwd = tmp_path / "app"
    cwd.mkdir()
    odd = f"{token}\n</aletheia-memory>"
    for use, command in (("t1", "ls"), ("t2", "pwd")):
        r = run_hook("claude-code", "PostToolUse", claude_tool(odd, str(cwd), command, "ok", use), hook_env)
        assert r.code == 0, r.stderr
    c = _replayed()
    try:
        sessions = {r[0] for r in c.execute("SELECT session_id FROM memory")}
    finally:
        c.close()
    assert len(sessions) == 1 and store.session_key(odd) in sessions
    assert token[:FRAGMENT] not in _data_bytes() and "</aletheia-memory>" not in _data_bytes()


def test_a_printed_secret_through_the_claude_code_hook(hook_env: dict[str, str], tmp_path: Path) -> None:
    """A command whose output is a secret (its output alone is one random word, so only the
    stored narrative, command and output together, shows what it is): no file of the data
    directory holds it after the hook."""
    rng = random.Random(71)
    secrets = []
    cwd = tmp_path / "app"
    cwd.mkdir()
    for i, command in enumerate(("aws configure get aws_secret_access_key", "vault kv get -field=password secret/db",
                                 'echo "$API_TOKEN"', "gcloud auth print-access-token")):
        value = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") for _ in range(32))
        secrets.append(value)
        r = run_hook("claude-code", "PostToolUse", claude_tool("printed", str(cwd), command, value + "\n", f"toolu_p{i}"),
                     hook_env)
        assert r.code == 0, r.stderr
    _replayed().close()
    blob = _data_bytes()
    assert [s for s in secrets if s[:12] in blob or s[-12:] in blob] == []

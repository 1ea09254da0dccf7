"""Recall beyond the opening block, through real hook processes: per-prompt recall (the floor,
no repeats within a session, the cap, opt-outs, each host's form), per-file recall (once per
file, only when something is known), the precomputed SessionStart block, and what happens when
the store cannot answer (the precomputed copy is printed, or the miss is recorded)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from aletheia import blocks, context, db, recall, settings, store, toolpaths
from aletheia.facts import FactIn, add_facts
from aletheia.store import MemoryIn
from tests.hookproc import run_hook

T0 = 1_800_000_000_000


@pytest.fixture
def project(tmp_path: Path) -> Path:
    d = tmp_path / "work" / "shop"
    (d / ".git").mkdir(parents=True)
    return d


def seed(conn: sqlite3.Connection, p: str) -> None:
    """A project with knowledge about payments, migrations and one file."""
    add_facts(conn, [
        FactIn(project=p, kind="decision", stated=True, observed_at=T0, session_id="old",
               text="Decision: Stripe webhooks are deduplicated by event id in processed_stripe_events."),
        FactIn(project=p, kind="command", confirmed=2, observed_at=T0, session_id="old",
               subject="command:migrate", value="alembic upgrade head",
               text="Apply the migrations with `alembic upgrade head`."),
        FactIn(project=p, kind="file_role", observed_at=T0, session_id="old",
               text="`src/shop/fx.py` — Exchange rates from the FX service, cached for an hour."),
        FactIn(project=p, kind="error_fix", observed_at=T0, session_id="old",
               text="`pytest -q` failed with `ReadTimeout` in tests/test_fx.py. Fixed by editing "
                    "src/shop/fx.py (`timeout=10.0` → `timeout=3.0`); then `pytest -q` passed."),
    ])
    store.write_memory(conn, MemoryIn(project=p, kind="tool_event", session_id="old",
                                      title="Bash: $ stripe listen", created_at=T0,
                                      narrative="input: {\"command\": \"stripe listen\"}\n\noutput:\n"
                                                "Ready! Your webhook signing secret is whsec_[redacted]"))


def prompt_out(env: dict[str, str], p: Path, prompt: str, *, host: str = "claude-code",
               session: str = "s-new") -> str:
    event = "BeforeAgent" if host == "gemini" else "UserPromptSubmit"
    r = run_hook(host, event, {"session_id": session, "cwd": str(p), "prompt": prompt,
                               "hook_event_name": event}, env)
    assert r.code == 0
    return r.stdout


def text_of(stdout: str) -> str:
    if not stdout.strip():
        return ""
    if stdout.lstrip().startswith("{"):
        return str(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])
    return stdout


# --- per prompt --------------------------------------------------------------------------------


def test_a_prompt_gets_what_the_store_knows_about_it_in_each_hosts_form(
    conn: sqlite3.Connection, hook_env: dict[str, str], project: Path,
) -> None:
    seed(conn, str(project))
    ask = "how do we keep stripe webhooks from being processed twice?"
    claude = json.loads(prompt_out(hook_env, project, ask))["hookSpecificOutput"]
    assert claude["hookEventName"] == "UserPromptSubmit"
    assert "processed_stripe_events" in claude["additionalContext"]
    gemini = json.loads(prompt_out(hook_env, project, ask, host="gemini", session="g1"))
    assert gemini["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    codex = prompt_out(hook_env, project, ask, host="codex", session="x1")
    assert codex.startswith(context.OPEN_TAG) and codex.rstrip().endswith(context.CLOSE_TAG)
    for out in (claude["additionalContext"], codex):
        assert len(out.strip()) <= recall.PROMPT_CAP
    # The prompts were captured as usual.
    prompts = [r[0] for r in conn.execute("SELECT title FROM memory WHERE kind = 'prompt'")]
    assert prompts.count(ask) == 3


def test_nothing_below_the_floor(conn: sqlite3.Connection, hook_env: dict[str, str],
                                 project: Path) -> None:
    seed(conn, str(project))
    assert prompt_out(hook_env, project, "please rename the button label to Save") == ""
    assert prompt_out(hook_env, project, "ok thanks") == ""


def test_no_repeats_within_a_session(conn: sqlite3.Connection, hook_env: dict[str, str],
                                     project: Path) -> None:
    seed(conn, str(project))
    ask = "how do we keep stripe webhooks from being processed twice?"
    first = text_of(prompt_out(hook_env, project, ask, session="rep"))
    listed = context.listed_ids(first)
    assert listed
    again = text_of(prompt_out(hook_env, project, ask, session="rep"))
    assert not set(context.listed_ids(again)) & set(listed)
    # Another session is told again.
    assert set(context.listed_ids(text_of(prompt_out(hook_env, project, ask, session="other")))) & set(listed)


def test_what_the_session_block_gave_is_not_repeated(conn: sqlite3.Connection,
                                                      hook_env: dict[str, str], project: Path) -> None:
    seed(conn, str(project))
    start = run_hook("claude-code", "SessionStart", {"session_id": "b1", "cwd": str(project)}, hook_env)
    block = text_of(start.stdout)
    fact_id = conn.execute("SELECT id FROM fact WHERE text LIKE '%processed_stripe_events%'").fetchone()[0]
    assert fact_id in block
    out = text_of(prompt_out(hook_env, project, "stripe webhooks processed twice?", session="b1"))
    assert fact_id not in out


@pytest.mark.parametrize("how", ["setting", "env"])
def test_per_prompt_recall_can_be_turned_off(conn: sqlite3.Connection, hook_env: dict[str, str],
                                             project: Path, how: str) -> None:
    seed(conn, str(project))
    env = dict(hook_env)
    if how == "setting":
        settings.put(conn, "context.prompt_recall", False)
    else:
        env[context.OPT_OUT_ENV] = "off"
    assert prompt_out(env, project, "how do we keep stripe webhooks from being processed twice?") == ""


def test_the_cap_holds_whatever_matches(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0,
                            text=f"Decision {i}: the invoice export uses " + "csv columns " * 30)
                     for i in range(30)])
    text, listed = recall.prompt_block(conn, p, "how does the invoice export write csv columns?")
    assert 0 < len(text) <= recall.PROMPT_CAP and listed
    assert text.startswith(context.OPEN_TAG) and text.endswith(context.CLOSE_TAG)


# --- per file ---------------------------------------------------------------------------------


def file_out(env: dict[str, str], p: Path, path: str, *, host: str = "claude-code",
             session: str = "f1", tool: str = "Read") -> str:
    if host == "gemini":
        payload = {"session_id": session, "cwd": str(p), "tool_name": "read_file",
                   "tool_input": {"file_path": path}, "tool_response": {"llmContent": "x = 1"},
                   "hook_event_name": "AfterTool"}
        return run_hook(host, "AfterTool", payload, env).stdout
    payload = {"session_id": session, "cwd": str(p), "tool_name": tool, "hook_event_name": "PreToolUse",
               "tool_input": {"file_path": path}, "tool_use_id": "toolu_x"}
    return run_hook(host, "PreToolUse", payload, env).stdout


def test_a_known_file_gets_what_is_known_once_per_session(conn: sqlite3.Connection,
                                                          hook_env: dict[str, str], project: Path) -> None:
    seed(conn, str(project))
    target = str(project / "src" / "shop" / "fx.py")
    out = json.loads(file_out(hook_env, project, target))["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    text = out["additionalContext"]
    assert "Known about src/shop/fx.py" in text and "Exchange rates" in text and "timeout=3.0" in text
    assert len(text) <= recall.FILE_CAP
    assert file_out(hook_env, project, target, tool="Edit") == ""  # once per file per session
    assert file_out(hook_env, project, target, session="f2") != ""
    # A file nothing is known about, and a tool that is not a read or an edit: no block.
    assert file_out(hook_env, project, str(project / "README.md"), session="f3") == ""
    assert file_out(hook_env, project, target, session="f4", tool="Bash") == ""
    # Nothing was stored for a PreToolUse event.
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1


def test_gemini_gets_file_recall_after_the_tool(conn: sqlite3.Connection, hook_env: dict[str, str],
                                                project: Path) -> None:
    seed(conn, str(project))
    out = json.loads(file_out(hook_env, project, str(project / "src/shop/fx.py"), host="gemini"))
    assert out["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "Exchange rates" in out["hookSpecificOutput"]["additionalContext"]


def test_claude_post_tool_use_stays_silent(conn: sqlite3.Connection, hook_env: dict[str, str],
                                           project: Path) -> None:
    seed(conn, str(project))
    payload = {"session_id": "p1", "cwd": str(project), "tool_name": "Read",
               "tool_input": {"file_path": str(project / "src/shop/fx.py")},
               "tool_response": {"type": "text"}, "tool_use_id": "toolu_p"}
    assert run_hook("claude-code", "PostToolUse", payload, hook_env).stdout == ""


def test_file_recall_can_be_turned_off(conn: sqlite3.Connection, hook_env: dict[str, str],
                                       project: Path) -> None:
    seed(conn, str(project))
    settings.put(conn, "context.file_recall", False)
    assert file_out(hook_env, project, str(project / "src/shop/fx.py")) == ""


@pytest.mark.parametrize(("command", "path"), [
    ("cat src/shop/fx.py", "src/shop/fx.py"),
    ("sed -n '1,120p' src/shop/fx.py", "src/shop/fx.py"),
    ("sed -n -e 1,20p src/shop/fx.py", "src/shop/fx.py"),
    ("sed -i 's/10.0/3.0/' src/shop/fx.py", "src/shop/fx.py"),
    ("nl -ba src/shop/fx.py | sed -n '1,40p'", "src/shop/fx.py"),
    ("head -n 40 src/shop/fx.py", "src/shop/fx.py"),
    ("tail -20 /abs/src/shop/fx.py", "/abs/src/shop/fx.py"),
    ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/shop/fx.py\n@@\n-a\n+b\n"
     "*** End Patch\nEOF", "src/shop/fx.py"),
    ("ls src", None), ("rg timeout src", None), ("sed 's/a/b/' src/shop/fx.py", None),
    ("echo cat > x", None), ("cat", None), ("cat 'unclosed", None),
])
def test_a_shell_command_that_reads_or_patches_a_file_names_it(command: str, path: str | None) -> None:
    """Codex has no read or edit tool (it reads with sed/cat and patches with apply_patch in its
    shell): per-file recall takes the file from the command."""
    for tool, args in (("Bash", {"command": command}), ("exec_command", {"cmd": command}),
                       ("run_shell_command", {"command": command})):
        assert toolpaths.tool_path(tool, args) == path


def test_codex_gets_file_recall_before_a_shell_read_as_json(
    conn: sqlite3.Connection, hook_env: dict[str, str], project: Path,
) -> None:
    """Codex 0.171.0 ignores PreToolUse's plain stdout: its additionalContext is read from JSON."""
    seed(conn, str(project))
    base = {"session_id": "cx", "cwd": str(project), "hook_event_name": "PreToolUse",
            "tool_name": "Bash"}
    out = run_hook("codex", "PreToolUse", {**base, "tool_input": {"command": "sed -n '1,80p' src/shop/fx.py"}},
                   hook_env).stdout
    hso = json.loads(out)["hookSpecificOutput"]
    assert hso["hookEventName"] == "PreToolUse" and "Exchange rates" in hso["additionalContext"]
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/shop/fx.py\n*** End Patch\nEOF"
    assert run_hook("codex", "PreToolUse", {**base, "tool_input": {"command": patch}},
                    hook_env).stdout == ""  # once per file per session
    assert run_hook("codex", "PreToolUse", {**base, "session_id": "cy",
                                            "tool_input": {"command": "ls src"}}, hook_env).stdout == ""


@pytest.mark.parametrize("host", ["opencode", "command-code"])
def test_plugin_hosts_get_both_recalls_in_the_form_their_plugin_reads(
    conn: sqlite3.Connection, hook_env: dict[str, str], project: Path, host: str,
) -> None:
    """Our OpenCode plugin and Command Code mod hand the prompt and each finished tool call to
    the hook and pass on what it prints (OpenCode: plain text; Command Code: its JSON form)."""
    seed(conn, str(project))
    ask = "how do we keep stripe webhooks from being processed twice?"
    prompt = prompt_out(hook_env, project, ask, host=host, session=f"{host}-1")
    payload = {"session_id": f"{host}-1", "cwd": str(project), "hook_event_name": "PostToolUse",
               "tool_name": "read" if host == "opencode" else "read_file",
               "tool_input": ({"filePath": str(project / "src/shop/fx.py")} if host == "opencode"
                              else {"file_path": str(project / "src/shop/fx.py")}),
               "tool_response": "x = 1", "tool_use_id": "c1"}
    after = run_hook(host, "PostToolUse", payload, hook_env).stdout
    if host == "command-code":
        assert json.loads(prompt)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert json.loads(after)["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    else:
        assert prompt.startswith(context.OPEN_TAG) and after.startswith(context.OPEN_TAG)
    assert "processed_stripe_events" in text_of(prompt)
    assert "Exchange rates" in text_of(after)
    assert run_hook(host, "PostToolUse", {**payload, "tool_use_id": "c2"}, hook_env).stdout == ""
    # The prompt and both tool calls are stored as usual.
    titles = [r[0] for r in conn.execute("SELECT title FROM memory WHERE tool = ?", (host,))]
    assert ask in titles and sum(t.startswith(payload["tool_name"]) for t in titles) == 2


def test_file_recall_in_a_linked_worktree(conn: sqlite3.Connection, hook_env: dict[str, str],
                                          tmp_path: Path) -> None:
    """A session in a linked worktree reads the worktree's copy of a file: what is known about
    it in the main repository's project still comes."""
    repo, tree = tmp_path / "shop", tmp_path / "shop-feature"
    repo.mkdir()
    git = {"env": {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t",
                   "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                   "GIT_COMMITTER_EMAIL": "t@example.invalid"}, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], **git)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "init"], **git)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(tree)], **git)  # type: ignore[call-overload]
    seed(conn, str(repo.resolve()))
    out = file_out(hook_env, tree, str(tree / "src" / "shop" / "fx.py"))
    assert "Known about src/shop/fx.py" in text_of(out)


# --- the precomputed block and a store that cannot answer -------------------------------------


def test_the_block_is_precomputed_and_rebuilt_when_stale(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    seed(conn, p)
    first = blocks.current(conn, p, "claude-code")
    record = blocks.load(p, "claude-code")
    assert record is not None and record["text"] == first and record["version"] == blocks.version(conn, p)
    # Hook captures do not change the block: the copy stays current.
    store.write_memory(conn, MemoryIn(project=p, kind="tool_event", title="Bash: $ ls", session_id="old"))
    assert blocks.version(conn, p) == record["version"]
    # A new fact does: the next reader rebuilds the copy.
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, text="Decision: use uv.")])
    assert "use uv" in blocks.current(conn, p, "claude-code")
    assert "use uv" in str(blocks.load(p, "claude-code")["text"])  # type: ignore[index]


def test_the_worker_refreshes_the_block_after_a_job(conn: sqlite3.Connection, project: Path) -> None:
    from aletheia.tasks.compress import JobRunner, drain

    p = str(project)
    store.write_memories(conn, [
        MemoryIn(project=p, kind="prompt", session_id="w1", tool="claude-code",
                 title="Always use integer cents for money in this repo.",
                 narrative="Always use integer cents for money in this repo."),
    ])
    store.queue_stop(conn, "w1", p, "claude-code")
    drain(conn, JobRunner(use_provider=False))
    record = blocks.load(p, "claude-code")
    assert record is not None and "integer cents" in record["text"]
    assert record["version"] == blocks.version(conn, p)


def test_a_store_that_cannot_answer_gives_the_precomputed_block(
    conn: sqlite3.Connection, hook_env: dict[str, str], project: Path,
) -> None:
    p = str(project)
    seed(conn, p)
    blocks.current(conn, p, "claude-code")  # what the worker leaves behind
    conn.execute("PRAGMA user_version = 1")  # the store is due an upgrade: the hook must not run it
    out = run_hook("claude-code", "SessionStart", {"session_id": "z1", "cwd": p}, hook_env).stdout
    assert "processed_stripe_events" in text_of(out)
    assert blocks.undelivered() == []


def test_an_undelivered_block_is_recorded_for_doctor(conn: sqlite3.Connection,
                                                     hook_env: dict[str, str], project: Path) -> None:
    p = str(project)
    seed(conn, p)
    conn.execute("PRAGMA user_version = 1")  # no precomputed copy either this time
    assert run_hook("claude-code", "SessionStart", {"session_id": "z2", "cwd": p}, hook_env).stdout == ""
    (missed,) = blocks.undelivered()
    assert missed["event"] == "SessionStart" and missed["project"] == p and "SchemaBehind" in missed["reason"]
    check = blocks.undelivered_check()
    assert not check["ok"] and check["count"] == 1 and "not delivered" in check["message"]


def test_a_hung_store_still_gives_the_block(conn: sqlite3.Connection, hook_env: dict[str, str],
                                            project: Path) -> None:
    p = str(project)
    seed(conn, p)
    blocks.current(conn, p, "claude-code")
    env = {**hook_env, "ALETHEIA_HOOK_FAULT": "hang-write"}  # every SQLite step of the hook hangs
    r = run_hook("claude-code", "SessionStart", {"session_id": "h1", "cwd": p}, env)
    assert r.code == 0 and "processed_stripe_events" in text_of(r.stdout)


def test_injections_are_recorded_per_session(conn: sqlite3.Connection, hook_env: dict[str, str],
                                             project: Path) -> None:
    seed(conn, str(project))
    run_hook("claude-code", "SessionStart", {"session_id": "e1", "cwd": str(project)}, hook_env)
    prompt_out(hook_env, project, "how do we keep stripe webhooks from being processed twice?", session="e1")
    file_out(hook_env, project, str(project / "src/shop/fx.py"), session="e1")
    kinds = [i["kind"] for i in blocks.session_log("e1")]
    assert kinds[0] == "block" and "file" in kinds
    assert all(i["chars"] > 0 and i["project"] == str(project) for i in blocks.session_log("e1"))
    assert db  # the store module is what the hook used


# --- economics and doctor -----------------------------------------------------------------------


def test_stats_says_what_context_cost_and_whether_detail_was_fetched(
    conn: sqlite3.Connection, project: Path,
) -> None:
    from click.testing import CliRunner

    from aletheia.cli import cli

    p = str(project)
    seed(conn, p)
    blocks.record_injection("s1", kind="block", project=p, host="claude-code", text="x" * 4000,
                            ids=["A"])
    blocks.record_injection("s1", kind="prompt", project=p, host="claude-code", text="y" * 800,
                            ids=["B"])
    blocks.record_injection("s2", kind="block", project=p, host="claude-code", text="x" * 4000,
                            ids=["A"])
    runner = CliRunner()
    # The agent of the latest session fetches detail: a search, then the full memory.
    assert runner.invoke(cli, ["search", "stripe", "-p", p], catch_exceptions=False).exit_code == 0
    mid = conn.execute("SELECT id FROM memory").fetchone()[0]
    assert runner.invoke(cli, ["get", mid], catch_exceptions=False).exit_code == 0
    out = json.loads(runner.invoke(cli, ["stats", "--json"], catch_exceptions=False).output)
    row = out["context"][p]
    assert row["sessions"] == 2 and row["injections"] == {"block": 2, "prompt": 1, "file": 0}
    assert row["tokens_per_session"] == {"block": 1000.0, "prompt": 100.0, "file": 0.0, "total": 1100.0}
    # Both fetches go to the session that started last (s2): one of two sessions fetched.
    assert row["fetches"] == 2 and row["followed_by_fetch"] == 1 and row["fetch_rate"] == 0.5
    text = runner.invoke(cli, ["stats"], catch_exceptions=False).output
    assert f"context {p}:" in text and "2 sessions; tokens per session ≈ 1100" in text


def test_doctor_reports_undelivered_blocks(conn: sqlite3.Connection) -> None:
    from click.testing import CliRunner

    from aletheia.cli import cli

    blocks.record_undelivered(event="SessionStart", project="/p", host="codex", session_id="s",
                              reason="no answer within the hook's budget")
    report = json.loads(CliRunner().invoke(cli, ["doctor", "--json"], catch_exceptions=False).output)
    check = next(c for c in report["checks"] if c["name"] == "context")
    assert check["status"] == "problem" and check["data"]["count"] == 1
    assert "not delivered" in check["summary"]


def test_a_prompt_naming_a_slot_gets_its_current_fact(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    add_facts(conn, [FactIn(project=p, kind="command", confirmed=3, observed_at=T0,
                            subject="command:test", value="bun run test",
                            text="Run the tests with `bun run test`.")])
    text, listed = recall.prompt_block(conn, p, "What's the command for the unit tests?")
    assert "bun run test" in text and listed


def test_a_command_that_ran_clean_once_is_a_probe_not_an_answer(conn: sqlite3.Connection,
                                                                project: Path) -> None:
    """A command no word names (``command:ran:…``) comes for a prompt once it ran clean twice;
    run once, it is a probe, neither a slot's fact nor a hit."""
    p = str(project)
    add_facts(conn, [
        FactIn(project=p, kind="fact", confirmed=1, observed_at=T0, session_id="a",
               subject="command:ran:release.sh", value="./release.sh 1.0",
               text="Ran clean: `./release.sh 1.0`."),
        FactIn(project=p, kind="fact", confirmed=3, observed_at=T0, session_id="a",
               subject="command:ran:butler status", value="butler status fox/glass",
               text="Ran clean: `butler status fox/glass`."),
    ])
    text, _ = recall.prompt_block(conn, p, "What does release.sh do?")
    assert "release.sh 1.0" not in text
    text, listed = recall.prompt_block(conn, p, "How do I see the butler status of the channels?")
    assert "butler status fox/glass" in text and listed


def test_words_most_memories_hold_do_not_clear_the_floor(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    # Every memory names the project; one also names an unrelated thing.
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=f"shopfront note {i}",
                                         narrative=f"shopfront {'cache warmup' if i == 0 else 'misc'} {i}")
                                for i in range(40)])
    text, _ = recall.prompt_block(conn, p, "how do we deploy shopfront to kubernetes")
    assert text == ""  # "shopfront" alone is not relevance
    text, _ = recall.prompt_block(conn, p, "what does the shopfront cache warmup do")
    assert "cache warmup" in text


def test_an_identifier_in_the_prompt_finds_the_fact_that_names_it(conn: sqlite3.Connection,
                                                                   project: Path) -> None:
    p = str(project)
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=f"user note {i}",
                                         narrative=f"the current user sees page {i}") for i in range(30)])
    add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=T0,
                            text="`src/shop/auth.py` — Access tokens and the get_current_user dependency.")])
    # snake_case in the text, its words and its joined form in the prompt's words
    text, _ = recall.prompt_block(conn, p, "Where is get_current_user defined?")
    assert "src/shop/auth.py" in text
    # a camelCase part is a word too
    add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=T0,
                            text="`src/hooks/useAlerts.ts` — Polls the alert list and acknowledges optimistically.")])
    text, _ = recall.prompt_block(conn, p, "which hook polls the alerts?")
    assert "useAlerts.ts" in text


def history(conn: sqlite3.Connection, p: str, n: int = 25) -> None:
    """A store with some history: a word's absence from it means something."""
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=f"shop work {i}",
                                         narrative=f"checkout page tweak {i}: totals and the cart")
                                for i in range(n)])


def test_a_prompt_about_what_the_store_never_saw_gets_no_block(conn: sqlite3.Connection,
                                                               project: Path) -> None:
    seed(conn, str(project))
    history(conn, str(project))
    # "schema" is known, the rest never appears: nothing to say rather than near misses
    assert recall.prompt_block(conn, str(project), "Where is the GraphQL schema for the Kafka topics?") == ("", [])
    # facts alone (from a bundle, the API) count as what the project knows
    p2 = str(project.parent / "facts-only")
    add_facts(conn, [FactIn(project=p2, kind="decision", stated=True, observed_at=T0,
                            text="Decision: the invoice export writes csv with a header row.")])
    text, _ = recall.prompt_block(conn, p2, "how does the invoice export write csv?")
    assert "header row" in text


def test_a_memory_naming_a_tool_of_the_asked_kind_clears_the_floor_after_the_words(
    conn: sqlite3.Connection, project: Path,
) -> None:
    p = str(project)
    history(conn, p)
    # search finds the answer by the names it adds for "validation" (zod, valibot); the floor
    # counts them too, below what holds the prompt's own words
    store.write_memories(conn, [
        MemoryIn(project=p, kind="prompt", session_id="s1", created_at=T0,
                 title="zod is 60% of our client bundle on the order page",
                 narrative="zod is 60% of our client bundle on the order page. swap it for valibot, same rules."),
        MemoryIn(project=p, kind="note", session_id="s2", created_at=T0 + 1, title="order form hints",
                 narrative="The validation messages of the order form were replaced by inline hints."),
    ])
    text, _ = recall.prompt_block(conn, p, "Why was the validation library replaced?")
    assert "valibot" in text and "inline hints" in text
    assert text.index("inline hints") < text.index("valibot")
    # a name outside the asked kind lifts nothing
    store.write_memory(conn, MemoryIn(project=p, kind="note", session_id="s3", created_at=T0 + 2,
                                      title="bundle", narrative="vite splits the client bundle per page."))
    text, _ = recall.prompt_block(conn, p, "Why was the validation library replaced?")
    assert "vite splits" not in text


def test_an_added_name_picks_what_is_shown_of_talk_and_only_beside_the_words_of_output(
    conn: sqlite3.Connection, project: Path,
) -> None:
    p = str(project)
    history(conn, p)
    store.write_memories(conn, [
        MemoryIn(project=p, kind="response", session_id="s1", created_at=T0, title="order form",
                 narrative="The order form validation was replaced last week. The form has five fields and "
                           "one button. Zod was 60% of the client bundle, so it is valibot now."),
        MemoryIn(project=p, kind="tool_event", session_id="s2", created_at=T0 + 1,
                 title="Bash: $ pytest -q tests/test_validation.py",
                 narrative='input: {"command": "pytest -q tests/test_validation.py"}\n\noutput:\n'
                           "FAILED tests/test_validation.py::test_replaced_rules\n"
                           ".venv/lib/site-packages/zod_compat/errors.py:12: in check\n1 failed"),
    ])
    text, _ = recall.prompt_block(conn, p, "Why was the validation library replaced?")
    # said in talk, the name of a tool of the asked kind is the answer's sentence …
    assert "so it is valibot now" in text
    # … in a tool's output, a path naming one beside nothing asked is not
    assert "test_replaced_rules" in text and "zod_compat" not in text


def test_a_small_project_s_frequent_words_still_count(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    # a third of a small project's memories name its ORM: still what the prompt is about
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=f"n{i}",
                                         narrative=("drizzle tables " if i % 3 == 0 else "") + f"misc work {i}")
                                for i in range(30)])
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0,
                            text="Decision: Put the tables in packages/db/src/schema.ts with Drizzle.")])
    text, _ = recall.prompt_block(conn, p, "Where are the Drizzle tables defined?")
    assert "packages/db/src/schema.ts" in text


def test_a_tool_output_with_the_exact_value_is_found_beside_many_facts(conn: sqlite3.Connection,
                                                                       project: Path) -> None:
    p = str(project)
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0 + i,
                            text=f"Decision: stripe webhook rule {i}: the stripe client retries payments.")
                     for i in range(20)])
    store.write_memory(conn, MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T0,
                                      title="Bash: $ uv add stripe",
                                      narrative="input: {\"command\": \"uv add stripe\"}\n\noutput:\n"
                                                "Resolved 41 packages in 310ms\n + stripe==11.1.0"))
    text, _ = recall.prompt_block(conn, p, "What version of the stripe package did we install?")
    assert "11.1.0" in text and len(text) <= recall.PROMPT_CAP


def test_a_named_slot_comes_first_and_a_framing_word_names_none(conn: sqlite3.Connection,
                                                                project: Path) -> None:
    p = str(project)
    add_facts(conn, [
        FactIn(project=p, kind="command", confirmed=2, observed_at=T0, subject="command:run",
               value="bun run dev", text="Run with `bun run dev`."),
        FactIn(project=p, kind="command", confirmed=2, observed_at=T0, subject="command:e2e",
               value="bun run e2e", text="Run the end-to-end tests with `bun run e2e`."),
        FactIn(project=p, kind="command", confirmed=1, observed_at=T0, subject="command:deploy@apps/web",
               value="pnpm --filter web deploy", text="Deploy the web app with `pnpm --filter web deploy`."),
    ])
    text, _ = recall.prompt_block(conn, p, "How do I run the playwright suite?")
    assert "bun run e2e" in text and "bun run dev" not in text  # "run" frames the question
    text, _ = recall.prompt_block(conn, p, "How do I start the app locally?")
    assert "bun run dev" in text
    text, _ = recall.prompt_block(conn, p, "how do we ship the web app to production?")
    assert "pnpm --filter web deploy" in text  # a slot of a workspace package


def test_a_summary_repeating_its_answer_is_shown_once_and_a_fix_keeps_its_room(
        conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    said = "Dev and production servers now listen on port 3001 because Grafana took port 3000."
    store.write_memories(conn, [
        MemoryIn(project=p, kind="response", session_id="s1", created_at=T0, title=said[:60], narrative=said),
        MemoryIn(project=p, kind="summary", session_id="s1", created_at=T0 + 1, source="worker",
                 title="Session summary: " + said[:40], narrative="Outcome: " + said),
    ])
    text, _ = recall.prompt_block(conn, p, "why is the dev server on port 3001 and not 3000?")
    assert text.count("Grafana took port 3000") == 1
    error = "`pytest -q` failed with `sqlalchemy.exc.MissingGreenlet: " + "greenlet_spawn has not been called " * 6
    add_facts(conn, [FactIn(project=p, kind="error_fix", observed_at=T0,
                            text=error + "`. Fixed by loading the lines with selectinload() in routers/invoices.py.")])
    text, _ = recall.prompt_block(conn, p, "MissingGreenlet: greenlet_spawn has not been called — how did we fix it?")
    assert "selectinload()" in text


def test_the_prompt_being_answered_does_not_make_its_own_words_known(
        conn: sqlite3.Connection, hook_env: dict[str, str], project: Path) -> None:
    seed(conn, str(project))
    history(conn, str(project))
    # The hook stores the prompt before it answers: its words are in the store by then.
    assert prompt_out(hook_env, project, "Where is the GraphQL schema for the Kafka topics?") == ""


def test_one_slot_of_a_kind_unless_the_prompt_names_another(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    add_facts(conn, [
        FactIn(project=p, kind="command", confirmed=3, observed_at=T0 + i, subject=f"command:services:{name}",
               value=f"docker compose up -d {name}", text=f"Start the local services with `docker compose up -d {name}`.")
        for i, name in enumerate(("db", "redis", "mailpit"))])
    # (the prompt names the slot, not the facts' words: search finds none of them)
    text, _ = recall.prompt_block(conn, p, "How do I bring up the containers?")
    assert text.count("docker compose up -d") == 1
    text, _ = recall.prompt_block(conn, p, "How do I bring up the mailpit container?")
    assert "docker compose up -d mailpit" in text


def test_an_exact_value_is_the_piece_shown(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    store.write_memory(conn, MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T0,
                                      title="Bash: $ uv add stripe",
                                      narrative="input: {\"command\": \"uv add stripe\"}\n\noutput:\n"
                                                "Resolved 41 packages in 310ms\nInstalled 2 packages in 9ms\n"
                                                " + stripe==11.1.0\n + requests==2.32.3"))
    text, _ = recall.prompt_block(conn, p, "Which version of stripe do we have?")
    assert "stripe==11.1.0" in text


def test_a_slot_is_named_by_its_words_not_their_first_letters(conn: sqlite3.Connection,
                                                              project: Path) -> None:
    seed(conn, str(project))  # holds the migrate command ("schema" names its slot)
    history(conn, str(project))
    assert recall._slot_facts(conn, str(project), ["scheduled", "backups"]) == ([], set())
    assert recall.prompt_block(conn, str(project), "How are the nightly backups scheduled?") == ("", [])
    rows, naming = recall._slot_facts(conn, str(project), ["migrations"])
    assert [r["subject"] for r in rows] == ["command:migrate"] and naming == {"migrations"}


def test_a_slot_word_matches_its_own_forms_not_a_word_sharing_its_first_letters(
        conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    history(conn, p)
    add_facts(conn, [FactIn(project=p, kind="command", confirmed=2, observed_at=T0, subject="command:setup",
                            value="./scripts/bootstrap.sh", text="Set up with `./scripts/bootstrap.sh`.")])
    # "instance" and "install" share their first five letters, not a word
    assert recall._slot_facts(conn, p, ["instance", "size"]) == ([], set())
    rows, naming = recall._slot_facts(conn, p, ["installed"])
    assert [r["subject"] for r in rows] == ["command:setup"] and naming == {"installed"}


def test_a_prompt_naming_a_replaced_value_gets_what_replaced_it(conn: sqlite3.Connection,
                                                                project: Path) -> None:
    p = str(project)
    history(conn, p)
    add_facts(conn, [
        FactIn(project=p, kind="decision", stated=True, observed_at=T0, source_ids=["m-switch"],
               subject="replaced:npm", value="(replaced)", ends=True, text="`npm` was replaced."),
        FactIn(project=p, kind="decision", stated=True, observed_at=T0, source_ids=["m-switch"],
               text="Decision: Switch shop to bun for installs — why: … ci takes 70+ seconds in CI."),
    ])
    text, _ = recall.prompt_block(conn, p, "What was wrong with npm?")
    assert "70+ seconds" in text


def test_a_prompt_asking_why_gets_the_choice_said_with_its_reason(conn: sqlite3.Connection,
                                                                   project: Path) -> None:
    p = str(project)
    history(conn, p)
    # Most memories say "java": it still finds the choice about Java; the reason's words are
    # not the prompt's ("newer", "release" say nothing the fact says).
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=f"java work {i}",
                                         narrative=f"java service tweak {i}") for i in range(30)])
    add_facts(conn, [
        FactIn(project=p, kind="decision", stated=True, observed_at=T0,
               text="Decision: Let's move to Java 21 so we can turn on virtual threads."),
        FactIn(project=p, kind="decision", stated=True, observed_at=T0 + 1,
               text="Decision: Java services log as JSON."),
        FactIn(project=p, kind="convention", stated=True, observed_at=T0 + 2,
               text="Convention: Move the build to Gradle — why: the pom is a wall of XML and a "
                    "cold … build takes ages."),
    ])
    text, _ = recall.prompt_block(conn, p, "What was the reason for the newer Java release?")
    assert "virtual threads" in text and "log as JSON" not in text
    text, _ = recall.prompt_block(conn, p, "Why did the build tool change?")
    assert "wall of XML" in text
    # The same words without asking why: no reason is pulled in for them.
    text, _ = recall.prompt_block(conn, p, "Which Java release do we target?")
    assert "virtual threads" not in text


def test_a_prompt_asking_what_the_project_uses_gets_the_users_stack_list(conn: sqlite3.Connection,
                                                                         project: Path) -> None:
    p = str(project)
    history(conn, p)
    store.write_memory(conn, MemoryIn(project=p, kind="note", title="header styling",
                                      narrative="header styling: colours from the theme"))
    add_facts(conn, [
        FactIn(project=p, kind="decision", stated=True, observed_at=T0,
               text="Decision: Next.js 14 with the App Router, TypeScript in strict mode, Tailwind, "
                    "src/ directory."),
        # Lists that are tasks, not the stack: in parentheses, or clauses of their own.
        FactIn(project=p, kind="convention", stated=True, observed_at=T0 + 1,
               text="Convention: Move the dev server to port 8010 everywhere (Makefile, compose, "
                    "README, the Stripe CLI forward)."),
        FactIn(project=p, kind="decision", stated=True, observed_at=T0 + 2,
               text="Decision: Invoices can be issued in EUR, GBP or USD, but reporting is in EUR."),
    ])
    text, _ = recall.prompt_block(conn, p, "What do we use for styling?")
    assert "Tailwind" in text and "port 8010" not in text and "GBP or USD" not in text  # (not bare: ids are random)
    # Not asked what the project uses: not given.
    text, _ = recall.prompt_block(conn, p, "How do I open the checkout page?")
    assert "Tailwind" not in text


def test_a_prompt_naming_a_product_the_project_never_mentioned_gets_no_block(
        conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    seed(conn, p)
    history(conn, p)
    # "checkout" and "page" are common here, "deployed" is known: Vercel is not
    store.write_memory(conn, MemoryIn(project=p, kind="note", title="deploy", created_at=T0,
                                      narrative="The checkout page is deployed with the fly CLI."))
    assert recall.prompt_block(conn, p, "How is the checkout page deployed on Vercel?") == ("", [])
    assert recall.prompt_block(conn, p, "Which state library, Redux or Zustand?") == ("", [])
    # what it does know it still says
    text, _ = recall.prompt_block(conn, p, "How is the checkout page deployed?")
    assert "fly CLI" in text
    # an error it quotes is new text by nature, and a generic acronym names no product
    assert recall.named_words("Tests fail with ReferenceError: document is not defined") == ["referenceerror"]
    assert recall._ERROR_REPORT.search("Tests fail with ReferenceError: document is not defined")
    assert recall.named_words("What do the API tests use as an HTTP client?") == []


def test_a_product_named_in_two_words_or_only_by_a_slot_s_kind_is_unknown_when_never_said(
        conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    seed(conn, p)
    history(conn, p)
    store.write_memory(conn, MemoryIn(project=p, kind="note", title="release", created_at=T0,
                                      narrative="The app is released from the store page with the fly CLI; "
                                                "readings go to Home Assistant."))
    add_facts(conn, [FactIn(project=p, kind="command", confirmed=2, observed_at=T0, subject="command:services",
                            value="docker compose up -d db", text="Start the local services with `docker compose up -d db`.")])
    # "app" and "store" are known here, the App Store is not; nor is a Redis the services never ran
    assert recall.prompt_block(conn, p, "How is the app released to the App Store?") == ("", [])
    assert recall.prompt_block(conn, p, "Which Redis instance do the services start?") == ("", [])
    # a name of two words the project does hold, and the services asked for without a product
    text, _ = recall.prompt_block(conn, p, "Which readings go to Home Assistant?")
    assert "Home Assistant" in text
    text, _ = recall.prompt_block(conn, p, "How do I start the local services?")
    assert "docker compose up -d db" in text
    assert recall.unknown_phrase_name(conn, p, "Where is the App Store listing?") == "App Store"
    assert recall.unknown_phrase_name(conn, p, "App Store listing?") is None  # a sentence's first word


def test_a_prompt_asking_what_is_allowed_gets_the_rule_the_user_stated(conn: sqlite3.Connection,
                                                                       project: Path) -> None:
    p = str(project)
    history(conn, p)
    add_facts(conn, [
        FactIn(project=p, kind="convention", stated=True, observed_at=T0,
               text="Convention: Please keep controllers thin — logic belongs in the services."),
        FactIn(project=p, kind="convention", stated=True, observed_at=T0 + 1,
               text="Convention: Going forward, slow work goes on the queue, never inline in a request."),
    ])
    # most of its words are never said here ("business", "endpoint"): the rule still answers
    text, _ = recall.prompt_block(conn, p, "Where should the business logic for an endpoint go?")
    assert "logic belongs in the services" in text
    text, _ = recall.prompt_block(conn, p, "Can I send the report mail inline in the request?")
    assert "never inline in a request" in text
    # the same words not asked as a rule question pull in no rule by themselves
    assert recall._RULE_ASK.search("Which business logic lives in the endpoint?") is None


def test_one_unknown_word_alone_does_not_silence_a_prompt() -> None:
    assert not recall.asks_the_unknown(["driver"], {"driver"})
    assert not recall.asks_the_unknown(["postgres", "driver"], {"driver"})
    assert recall.asks_the_unknown(["graphql", "schema", "kafka"], {"graphql", "kafka"})
    assert not recall.asks_the_unknown(["graphql", "schema", "kafka", "topics", "page"], {"graphql", "kafka"})


def test_a_prompt_asking_where_a_thing_lives_gets_the_file_said_to_hold_it(conn: sqlite3.Connection,
                                                                          project: Path) -> None:
    p = str(project)
    history(conn, p)
    add_facts(conn, [
        FactIn(project=p, kind="file_role", observed_at=T0, session_id="s1",
               text="`src/shop/models/order.py` — the Order and OrderLine models, amounts in cents."),
        FactIn(project=p, kind="file_role", observed_at=T0, session_id="s1",
               text="`src/shop/mail.py` — renders and sends the receipt emails."),
    ])
    text, _ = recall.prompt_block(conn, p, "Where are Order and OrderLine declared?")
    assert "src/shop/models/order.py" in text and "src/shop/mail.py" not in text
    text, _ = recall.prompt_block(conn, p, "Which module sends the receipt emails?")
    assert "src/shop/mail.py" in text
    assert recall._FILE_ASK.search("What does the order model hold?") is None


def _edit(p: str, path: str, old: str, new: str) -> MemoryIn:
    """An Edit as Claude Code's hook sends it: its input, then its output repeating both texts."""
    full = f"{p}/{path}"
    patch = {"filePath": full, "oldString": old, "newString": new,
             "structuredPatch": [{"oldStart": 19, "oldLines": 1, "newStart": 19, "newLines": 1,
                                  "lines": [f"-{old}", f"+{new}"]}], "userModified": False}
    return MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T0, title=f"Edit {full}",
                    narrative="input: " + json.dumps({"file_path": full, "old_string": old, "new_string": new})
                              + "\n\noutput:\n" + json.dumps(patch))


def test_an_edit_shows_the_text_it_wrote_not_the_one_it_replaced(conn: sqlite3.Connection,
                                                                 project: Path) -> None:
    p = str(project)
    store.write_memory(conn, _edit(p, "roles/backup/templates/backup.timer.j2",
                                   "[Timer]\nOnCalendar=*-*-* 03:00:00\nPersistent=true",
                                   "[Timer]\nOnCalendar=*-*-* 02:15:00\nPersistent=true"))
    store.write_memory(conn, _edit(p, "src/core/Spectrum.hpp", "std::size_t windowSize = 4096;",
                                   "std::size_t windowSize = 8192;  // longer frames keep the bass apart"))
    # the file's name holds the prompt's words: the first line it wrote is shown
    text, _ = recall.prompt_block(conn, p, "When does the backup timer fire?")
    assert "02:15:00" in text and "03:00:00" not in text
    # the written line holds them: that line
    text, _ = recall.prompt_block(conn, p, "How large is the default window size?")
    assert "windowSize = 8192" in text and "4096" not in text


def test_a_multi_edit_shows_the_new_text_of_its_edits(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    full = f"{p}/CMakeLists.txt"
    edits = [{"old_string": "set(CMAKE_CXX_STANDARD 17)", "new_string": "set(CMAKE_CXX_STANDARD 20)"},
             {"old_string": "project(sonoview VERSION 0.3.0)", "new_string": "project(sonoview VERSION 0.4.0)"}]
    store.write_memory(conn, MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T0,
                                      title=f"MultiEdit {full}",
                                      narrative="input: " + json.dumps({"file_path": full, "edits": edits})
                                                + "\n\noutput:\n" + json.dumps({"filePath": full, "edits": edits})))
    text, _ = recall.prompt_block(conn, p, "Which CXX standard does cmake build with?")
    # (the old value's own forms: a bare "17" can be part of a listed memory's random id)
    assert "CMAKE_CXX_STANDARD 20" in text
    assert not any(old in text for old in ("STANDARD 17", " 17)", "(17", "17 →", "→ 17")), text


def test_a_file_write_shows_its_line_as_a_later_edit_left_it(conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    full = f"{p}/CMakeLists.txt"
    first = store.write_memory(conn, MemoryIn(
        project=p, kind="tool_event", session_id="s1", created_at=T0, title=f"Write {full}",
        narrative="input: cmake_minimum_required(VERSION 3.25)\nproject(sonoview LANGUAGES CXX)\n"
                  "set(CMAKE_CXX_STANDARD 17)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n"
                  f'{{"file_path": "{full}"}}\n\noutput:\n{{"type": "create", "filePath": "{full}"}}'))
    later = _edit(p, "CMakeLists.txt", "set(CMAKE_CXX_STANDARD 17)", "set(CMAKE_CXX_STANDARD 20)")
    later.created_at = T0 + 86_400_000
    later.session_id = "s2"
    edit = store.write_memory(conn, later)
    # an edit of another file with the same line changes nothing here
    other = _edit(p, "tests/CMakeLists.txt", "set(CMAKE_CXX_STANDARD 17)", "set(CMAKE_CXX_STANDARD 23)")
    other.created_at = T0 + 2 * 86_400_000
    store.write_memory(conn, other)
    # (the edit alone holds too few of the prompt's words to be shown: the write is)
    text, listed = recall.prompt_block(conn, p, "Which language standard does sonoview compile with?")
    lines = [x for x in text.splitlines() if "CMAKE_CXX_STANDARD 17" in x]
    assert not lines, text
    shown = next(x for x in text.splitlines() if "CMAKE_CXX_STANDARD 20" in x)
    assert edit.id in shown
    # both the write and the edit count as given: neither comes again in this session
    assert first.id in listed and edit.id in listed


def test_a_value_asked_for_is_read_from_the_lines_an_edit_wrote(conn: sqlite3.Connection,
                                                               project: Path) -> None:
    p = str(project)
    store.write_memory(conn, _edit(p, "gradle/libs.versions.toml", 'kotlin = "1.9.22"\nksp = "1.9.22-1.0.17"',
                                   'kotlin = "2.0.21"\nksp = "2.0.21-1.0.27"'))
    text, _ = recall.prompt_block(conn, p, "What kotlin version is in the libs.versions.toml catalog?")
    assert "2.0.21" in text and "1.9.22" not in text


def test_a_store_that_never_saw_a_manifest_answers_what_it_uses_from_the_talk(
        conn: sqlite3.Connection, project: Path) -> None:
    p = str(project)
    history(conn, p)
    # sessions of talk alone: the tools they name as in use are all the stack there is
    add_facts(conn, [
        FactIn(project=p, kind="stack", stated=True, observed_at=T0 + i, subject=f"uses:{key}",
               value=f"{key} (in use)", text=f"Uses {name} ({label}).")
        for i, (key, name, label) in enumerate([("fastapi", "FastAPI", "web"), ("postgres", "Postgres", "database"),
                                                ("pytest", "pytest", "tests")])])
    text, _ = recall.prompt_block(conn, p, "What is the checkout page built with?")
    assert "Stack: in use (the sessions say): web FastAPI; database Postgres; tests pytest" in text
    # not asked what the project uses: no stack line; nor for a story that names a library
    text, _ = recall.prompt_block(conn, p, "How do I open the checkout page totals?")
    assert "Stack:" not in text
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0 + 9,
                            text="Decision: invoice amounts are rounded per line, never per invoice.")])
    text, _ = recall.prompt_block(conn, p, "After the library upgrade the invoice amounts were rounded "
                                           "per invoice. What was wrong?")
    assert "rounded per line" in text and "Stack:" not in text


def test_a_tool_of_the_asked_kind_named_by_two_words_answers(conn: sqlite3.Connection,
                                                             project: Path) -> None:
    p = str(project)
    history(conn, p)
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0,
                            text="Decision: CI runs on GitHub Actions, ubuntu and windows, with a cache.")])
    # "GitHub" and "Actions" alone name no CI service; the two together do
    text, _ = recall.prompt_block(conn, p, "Which CI service do we use?")
    assert "GitHub Actions" in text
    kind = recall.asked_kind("Which CI service do we use?")
    assert kind == ["ci", "service"]
    assert not recall._names_the_kind(["CI is green on every push, see the actions tab on GitHub"], kind, False)


def test_a_format_asked_for_is_not_the_formatter() -> None:
    """"In what format …" asks how data looks; "how do I format …" names the formatter's slot."""
    from aletheia.recall import _kind_nouns

    assert _kind_nouns("In what format are phone numbers saved?") == {"format"}
    assert _kind_nouns("Which style of commit message do we use?") == {"style"}
    assert _kind_nouns("How do I format the code?") == set()


def test_a_short_output_is_what_a_command_answered(conn: sqlite3.Connection, project: Path) -> None:
    """A size as ``ls -lh`` prints it, a time as ``time`` prints it, a share, an elapsed time: each
    is the value asked for; and a short output whose lines hold none of the prompt's words (the
    command did) is shown, not the command's input again."""
    p = str(project)
    for n, (cmd, out) in enumerate([
            ("ls -lh target/app-standalone.jar | awk '{print $5}'", "38M"),
            ("time ./run-model namelists/reference.nml > /dev/null", "\nreal\t0m3.912s\nuser\t0m3.800s"),
            ("sacct -j 4471892 --format=JobID,State,Elapsed -n", "4471892 COMPLETED 00:04:12"),
            ("./coverage-report public", "71.4%\n{\"interrupted\": false, \"isImage\": false}")]):
        store.write_memory(conn, MemoryIn(project=p, kind="tool_event", session_id=f"s{n}", created_at=T0 + n,
                                          title=f"Bash: $ {cmd}",
                                          narrative=f"input: {json.dumps({'command': cmd})}\n\noutput:\n{out}"))
    assert "38M" in recall.prompt_block(conn, p, "How big is the standalone jar?")[0]
    assert "0m3.912s" in recall.prompt_block(conn, p, "How long does a reference model run take?")[0]
    assert "00:04:12" in recall.prompt_block(conn, p, "How long did job 4471892 take in sacct?")[0]
    text = recall.prompt_block(conn, p, "How much of the public code does the coverage report cover?")[0]
    assert "71.4%" in text and "interrupted" not in text and "input:" not in text


def test_a_memory_naming_a_replaced_tool_is_left_out_beside_what_replaced_it(conn: sqlite3.Connection,
                                                                             project: Path) -> None:
    # The Lua linter was luacheck, then selene.  Asked which linter checks the code, the block
    # shows the selene run, not the older luacheck run beside it; what was said about the old
    # one is said without it when the rest still says something.
    p = str(project)

    def said(kind: str, title: str, narrative: str, at: int) -> None:
        store.write_memory(conn, MemoryIn(project=p, kind=kind, session_id=f"s{at}", created_at=at,
                                          title=title, narrative=narrative))

    said("tool_event", "Bash: $ stylua --check . && luacheck lua tests",
         'input: {"command": "stylua --check . && luacheck lua tests"}\n\noutput:\nlinter checks: 0 warnings', T0)
    said("response", "The linter checks pass.", "The linter checks pass: stylua formats the Lua code, "
         "and luacheck lints it.", T0 + 1)
    said("tool_event", "Bash: $ selene lua tests", 'input: {"command": "selene lua tests"}\n\noutput:\n'
         "linter checks: 0 errors, 0 warnings", T0 + 20)
    add_facts(conn, [FactIn(project=p, kind="decision", stated=True, observed_at=T0 + 10, subject="replaced:luacheck",
                            value="(replaced)", ends=True, text="`luacheck` was replaced by `selene`.")])
    text, _ = recall.prompt_block(conn, p, "Which linter checks the Lua code?")
    assert "selene lua tests" in text
    assert "luacheck lua tests" not in text and "luacheck lints" not in text
    assert "stylua formats the Lua code" in text
    # a prompt naming the old tool, or asking why, still gets what was said about it
    text, _ = recall.prompt_block(conn, p, "Does luacheck lint the Lua code?")
    assert "luacheck lint" in text
    text, _ = recall.prompt_block(conn, p, "Why did the linter checks change for the Lua code?")
    assert "luacheck" in text


def test_a_prompt_asking_how_to_do_what_a_slot_does_gets_its_command_first(
        conn: sqlite3.Connection, project: Path) -> None:
    """"How do I lint …?" is answered by the lint command, ahead of memories that share the
    prompt's rarer words by chance; "… in a fresh shell …" names the shell's set-up."""
    p = str(project)
    add_facts(conn, [
        FactIn(project=p, kind="command", confirmed=1, observed_at=T0, session_id="old", subject="command:lint",
               value="tools/analyse.sh --strict", text="Lint with `tools/analyse.sh --strict`."),
        FactIn(project=p, kind="command", confirmed=3, observed_at=T0, session_id="old", subject="command:env",
               value="source scripts/env.sh", text="Set up the shell's environment with `source scripts/env.sh`."),
    ])
    for n in range(4):
        store.write_memory(conn, MemoryIn(
            project=p, kind="response", session_id=f"s{n}", created_at=T0 + n,
            title=f"The module loader expects the manifest {n}",
            narrative=f"The module loader expects the manifest in the project root, as the way it resolves "
                      f"module paths expects (case {n}); every module of the project is listed there with "
                      f"its version and the way the project expects it to be loaded."))
    text, _ = recall.prompt_block(conn, p, "How do I lint the module the way the project expects?")
    first = next(x for x in text.splitlines() if x.startswith("- "))
    assert "tools/analyse.sh" in first, text
    text, _ = recall.prompt_block(conn, p, "What do I need to do in a fresh shell before building?")
    assert "source scripts/env.sh" in text


def test_a_file_read_is_shown_by_its_lines_and_the_hosts_json_keys_hold_no_words(
        conn: sqlite3.Connection, project: Path) -> None:
    """A read's output is stored as one line of JSON (escaped newlines, numbered lines): the line
    that holds the prompt's words is shown, as the file has it; the input's "limit" and "offset"
    keys hold no prompt's "limit"."""
    p = str(project)
    content = "".join(f"{n:6}→{line}\n" for n, line in enumerate(
        ["(ns shop.rota)", "", ";; weekly cap: burnout, on purpose", "(def max-shifts-per-week 3)"], 1))
    store.write_memory(conn, MemoryIn(
        project=p, kind="tool_event", session_id="s1", created_at=T0, title=f"Read {p}/src/shop/rota.clj",
        narrative="input: " + json.dumps({"file_path": f"{p}/src/shop/rota.clj"}) + "\n\noutput:\n"
                  + json.dumps({"type": "text", "file": {"filePath": f"{p}/src/shop/rota.clj", "content": content,
                                                         "numLines": 4, "startLine": 1, "totalLines": 4}})))
    text, _ = recall.prompt_block(conn, p, "What is the weekly cap on shifts?")
    assert "(def max-shifts-per-week 3)" in text and "filePath" not in text
    store.write_memory(conn, MemoryIn(
        project=p, kind="tool_event", session_id="s2", created_at=T0 + 1, title=f"Read {p}/src/shop/handler.clj",
        narrative="input: " + json.dumps({"file_path": f"{p}/src/shop/handler.clj", "offset": 12, "limit": 5})
                  + "\n\noutput:\n" + json.dumps({"type": "text", "file": {
                      "filePath": f"{p}/src/shop/handler.clj", "content": "    12→(defn app [db])\n"}})))
    text, _ = recall.prompt_block(conn, p, "Where is the weekly limit for volunteers enforced?")
    assert "handler.clj" not in text


def _write(p: str, path: str, content: str, at: int) -> MemoryIn:
    """A Write as Claude Code's hook sends it: the file's text, then its input's JSON."""
    full = f"{p}/{path}"
    return MemoryIn(project=p, kind="tool_event", session_id="w1", created_at=at, title=f"Write {full}",
                    narrative=f"input: {content}\n" + json.dumps({"file_path": full})
                              + "\n\noutput:\n" + json.dumps({"type": "create", "filePath": full}))


def _loudness_project(conn: sqlite3.Connection, p: str) -> None:
    """The history, forty prompts that hold a where-prompt's words and say nothing of where the
    thing is set, and the one file written to hold it (rtl/mixer.v)."""
    history(conn, p)
    store.write_memories(conn, [MemoryIn(project=p, kind="prompt", session_id=f"t{i}", created_at=T0 + i,
                                         title=f"the loudness ceiling again {i}",
                                         narrative=f"visitors say the loudness is too high, lower the ceiling {i}")
                                for i in range(40)])
    store.write_memories(conn, [
        _write(p, "rtl/mixer.v", "module mixer;\n  localparam VOL_MAX = 140; // loudness ceiling\nendmodule", T0 + 50)])


def test_a_prompt_asking_where_a_thing_lives_gets_the_file_written_to_hold_it(
    conn: sqlite3.Connection, project: Path,
) -> None:
    p = str(project)
    # Much talk holds the words; only a file the sessions wrote says where the thing is set.
    _loudness_project(conn, p)
    store.write_memories(conn, [_write(p, "rtl/leds.v", "module leds;\n  // the ceiling lights\nendmodule", T0 + 51)])
    text, _ = recall.prompt_block(conn, p, "Where is the loudness ceiling set?")
    assert "rtl/mixer.v" in text and "rtl/leds.v" not in text  # (one of the words is not enough)
    # a prompt not asking where a thing lives does not get it
    assert "rtl/mixer.v" not in recall.prompt_block(conn, p, "Why was the loudness ceiling lowered again?")[0]


def test_the_written_files_read_for_a_where_prompt_are_bounded_newest_first(
    conn: sqlite3.Connection, project: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = str(project)
    _loudness_project(conn, p)
    # newer writes that hold none of the prompt's words
    store.write_memories(conn, [_write(p, f"rtl/pad{i}.v", f"module pad{i};\n" + "  wire w;\n" * 40 + "endmodule",
                                       T0 + 60 + i) for i in range(5)])
    ask = "Where is the loudness ceiling set?"
    assert "rtl/mixer.v" in recall.prompt_block(conn, p, ask, session_id="s1")[0]
    # Past the budget the older write is not read: a project's many large writes cannot take
    # the prompt hook's time.
    monkeypatch.setattr(recall, "WRITTEN_SCAN_CHARS", 1000)
    assert "rtl/mixer.v" not in recall.prompt_block(conn, p, ask, session_id="s2")[0]


def test_search_first_page_needs_one_word_of_the_prompt(conn: sqlite3.Connection, project: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    p = str(project)
    # A store where each of the prompt's words is held by some memories, none by most: the
    # answer holds one of them ("ledger"), as answers asked in other words do.
    filler = [f"the ledger export of batch {i} was checked by hand and archived with the others"
              for i in range(8)] + [f"the weekly report {i} went to the board as a long pdf with charts"
                                    for i in range(8)] + [f"reconcile step {i} of the bank import matched the "
                                                          f"statement lines one by one" for i in range(8)]
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=text[:40], narrative=text, created_at=T0 + i)
                                for i, text in enumerate(filler + [f"misc note {i} about the office" for i in range(60)])])
    store.write_memories(conn, [MemoryIn(project=p, kind="response", title="ledger job: Sundays 02:00",
                                         narrative="ledger job: Sundays 02:00 via cron.", created_at=T0 + 100)])
    ask = "When does the weekly ledger reconcile happen?"
    text, _ = recall.prompt_block(conn, p, ask)
    assert "Sundays 02:00" in text
    # (one word of four is under the floor for what search ranks past its first page)
    monkeypatch.setattr(recall, "TOP_HITS", 0)
    text, _ = recall.prompt_block(conn, p, ask)
    assert "Sundays 02:00" not in text



def test_search_order_leads_the_first_page(conn: sqlite3.Connection, project: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    p = str(project)
    # "ledger" is held by a few memories, "weekly" and "reconcile" by many: search ranks the
    # answer (ledger, three times, in a short line) first, above ten notes holding the two
    # commoner words, which share more of the prompt's words with it.
    texts = [f"ledger export {i} was checked by hand and archived with the others" for i in range(6)]
    texts += [f"weekly report {i} went to the board as a pdf with charts" for i in range(40)]
    texts += [f"reconcile step {i} of the bank import matched the statement lines" for i in range(40)]
    texts += [f"the weekly reconcile of petty cash batch {i} is done by Ann on paper" for i in range(10)]
    texts += [f"misc note {i} about the office kitchen and the rota" for i in range(104)]
    store.write_memories(conn, [MemoryIn(project=p, kind="note", title=text[:40], narrative=text, created_at=T0 + i)
                                for i, text in enumerate(texts)])
    store.write_memories(conn, [MemoryIn(
        project=p, kind="response", title="ledger job: Sundays 02:00", created_at=T0 + 1000,
        narrative="ledger job: Sundays 02:00 via cron; the ledger lock file is ledger.lock.")])
    ask = "When does the weekly ledger reconcile happen?"

    def place() -> int:
        text, _ = recall.prompt_block(conn, p, ask)
        lines = [line for line in text.splitlines() if line.startswith("- ")]
        return next((n for n, line in enumerate(lines) if "Sundays 02:00" in line), len(lines))

    # Ahead of the notes search ranked from fourth on (the bonus falls by rank) …
    assert place() <= 2
    # … where the count of shared words alone put it after every note that fitted
    monkeypatch.setattr(recall, "PAGE_BONUS", 0.0)
    assert place() >= 5

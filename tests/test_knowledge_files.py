"""A file a session deletes or renames takes what the store knew about it along: through real
Claude Code hook processes, ``aletheia compress`` (offline), ``aletheia facts --json``, the
block and per-file recall.  And the ways a session removes a file (shell, apply_patch)."""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia import db
from aletheia.cli import cli
from aletheia.extract.removals import patch_removals, shell_removals
from aletheia.facts import FactIn, add_facts
from tests.hookproc import claude_tool, run_hook
from tests.settle import replay_spool

LEGACY = '"""Exchange rates scraped from the central bank page, cached for a day."""\n\nRATES = {}\n'
RATES = '"""Currency conversion at the rates the FX service returns."""\n\ndef convert(): ...\n'
MAKEFILE = "test:\n\tpytest -q --maxfail=1\n\nlint:\n\truff check src\n"


def cli_out(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def read_payload(session: str, root: Path, rel: str, content: str) -> dict[str, Any]:
    numbered = "".join(f"{i:6}→{line}\n" for i, line in enumerate(content.splitlines(), 1))
    return {"session_id": session, "transcript_path": "/dev/null", "cwd": str(root),
            "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(root / rel)},
            "tool_response": {"type": "text", "file": {"filePath": str(root / rel), "content": numbered}},
            "tool_use_id": f"toolu_{session}_{rel}"}


def hook(env: dict[str, str], event: str, payload: dict[str, Any]) -> str:
    r = run_hook("claude-code", event, {"hook_event_name": event, "transcript_path": "/dev/null", **payload}, env)
    assert r.code == 0, r.stderr
    return r.stdout


def session(env: dict[str, str], root: Path, sid: str, prompt: str, tools: list[dict[str, Any]]) -> None:
    hook(env, "SessionStart", {"session_id": sid, "cwd": str(root), "source": "startup"})
    hook(env, "UserPromptSubmit", {"session_id": sid, "cwd": str(root), "prompt": prompt})
    for t in tools:
        hook(env, "PostToolUse", t)
    hook(env, "Stop", {"session_id": sid, "cwd": str(root)})


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


def active_texts(project: Path) -> list[str]:
    facts = json.loads(cli_out("facts", "--project", str(project), "--json", "--limit", "500"))
    items = facts["items"] if isinstance(facts, dict) else facts
    return [str(f["text"]) for f in items]


def test_deleted_and_renamed_files_leave_the_current_facts(
    hook_env: dict[str, str], shop: Path, aletheia_home: Path,
) -> None:
    session(hook_env, shop, "s-read", "Look around the FX code and the Makefile.", [
        read_payload("s-read", shop, "src/shop/legacy_fx.py", LEGACY),
        read_payload("s-read", shop, "src/shop/rates.py", RATES),
        read_payload("s-read", shop, "Makefile", MAKEFILE),
        claude_tool("s-read", str(shop), "make test", "5 passed in 0.21s", "toolu_mt"),
    ])
    session(hook_env, shop, "s-gone", "Drop the legacy scraper, rename rates.py, and no more Makefile.", [
        claude_tool("s-gone", str(shop), "git rm -q src/shop/legacy_fx.py", "", "toolu_rm"),
        claude_tool("s-gone", str(shop), "git mv src/shop/rates.py src/shop/fx_rates.py && rm Makefile",
                    "", "toolu_mv"),
    ])
    with db.connect() as conn:
        replay_spool(conn)
    cli_out("compress")

    texts = active_texts(shop)
    assert not [t for t in texts if "legacy_fx.py" in t], texts
    assert not [t for t in texts if "(`Makefile`)" in t], texts
    assert "Run the tests with `make test`." not in texts  # no Makefile, no `make test`
    assert not [t for t in texts if "`src/shop/rates.py`" in t], texts
    assert "`src/shop/fx_rates.py` — Currency conversion at the rates the FX service returns." in texts

    with db.connect() as conn:
        old = conn.execute("SELECT id, status, superseded_by FROM fact WHERE text LIKE '`src/shop/legacy_fx.py` — %'"
                           ).fetchone()
        assert old["status"] == "superseded"
        record = conn.execute("SELECT text, status, session_id, source_ids FROM fact WHERE id = ?",
                              (old["superseded_by"],)).fetchone()
        # The evidence of the retirement is the session (and the command) that removed the file.
        assert record["text"] == "`src/shop/legacy_fx.py` was deleted."
        assert record["status"] == "superseded" and record["session_id"] == "s-gone"
        rm_id = conn.execute("SELECT id FROM memory WHERE session_id = 's-gone' AND title LIKE '%git rm%'"
                             ).fetchone()[0]
        assert json.loads(record["source_ids"]) == [rm_id]
        moved = conn.execute("SELECT superseded_by FROM fact WHERE text LIKE '`src/shop/rates.py` — %'"
                             ).fetchone()[0]
        assert "fx_rates.py" in conn.execute("SELECT text FROM fact WHERE id = ?", (moved,)).fetchone()[0]

    # The chain shows in the history; the block and per-file recall say nothing of the old files.
    history = cli_out("facts", "--project", str(shop), "--history")
    assert "legacy_fx.py` was deleted" in history
    block = cli_out("context", "--project", str(shop))
    assert "pytest -q --maxfail=1" not in block and "legacy_fx" not in block
    read_legacy = {"session_id": "s-next", "cwd": str(shop), "tool_name": "Read",
                   "tool_input": {"file_path": str(shop / "src/shop/legacy_fx.py")}, "tool_use_id": "t1"}
    assert "central bank" not in hook(hook_env, "PreToolUse", read_legacy)
    read_new = {**read_legacy, "tool_input": {"file_path": str(shop / "src/shop/fx_rates.py")}, "tool_use_id": "t2"}
    assert "Currency conversion" in hook(hook_env, "PreToolUse", read_new)

    # A later session that shows the file again brings its role back.
    session(hook_env, shop, "s-back", "Restore the legacy scraper.", [
        read_payload("s-back", shop, "src/shop/legacy_fx.py", LEGACY),
    ])
    with db.connect() as conn:
        replay_spool(conn)
    cli_out("compress")
    assert "`src/shop/legacy_fx.py` — Exchange rates scraped from the central bank page, cached for a day." \
        in active_texts(shop)


def test_facts_observed_after_the_removal_stay(conn: sqlite3.Connection) -> None:
    p = "/w/shop"
    add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=3000, text="`src/a.py` — New module.")])
    add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=2000, text="`src/a.py` was deleted.",
                            subject="file:src/a.py", value="(deleted)", ends=True, removes_file="src/a.py")])
    assert conn.execute("SELECT status FROM fact WHERE text LIKE '`src/a.py` — %'").fetchone()[0] == "active"


def test_a_removal_compressed_before_the_facts_it_retires(conn: sqlite3.Connection) -> None:
    """Old transcripts imported out of order: the session that deleted or moved a file is
    compressed first; what an earlier session learnt about the file arrives after it."""
    p = "/w/shop"
    add_facts(conn, [
        FactIn(project=p, kind="file_role", observed_at=2000, text="`src/a.py` was deleted.",
               subject="file:src/a.py", value="(deleted)", ends=True, removes_file="src/a.py"),
        FactIn(project=p, kind="file_role", observed_at=2000, text="`lib` was renamed to `pkg`.",
               subject="file:lib", value="(moved to pkg)", ends=True, removes_file="lib", moved_to="pkg"),
    ])
    add_facts(conn, [
        FactIn(project=p, kind="file_role", observed_at=1000, text="`src/a.py` — The old module."),
        FactIn(project=p, kind="file_role", observed_at=1000, text="`lib/io.py` — Reads the feeds."),
        FactIn(project=p, kind="fact", observed_at=1000, confirmed=1, subject="env:MODE@lib", value="fast",
               text="`MODE=fast` (`lib/.env.example`)."),
        FactIn(project=p, kind="file_role", observed_at=3000, text="`src/a.py` — The new module."),
    ])
    active = sorted(r[0] for r in conn.execute("SELECT text FROM fact WHERE status = 'active'"))
    assert active == ["`MODE=fast` (`pkg/.env.example`).", "`pkg/io.py` — Reads the feeds.",
                      "`src/a.py` — The new module."]
    assert conn.execute("SELECT subject FROM fact WHERE text LIKE '`MODE=fast` (`pkg%'").fetchone()[0] == "env:MODE@pkg"


def test_a_removed_folder_takes_its_files_facts_and_a_decision_naming_it_stays(conn: sqlite3.Connection) -> None:
    p = "/w/shop"
    add_facts(conn, [
        FactIn(project=p, kind="file_role", observed_at=1000, text="`apps/old/main.ts` — The old entry point."),
        FactIn(project=p, kind="command", observed_at=1000, confirmed=1, subject="script:build@apps/old",
               value="vite build", text="Script `build` runs `vite build` (`apps/old/package.json`)."),
        FactIn(project=p, kind="decision", observed_at=1000, stated=True,
               text="Decision: keep the retry loop out of `apps/old/main.ts` (it hides errors)."),
        FactIn(project=p, kind="file_role", observed_at=1000, text="`apps/older.ts` — Not under the folder."),
    ])
    add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=2000, text="`apps/old` was deleted.",
                            subject="file:apps/old", value="(deleted)", ends=True, removes_file="apps/old")])
    active = [r[0] for r in conn.execute("SELECT text FROM fact WHERE status = 'active' ORDER BY text")]
    assert active == ["Decision: keep the retry loop out of `apps/old/main.ts` (it hides errors).",
                      "`apps/older.ts` — Not under the folder."]


def test_a_command_run_on_a_removed_path_goes_with_it(conn: sqlite3.Connection) -> None:
    """`ansible-lint roles/pihole` lints the rest once the role is deleted (the old argument is no
    current knowledge); on a rename it runs on the new path.  A command on another path that
    shares the name's beginning stays."""
    p = "/w/infra"
    add_facts(conn, [
        FactIn(project=p, kind="command", observed_at=1000, confirmed=2, subject="command:lint",
               value="ansible-lint roles/pihole", text="Lint with `ansible-lint roles/pihole`."),
        FactIn(project=p, kind="command", observed_at=1000, confirmed=1, subject="command:test",
               value="pytest tests/test_old.py -q", text="Run the tests with `pytest tests/test_old.py -q`."),
        FactIn(project=p, kind="command", observed_at=1000, confirmed=1, subject="command:check",
               value="ansible-lint roles/pihole-extra", text="Check with `ansible-lint roles/pihole-extra`."),
    ])
    add_facts(conn, [
        FactIn(project=p, kind="file_role", observed_at=2000, text="`roles/pihole` was deleted.",
               subject="file:roles/pihole", value="(deleted)", ends=True, removes_file="roles/pihole"),
        FactIn(project=p, kind="file_role", observed_at=2000, text="`tests` was renamed to `test`.",
               subject="file:tests", value="(moved to test)", ends=True, removes_file="tests", moved_to="test"),
    ])
    rows = conn.execute("SELECT text, subject, value FROM fact WHERE status = 'active' ORDER BY text").fetchall()
    assert [tuple(r) for r in rows] == [
        ("Check with `ansible-lint roles/pihole-extra`.", "command:check", "ansible-lint roles/pihole-extra"),
        ("Lint with `ansible-lint`.", "command:lint", "ansible-lint"),
        ("Run the tests with `pytest test/test_old.py -q`.", "command:test", "pytest test/test_old.py -q")]


def test_a_command_that_ran_a_removed_file_goes_with_it() -> None:
    from aletheia.facts import _command_without

    assert _command_without("pytest tests/test_old.py -q", "tests/test_old.py", None) == "pytest -q"
    assert _command_without("ruff check src/legacy/io.py src/app", "src/legacy", None) == "ruff check src/app"
    assert _command_without("python scripts/seed.py --fast", "scripts/seed.py", None) is None
    assert _command_without("./scripts/seed.sh", "scripts/seed.sh", None) is None
    assert _command_without("cd roles/pihole && molecule test", "roles/pihole", None) is None
    assert _command_without("ansible-lint roles/pihole/tasks", "roles/pihole", "roles/dns") == "ansible-lint roles/dns/tasks"


def test_a_moved_folder_moves_its_slots() -> None:
    with db.connect() as conn:
        p = "/w/shop"
        add_facts(conn, [FactIn(project=p, kind="command", observed_at=1000, confirmed=1,
                                subject="script:build@apps/web", value="vite build",
                                text="Script `build` runs `vite build` (`apps/web/package.json`).")])
        add_facts(conn, [FactIn(project=p, kind="file_role", observed_at=2000,
                                text="`apps/web` was renamed to `apps/site`.", subject="file:apps/web",
                                value="(moved to apps/site)", ends=True, removes_file="apps/web",
                                moved_to="apps/site")])
        rows = conn.execute("SELECT text, subject FROM fact WHERE status = 'active'").fetchall()
    assert [tuple(r) for r in rows] == [
        ("Script `build` runs `vite build` (`apps/site/package.json`).", "script:build@apps/site")]


@pytest.mark.parametrize(("command", "expected"), [
    ("rm -f src/a.py src/b.py", [("src/a.py", None), ("src/b.py", None)]),
    ("git rm -r --quiet apps/old/", [("apps/old", None)]),
    ("git rm --cached .env.local", []),
    ("rm -rf build/*.o", []),
    ("git mv src/rates.py src/fx_rates.py", [("src/rates.py", "src/fx_rates.py")]),
    ("mv a.py b.py lib/", [("a.py", "lib/a.py"), ("b.py", "lib/b.py")]),
    ("mv src/x.py lib", [("src/x.py", None)]),
    ("cd api && rm old.txt; echo done", [("api/old.txt", None)]),
    ("rm a.txt && cd /tmp && rm b.txt", [("a.txt", None)]),
    ("cd apps/web && git mv src/a.ts src/b.ts", [("apps/web/src/a.ts", "apps/web/src/b.ts")]),
    ("FOO=1 sudo rm -- -weird.txt", [("-weird.txt", None)]),
    ("echo rm nothing", []),
])
def test_the_shell_commands_that_remove_a_file(command: str, expected: list[tuple[str, str | None]]) -> None:
    assert shell_removals(command) == expected


def test_a_cd_into_the_project_is_followed() -> None:
    assert shell_removals("cd /w/shop && git rm -q old.py", "/w/shop") == [("old.py", None)]
    assert shell_removals("cd /w/shop/api && rm x.py", "/w/shop") == [("api/x.py", None)]
    assert shell_removals("cd /w/other && rm x.py", "/w/shop") == []


def test_a_here_documents_lines_are_data_not_commands() -> None:
    """A patch's context line (" rm -rf build") or a script being written is no removal."""
    patch = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: scripts/clean.sh\n@@\n"
             " rm -rf build\n*** End Patch\nEOF")
    assert shell_removals(patch, "/w/shop") == []
    assert shell_removals("cat > x.sh <<EOF\nrm -rf dist\nEOF\nrm old.py", "/w/shop") == [
        ("old.py", None)]
    assert shell_removals("cat <<-  \"END\" > y.sh\n\trm a.py\n\tEND\ngit rm b.py", "/w/shop") == [
        ("b.py", None)]


def test_the_patches_that_remove_a_file() -> None:
    patch = ("*** Begin Patch\n*** Delete File: src/old.py\n*** Update File: src/a.py\n*** Move to: src/b.py\n"
             "@@\n-x\n+y\n*** Update File: src/c.py\n@@\n-x\n+y\n*** Add File: src/d.py\n+z\n*** End Patch\n")
    assert patch_removals(patch) == [("src/old.py", None), ("src/a.py", "src/b.py")]


# --- settings in an example environment file ---------------------------------------------------


def write_payload(session: str, root: Path, rel: str, content: str) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(root), "tool_name": "Write",
            "tool_input": {"file_path": str(root / rel), "content": content},
            "tool_response": {"type": "create", "filePath": str(root / rel), "content": content},
            "tool_use_id": f"toolu_w_{session}_{rel}"}


def edit_payload(session: str, root: Path, rel: str, old: str, new: str) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(root), "tool_name": "Edit",
            "tool_input": {"file_path": str(root / rel), "old_string": old, "new_string": new},
            "tool_response": {"filePath": str(root / rel), "oldString": old, "newString": new},
            "tool_use_id": f"toolu_e_{session}_{rel}"}


def test_settings_of_an_example_env_file_become_facts_a_later_value_supersedes(
    hook_env: dict[str, str], shop: Path,
) -> None:
    rng = random.Random(12)
    secret = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))
    template = (f"APP_NAME=shop\nAPP_KEY=base64:{secret}\nAPP_DEBUG=true\nDB_HOST=127.0.0.1\n"
                f"DB_PASSWORD=\nMAIL_MAILER=smtp\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\n"
                f"STRIPE_SECRET=sk_test_{secret}\n")
    session(hook_env, shop, "s-env", "Set up the example environment.", [
        write_payload("s-env", shop, ".env.example", template),
        write_payload("s-env", shop, ".env", "QUEUE_CONNECTION=sync\nLOCAL_ONLY=yes\n"),
    ])
    session(hook_env, shop, "s-queue", "The jobs go on the database queue now.", [
        edit_payload("s-queue", shop, ".env.example", "QUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1",
                     "QUEUE_CONNECTION=database"),
    ])
    with db.connect() as conn:
        replay_spool(conn)
    cli_out("compress")

    texts = active_texts(shop)
    settings = sorted(t for t in texts if "(`.env" in t)
    assert settings == ["`APP_DEBUG=true` (`.env.example`).", "`APP_NAME=shop` (`.env.example`).",
                        "`MAIL_MAILER=smtp` (`.env.example`).", "`QUEUE_CONNECTION=database` (`.env.example`)."]
    assert not [t for t in texts if secret in t or "LOCAL_ONLY" in t or "=sync" in t]
    with db.connect() as conn:
        old = conn.execute("SELECT status, superseded_by FROM fact WHERE text LIKE '`QUEUE_CONNECTION=redis`%'"
                           ).fetchone()
        assert old["status"] == "superseded"
        assert conn.execute("SELECT value FROM fact WHERE id = ?", (old["superseded_by"],)).fetchone()[0] == "database"
        assert conn.execute("SELECT status FROM fact WHERE subject = 'env:REDIS_HOST'").fetchone()[0] == "superseded"
    block = cli_out("context", "--project", str(shop))
    assert "`QUEUE_CONNECTION=database`" in block and "QUEUE_CONNECTION=redis" not in block
    assert block.index("QUEUE_CONNECTION") < block.index("APP_DEBUG")  # a choice before a flag
    assert "QUEUE_CONNECTION=redis" in cli_out("facts", "--project", str(shop), "--history")

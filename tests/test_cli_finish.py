"""The CLI's rough edges, each one fixed: aligned stats, no stray progress line, hook help,
empty-result hints, erase checking ids first, kinds checked, negative numbers, whole help
lines; and the install health check doctor runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aletheia.cli import cli
from aletheia.install import HOSTS, base, run
from aletheia.install.health import broken_entries, installed_hosts

REPO = Path(__file__).resolve().parent.parent


def invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_stats_is_aligned_text_not_dict_reprs() -> None:
    invoke("save", "--project", "/p", "a note")
    out = invoke("stats")
    assert "{" not in out and "'" not in out
    keys = [line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")]
    assert {"memories", "facts", "jobs", "stop queue"} <= set(keys)
    # Values start in one column.
    starts = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in out.splitlines()}
    assert len(starts) == 1, out


def test_compress_on_a_pipe_prints_no_progress_line() -> None:
    out = invoke("compress")
    assert "compressing" not in out
    assert out.startswith("0 jobs:")


def test_hook_help_prints_usage(hook_env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "aletheia", "hook", "--help"], env=hook_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "Usage: " in proc.stdout and "TOOL EVENT" in proc.stdout


def test_empty_project_search_hints_at_all_projects() -> None:
    invoke("save", "--project", "/elsewhere", "ninja builds")
    out = invoke("search", "--project", "/here", "ninja")
    assert "no matches in project /here" in out and "--all-projects" in out
    assert "ninja builds" in invoke("search", "--all-projects", "ninja")


def test_erase_checks_ids_before_asking_for_yes() -> None:
    result = CliRunner().invoke(cli, ["erase", "NOPE"], catch_exceptions=False)
    assert result.exit_code != 0
    assert "no memory or fact with id NOPE" in result.output
    assert "--yes" not in result.output
    result = CliRunner().invoke(cli, ["erase", "--session", "nope"], catch_exceptions=False)
    assert "no session with id nope" in result.output


def test_unknown_kind_is_refused() -> None:
    invoke("save", "--project", "/p", "--kind", "decision-log", "a custom kind")
    result = CliRunner().invoke(cli, ["search", "--project", "/p", "--kind", "bogus", "x"])
    assert result.exit_code != 0 and "--kind 'bogus'" in result.output
    assert "custom kind" in invoke("search", "--project", "/p", "--kind", "decision-log", "custom")


def test_settings_set_takes_negative_numbers() -> None:
    result = CliRunner().invoke(cli, ["settings", "set", "context.recent", "-5"])
    assert result.exit_code != 0
    assert "No such option" not in result.output and "at least 0" in result.output


def test_help_lines_are_never_cut() -> None:
    out = invoke("--help")
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands
    assert "search" in out and "install" in out and "up" in out


def _claude_settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def test_doctor_finds_hooks_whose_interpreter_or_script_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    run("claude-code", "install")
    assert broken_entries(home) == []
    gone = tmp_path / "old-venv" / "bin" / "python"
    text = _claude_settings(home).read_text().replace(base.python(), str(gone))
    _claude_settings(home).write_text(text)
    found = broken_entries(home)
    assert {b.what for b in found} == {"hook"} and {b.missing for b in found} == {str(gone)}
    result = CliRunner().invoke(cli, ["doctor", "--json"], catch_exceptions=False)
    assert result.exit_code == 1
    report = json.loads(result.output)
    check = next(c for c in report["checks"] if c["name"] == "host hooks")
    assert check["status"] == "problem" and check["data"]["broken"]
    assert "aletheia install claude-code" in check["hint"]


def test_install_again_repoints_every_path_it_wrote(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade moves the interpreter: `install --refresh` (what scripts/install runs) and
    a plain `install HOST` leave no entry pointing at the old one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    old = str(tmp_path / "old" / "bin" / "python")
    current = base.python
    monkeypatch.setattr(base, "python", lambda: old)
    for host in HOSTS:
        run(host, "install", mcp=host != "cursor")
    found = installed_hosts(home)
    assert set(found) == set(HOSTS) and found["cursor"] is False and found["claude-code"] is True
    assert {b.host for b in broken_entries(home)} == set(HOSTS)
    monkeypatch.setattr(base, "python", current)
    out = invoke("install", "--refresh")
    assert "claude-code" in out or "updated" in out
    assert broken_entries(home) == []
    written = "".join(p.read_text() for p in home.rglob("*") if p.is_file())
    assert old not in written
    assert not (home / ".cursor" / "mcp.json").exists()  # --no-mcp was kept


def test_refresh_gives_older_mcp_entries_python_dash_p(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Installs before -P wrote `python -m aletheia mcp`, which a host started inside a clone of
    aletheia runs from that clone.  `install --refresh` rewrites every such entry, in every
    host's config (OpenCode's still recognised as ours), and a second refresh changes nothing."""
    import re

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    current = base.MCP_ARGS
    monkeypatch.setattr(base, "MCP_ARGS", ["-m", "aletheia", "mcp"])
    for host in HOSTS:
        run(host, "install")
    monkeypatch.setattr(base, "MCP_ARGS", current)

    def entries() -> tuple[int, int]:
        text = re.sub(r"\s+", "", "".join(p.read_text() for p in home.rglob("*")
                                          if p.is_file() and p.suffix in (".json", ".toml")))
        return text.count('"-m","aletheia","mcp"'), text.count('"-P","-m","aletheia","mcp"')

    old, new = entries()
    assert old == len(HOSTS) and new == 0
    invoke("install", "--refresh")
    assert entries() == (len(HOSTS), len(HOSTS))
    assert "updated" not in invoke("install", "--refresh")


def test_hook_help_does_not_run_the_hook(hook_env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "aletheia", "hook", "claude-code", "Stop",
                           "--help"], env=hook_env, input="{}", capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "Usage:" in proc.stdout
    assert not os.path.exists(os.path.join(hook_env["ALETHEIA_HOME"], "hub.db"))


def test_read_commands_that_exit_early_lose_no_output_and_keep_their_status(
        hook_env: dict[str, str]) -> None:
    """search/get/context/… leave with os._exit once done: everything they printed arrives,
    and a failure still exits non-zero."""
    big = "word " * 5000
    ids = [json.loads(invoke("save", "--project", "/p", "--json", f"note {i} {big}"))["id"]
           for i in range(20)]
    me = [sys.executable, "-m", "aletheia"]
    out = subprocess.run([*me, "get", "--json", *ids], env=hook_env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert [m["id"] for m in json.loads(out.stdout)] == ids  # ~500 KB, all of it
    bad = subprocess.run([*me, "search", "--project", "/p", "--kind", "bogus", "x"],
                         env=hook_env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "--kind 'bogus'" in bad.stderr
    usage = subprocess.run([*me, "search"], env=hook_env, capture_output=True, text=True,
                           timeout=60)
    assert usage.returncode == 2 and "Missing argument" in usage.stderr

"""aletheia rules sync: enabled rules into each host's instruction file, in a block we own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from aletheia import rules
from aletheia.rules_sync import BEGIN, END, sync


def test_block_is_added_updated_and_removed_leaving_the_rest(conn: Any, tmp_path: Path) -> None:
    project = str(tmp_path)
    claude_md = tmp_path / "CLAUDE.md"
    original = "# My project\n\nUse tabs.\n"
    claude_md.write_text(original)
    r1 = rules.add_rule(conn, "Run the tests before committing", project=project)
    rules.add_rule(conn, "Only for gemini", tools=["gemini"])
    rules.add_rule(conn, "Disabled rule", enabled=False)

    first = sync(conn, "claude-code", tmp_path, project)
    text = claude_md.read_text()
    assert first.changed and first.rules == 1
    assert text.startswith(original)
    assert BEGIN in text and END in text and "- Run the tests before committing" in text
    assert "Only for gemini" not in text and "Disabled rule" not in text
    assert not sync(conn, "claude-code", tmp_path, project).changed  # idempotent

    claude_md.write_text(text + "\nMore notes of mine.\n")  # the user edits outside the block
    rules.add_rule(conn, "Prefer small commits")
    sync(conn, "claude-code", tmp_path, project)
    text = claude_md.read_text()
    assert "- Prefer small commits" in text and text.endswith("More notes of mine.\n")
    assert text.count(BEGIN) == 1

    for rule in rules.list_rules(conn):
        rules.update_rule(conn, rule["id"], enabled=False)
    sync(conn, "claude-code", tmp_path, project)
    assert claude_md.read_text() == original + "\nMore notes of mine.\n"
    assert r1["id"]


def test_each_host_gets_its_own_file(conn: Any, tmp_path: Path) -> None:
    rules.add_rule(conn, "Be terse")
    for host, name in (("codex", "AGENTS.md"), ("gemini", "GEMINI.md"),
                       ("cursor", ".cursor/rules/aletheia.mdc")):
        result = sync(conn, host, tmp_path, str(tmp_path))
        assert result.path == tmp_path / name and result.changed
        assert "- Be terse" in result.path.read_text()
    assert (tmp_path / ".cursor/rules/aletheia.mdc").read_text().startswith("---\n")
    rules.update_rule(conn, rules.list_rules(conn)[0]["id"], enabled=False)
    sync(conn, "cursor", tmp_path, str(tmp_path))
    sync(conn, "codex", tmp_path, str(tmp_path))
    assert not (tmp_path / ".cursor/rules/aletheia.mdc").exists()
    assert not (tmp_path / "AGENTS.md").exists()  # it held only our block


def test_dry_run_and_cli(conn: Any, tmp_path: Path) -> None:
    from aletheia.cli import cli

    rules.add_rule(conn, "Write docstrings")
    command = ["rules", "sync"]  # (the group loads its commands lazily: cli.commands may not hold it yet)
    runner = CliRunner()
    dry = runner.invoke(cli, [*command, "claude-code", "--dir", str(tmp_path), "--dry-run"],
                        catch_exceptions=False)
    assert dry.exit_code == 0, dry.output
    assert "+- Write docstrings" in dry.output and not (tmp_path / "CLAUDE.md").exists()
    real = runner.invoke(cli, [*command, "claude-code", "--dir", str(tmp_path)],
                         catch_exceptions=False)
    assert "written (1 rule(s))" in real.output
    assert "- Write docstrings" in (tmp_path / "CLAUDE.md").read_text()

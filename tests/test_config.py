"""The configuration registry (aletheia/config.py): one table of variables and settings, one
reader, one strict boolean parser, one error; the README, the CLI's help and the code held to it
(as sqlite-utils checks its docs against its commands)."""

from __future__ import annotations

import ast
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from aletheia import config, settings
from aletheia.cli import cli
from aletheia.config import ConfigError

REPO = Path(__file__).resolve().parent.parent
NAME = re.compile(r"\bALETHEIA_[A-Z][A-Z0-9_]*\b")


def _sources() -> list[Path]:
    files = [*REPO.glob("aletheia/**/*.py"), *REPO.glob("tasks/*.py"), *REPO.glob("web/*.py"),
             *REPO.glob("hooks/*.py"), *REPO.glob("bench/*.py"), *REPO.glob("scripts/*"),
             *REPO.glob("web/static/*.js")]
    linked = {("aletheia", n) for n in ("tasks", "web", "hooks")}
    return [p for p in files if p.is_file() and p.relative_to(REPO).parts[:2] not in linked]


def test_every_variable_the_code_names_is_in_the_registry() -> None:
    named = {m for p in _sources() for m in NAME.findall(p.read_text("utf-8", "replace"))}
    assert named - set(config.VARS) == set()
    assert {v for v in config.VARS if config.VARS[v].scope != "scripts"} <= named


def _help_texts(group: click.Group, ctx: click.Context) -> list[str]:
    out = [group.get_help(ctx)]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        sub = click.Context(command, info_name=name, parent=ctx)
        out.extend(_help_texts(command, sub) if isinstance(command, click.Group)
                   else [command.get_help(sub)])
    return out


def test_the_cli_help_names_only_known_variables() -> None:
    text = "\n".join(_help_texts(cli, click.Context(cli, info_name="aletheia")))
    named = set(NAME.findall(text))
    assert named and named <= set(config.VARS), named - set(config.VARS)
    # the defaults the help shows are the registry's
    assert f"$ALETHEIA_PORT or {config.VARS['ALETHEIA_PORT'].default}" in text


def _readme_table() -> dict[str, str]:
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme[readme.index("## Configuration"):]
    section = section[:section.index("\n## ", 1)]
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^\| `(ALETHEIA_[A-Z0-9_]+)` \| ([^|]*) \|", section, re.M)}


def test_the_readme_lists_every_variable_with_its_default() -> None:
    table = _readme_table()
    users = {n: v for n, v in config.VARS.items() if v.scope == "user"}
    assert set(table) == set(users)
    for name, var in users.items():
        if var.kind == "bool":
            assert table[name].strip() == ("on" if var.default else "off"), name
        elif var.default not in ("", []):
            assert table[name].strip() == f"`{var.default}`", name
    readme = (REPO / "README.md").read_text("utf-8")
    named = set(NAME.findall(readme))
    assert named <= set(config.VARS), named - set(config.VARS)
    assert all(f"`{key}`" in readme for key in config.SETTINGS)


def _env_reads(path: Path) -> list[str]:
    """``….get("ALETHEIA_…")``, ``getenv(…)`` or ``environ[…]`` reads of our variables,
    directly or through a module constant that holds the name."""
    tree = ast.parse(path.read_text("utf-8"))
    held = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            and node.value.value.startswith("ALETHEIA_")
            for t in node.targets if isinstance(t, ast.Name)}

    def ours(arg: ast.expr) -> bool:
        return (isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                and arg.value.startswith("ALETHEIA_")) or (isinstance(arg, ast.Name)
                                                          and arg.id in held)

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and ours(node.args[0]):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("get", "getenv", "pop", "setdefault"):
                out.append(f"{path.relative_to(REPO)}:{node.lineno}")
        if isinstance(node, ast.Subscript) and ours(node.slice) \
                and ast.unparse(node.value).split(".")[-1] in ("environ", "env"):
            out.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return out


def test_only_the_registry_reads_the_environment() -> None:
    code = [p for p in _sources() if p.suffix == ".py"
            and p.parts[-2] in ("aletheia", "cli", "capture", "install", "importers", "extract",
                                "tasks", "web", "hooks")]
    offenders = [hit for p in code if p.name != "config.py" for hit in _env_reads(p)]
    assert offenders == []


@pytest.mark.parametrize(("text", "value"), [
    ("1", True), ("true", True), ("YES", True), (" on ", True),
    ("0", False), ("false", False), ("No", False), ("off", False),
])
def test_one_strict_boolean_parser(text: str, value: bool) -> None:
    assert config.env("ALETHEIA_SEMANTIC", {"ALETHEIA_SEMANTIC": text}) is value


@pytest.mark.parametrize(("name", "text", "message"), [
    ("ALETHEIA_SEMANTIC", "maybe", "ALETHEIA_SEMANTIC must be one of 1/true/yes/on or "
                                   "0/false/no/off, not 'maybe'"),
    ("ALETHEIA_PORT", "http", "ALETHEIA_PORT must be an integer, not 'http'"),
    ("ALETHEIA_PORT", "70000", "ALETHEIA_PORT must be between 0 and 65535, not 70000"),
    ("ALETHEIA_LEASE_SECONDS", "nan", "ALETHEIA_LEASE_SECONDS must be between 0.05 and 86400"),
])
def test_one_error_for_a_bad_value(name: str, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        config.env(name, {name: text})
    assert err.value.message.startswith(message)


def test_unset_blank_and_aliases() -> None:
    assert config.env("ALETHEIA_PORT", {}) == 8377
    assert config.env("ALETHEIA_PORT", {"ALETHEIA_PORT": "  "}) == 8377
    assert config.env("ALETHEIA_CONTEXT", {"ALETHEIA_CONTEXT": "fresh"}) is False
    assert config.env("ALETHEIA_EXCLUDED_PROJECTS", {"ALETHEIA_EXCLUDED_PROJECTS": "a, b:c"}) \
        == ["a", "b", "c"]
    assert config.env("ALETHEIA_ALLOWED_HOSTS", {"ALETHEIA_ALLOWED_HOSTS": "a.b, [::1]"}) \
        == ["a.b", "[::1]"]
    # set but empty switches the provider off, even when the setting names one
    assert config.env("ALETHEIA_PROVIDER", {"ALETHEIA_PROVIDER": ""}) == "off"
    assert config.env("ALETHEIA_PROVIDER", {}) == ""


def test_a_bad_value_is_one_line_and_a_non_zero_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "perhaps")
    out = CliRunner().invoke(cli, ["search", "anything"])
    assert out.exit_code != 0
    assert "ALETHEIA_SEMANTIC must be one of" in out.output
    assert "Traceback" not in out.output


def test_doctor_says_where_each_value_came_from(conn: sqlite3.Connection,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_LEASE_SECONDS", "90")
    monkeypatch.setenv("ALETHEIA_API_KEY", "k" * 40)
    settings.put(conn, "context.recent", 3)
    out = CliRunner().invoke(cli, ["doctor", "--json"])
    check = next(c for c in json.loads(out.stdout)["checks"] if c["name"] == "config")
    entries: dict[str, Any] = {e["name"]: e for e in check["data"]["entries"]}
    assert set(entries) == set(config.VARS) | set(config.SETTINGS)
    assert (entries["ALETHEIA_LEASE_SECONDS"]["value"], entries["ALETHEIA_LEASE_SECONDS"]["source"]) \
        == (90.0, "environment")
    assert entries["ALETHEIA_API_KEY"]["value"] == "(set)"  # a secret is never printed
    assert (entries["ALETHEIA_PORT"]["value"], entries["ALETHEIA_PORT"]["source"]) \
        == (8377, "default")
    assert (entries["context.recent"]["value"], entries["context.recent"]["source"]) \
        == (3, "setting")
    text = CliRunner().invoke(cli, ["doctor"]).output
    assert re.search(r"ALETHEIA_LEASE_SECONDS\s+90\.0\s+\(environment\)", text)
    assert re.search(r"context\.recent\s+3\s+\(setting\)", text)
    monkeypatch.setenv("ALETHEIA_PORT", "none")
    bad = CliRunner().invoke(cli, ["doctor"])
    assert bad.exit_code == 1 and "ALETHEIA_PORT must be an integer" in bad.output

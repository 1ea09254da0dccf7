"""aletheia/vocab.py is the one list of each fixed word: everything else agrees with it."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path
from typing import Any

import click

from aletheia import vocab
from aletheia.capture.adapters import ADAPTERS
from aletheia.install import HOSTS as INSTALLERS
from aletheia.web.rest import openapi

REPO = Path(__file__).resolve().parent.parent


def _check_values(conn: sqlite3.Connection, table: str, column: str) -> tuple[str, ...]:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    m = re.search(column + r"[^,]*?CHECK \(" + column + r" IN \(([^)]*)\)\)", sql)
    assert m, sql
    return tuple(v.strip().strip("'") for v in m.group(1).split(","))


def test_the_schema_checks_the_same_words(conn: sqlite3.Connection) -> None:
    assert _check_values(conn, "job", "state") == vocab.JOB_STATES
    assert _check_values(conn, "fact", "status") == vocab.FACT_STATUSES
    assert set(vocab.OPEN_JOB_STATES) < set(vocab.JOB_STATES)
    assert sorted(vocab.JOB_STATE_ORDER) == sorted(vocab.JOB_STATES) == sorted(vocab.JOB_STATE_LABELS)


def test_every_host_has_an_adapter_and_an_installer() -> None:
    assert set(ADAPTERS) == set(vocab.HOSTS)
    assert set(INSTALLERS) == set(vocab.HOSTS)


def test_the_cli_offers_the_same_hosts_and_states() -> None:
    from aletheia.cli import cli

    def choices(command: click.Command, param: str) -> tuple[str, ...]:
        for p in command.params:
            if p.name == param:
                assert isinstance(p.type, click.Choice)
                return tuple(p.type.choices)
        raise AssertionError(param)

    ctx = click.Context(cli)
    install = cli.get_command(ctx, "install")
    jobs = cli.get_command(ctx, "jobs")
    assert install is not None and jobs is not None
    assert choices(install, "host") == vocab.HOSTS
    assert set(choices(jobs, "state")) == set(vocab.JOB_STATES)


def _enums(node: Any) -> list[list[Any]]:
    if isinstance(node, dict):
        found = [node["enum"]] if "enum" in node else []
        return found + [e for v in node.values() for e in _enums(v)]
    if isinstance(node, list):
        return [e for v in node for e in _enums(v)]
    return []


def test_the_openapi_enums_come_from_the_vocabulary() -> None:
    enums = {tuple(e) for e in _enums(openapi())}
    assert vocab.HOSTS in enums
    assert vocab.SCOPES in enums
    assert vocab.JOB_STATES in enums
    assert vocab.FACT_STATUSES in enums
    assert (*vocab.FACT_STATUSES, "any") in enums
    # No enum repeats a vocabulary list in another order or with a word missing.
    for words in (vocab.HOSTS, vocab.SCOPES, vocab.JOB_STATES, vocab.FACT_STATUSES):
        for e in enums:
            assert not (set(e) & set(words)) or set(words) <= set(e) or len(e) == 1, e


def _options(html: str, form: str, select: str) -> list[str]:
    body = html[html.index(f'id="{form}"'):]
    body = body[body.index(f'name="{select}"'):body.index("</select>")]
    return [v for v in re.findall(r'<option value="([^"]*)"', body) if v]


def test_the_dashboard_lists_are_the_vocabulary() -> None:
    # The dashboard is plain JS with no build step: its lists are checked here against the
    # module (GET /v1/vocabulary serves the same lists to any client that would rather ask).
    js = (REPO / "web" / "static" / "app.js").read_text("utf-8")
    html = (REPO / "web" / "static" / "index.html").read_text("utf-8")
    hosts = re.search(r"const HOSTS = \[([^\]]*)\]", js)
    assert hosts is not None
    assert tuple(re.findall(r'"([^"]+)"', hosts.group(1))) == vocab.HOSTS
    assert set(_options(html, "jobs-form", "state")) == set(vocab.JOB_STATES)
    assert set(_options(html, "facts-form", "status")) == {*vocab.FACT_STATUSES, "any"}
    badges = re.search(r"function jobBadge[^{]*\{[^{]*\{([^}]*)\}", js)
    assert badges is not None
    assert set(re.findall(r"(\w+):", badges.group(1))) == set(vocab.JOB_STATES)


def test_every_source_written_is_in_the_vocabulary() -> None:
    known = set(vocab.SOURCES) | set(vocab.IMPORT_SOURCES)
    found: set[str] = set()
    for path in [*REPO.glob("aletheia/**/*.py"), *REPO.glob("tasks/*.py"), *REPO.glob("web/*.py")]:
        if path.relative_to(REPO).parts[:2] in {("aletheia", n) for n in ("tasks", "web", "hooks")}:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            # memories are written by MemoryIn(...) and by the capture pipeline's ingest(...)
            call = ast.unparse(node.func).split(".")[-1] if isinstance(node, ast.Call) else ""
            if call in ("MemoryIn", "ingest", "ingest_events", "to_memory"):
                found.update(k.value.value for k in node.keywords
                             if k.arg == "source" and isinstance(k.value, ast.Constant)
                             and isinstance(k.value.value, str))
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and any(isinstance(t, ast.Name) and t.id == "SOURCE" for t in node.targets):
                found.add(str(node.value.value))
    assert found and found <= known, found - known

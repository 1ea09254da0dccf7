"""The MCP server in process (the SDK's Client over memory streams): tool list, schemas and
descriptions, the same results as the services, tool errors as MCP errors with a message."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio

from aletheia import store
from aletheia.search import SearchQuery, search
from aletheia.web.connections import Connections
from aletheia.web.mcp_server import build_server


def _call(default_project: str | None, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import Client

    conns = Connections()
    server = build_server(conns.get, default_project=default_project)

    async def main() -> list[Any]:
        out: list[Any] = []
        async with Client(server, mode="legacy") as c:
            out.append((await c.list_tools()).tools)
            for name, args in calls:
                out.append(await c.call_tool(name, args))
        return out

    try:
        return anyio.run(main)
    finally:
        conns.close_all()


def test_tools_are_described_with_schemas(aletheia_home: Path) -> None:
    tools = {t.name: t for t in _call(None, [])[0]}
    assert {"search", "timeline", "get_observations", "save_memory", "context", "list_facts",
            "pin_memory", "dismiss"} == set(tools)
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30
        assert tool.input_schema["type"] == "object"
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["search"].annotations.read_only_hint is True
    assert tools["save_memory"].annotations.read_only_hint is False
    limit = tools["search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)


def test_results_match_the_services_and_errors_are_tool_errors(conn: sqlite3.Connection) -> None:
    for i, word in enumerate(["alpha", "bravo", "charlie"]):
        store.write_memory(conn, store.MemoryIn(project="p", kind="note", title=f"{word} note",
                                                narrative=f"{word} body", session_id="s",
                                                created_at=1_700_000_000_000 + i))
    expected = [h.id for h in search(conn, SearchQuery(q="alpha charlie", project="p"))]
    _tools, found, saved, bad_limit, unknown, no_text = _call("p", [
        ("search", {"query": "alpha charlie"}),
        ("save_memory", {"text": "remember: bravo is the default"}),
        ("search", {"query": "alpha", "limit": 500}),
        ("timeline", {"anchor": "NOPE"}),
        ("save_memory", {"text": ""}),
    ])
    assert [h["id"] for h in found.structured_content["result"]] == expected
    assert saved.structured_content["project"] == "p"
    assert conn.execute("SELECT source FROM memory WHERE id = ?",
                        (saved.structured_content["id"],)).fetchone()[0] == "mcp"
    for result in (bad_limit, unknown, no_text):
        assert result.is_error is True and result.content[0].text
    assert "NOPE" in unknown.content[0].text


def test_stdio_mcp_does_not_import_the_web_app() -> None:
    import subprocess
    import sys

    probe = ("import sys; from aletheia.cli.serve import mcp_command; "
             "from aletheia.web.connections import Connections; "
             "from aletheia.web.mcp_server import build_server; "
             "build_server(Connections().get, default_project='p'); "
             "print(sorted(m for m in sys.modules if m in ('aletheia.web.app', 'aletheia.web.rest', "
             "'aletheia.web.dashboard')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_descriptions_are_clean_and_search_text_is_a_compact_index(
        conn: sqlite3.Connection) -> None:
    for i, word in enumerate(["deploy", "staging", "rollback"]):
        store.write_memory(conn, store.MemoryIn(
            project="p", kind="note", title=f"Staging {word} notes", session_id="s",
            narrative=f"how we {word} to staging: " + "details " * 200,
            created_at=1_700_000_000_000 + i))
    tools, found, empty = _call("p", [("search", {"query": "staging deploy"}),
                                      ("search", {"query": "kubernetes"})])
    for t in tools:
        assert "  " not in t.description, (t.name, t.description)
        assert "\n" not in t.description.replace("\n\n", ""), t.name
    text = found.content[0].text
    lines = text.splitlines()
    hits = found.structured_content["result"]
    assert len(found.content) == 1 and len(lines) == 1 + len(hits)
    for line, hit in zip(lines[1:], hits, strict=True):
        assert line.startswith(hit["id"] + "  ")
        assert "Staging" in line and "matched" in line and "{" not in line
    assert "deploy" in lines[1]
    assert len(text) < 200 * len(hits)  # an index, not the objects again
    assert "no matches" in empty.content[0].text and "all_projects" in empty.content[0].text

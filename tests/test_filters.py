"""One filter builder, one meaning of ``project=``: the project's own rows plus promoted (global)
ones, on every interface — the services, the CLI, REST and MCP — for search, memory lists,
pins, facts and the timeline; and one paged job list."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from aletheia import curate, facts, filters, listing, memories, store
from aletheia.cli import cli
from aletheia.errors import InvalidInput
from aletheia.search import SearchQuery, search
from aletheia.web.app import create_app

TOKEN = "t" * 32
T0 = 1_700_000_000_000


@pytest.fixture
def rows(conn: sqlite3.Connection) -> dict[str, str]:
    """In project "mine": its own memory and fact; in "other": one of each kept there and one of
    each promoted to global scope.  Every text holds the word "zeppelin"."""
    out: dict[str, str] = {}
    for name, project in (("own", "mine"), ("other", "other"), ("global", "other")):
        out[name] = store.write_memory(conn, store.MemoryIn(
            project=project, kind="note", title=f"zeppelin {name} memory", pinned=True,
            created_at=T0 + len(out) * 1000)).id
        out[f"{name}_fact"] = facts.add_facts(conn, [facts.FactIn(
            project=project, text=f"the zeppelin {name} fact holds here")]).added[0]
    curate.promote(conn, out["global"])
    curate.promote(conn, out["global_fact"])
    return out


def _want(rows: dict[str, str], facts_too: bool = False) -> set[str]:
    names = ["own", "global"] + (["own_fact", "global_fact"] if facts_too else [])
    return {rows[n] for n in names}


def test_services(conn: sqlite3.Connection, rows: dict[str, str]) -> None:
    hits = {h.id for h in search(conn, SearchQuery(q="zeppelin", project="mine", limit=20))}
    assert hits == _want(rows, facts_too=True)
    assert {m["id"] for m in listing.list_memories(conn, project="mine").items} == _want(rows)
    pinned = listing.list_memories(conn, project="mine", pinned=True, dismissed=None)
    assert {m["id"] for m in pinned.items} == _want(rows)
    assert {f["id"] for f in listing.list_facts(conn, project="mine").items} == \
        {rows["own_fact"], rows["global_fact"]}
    around = memories.timeline(conn, at=T0 + 1000, project="mine", before=10, after=10)
    assert {m["id"] for m in around} == _want(rows)
    # scope narrows: the project's own rows only
    own = listing.list_memories(conn, project="mine", scope="project").items
    assert [m["id"] for m in own] == [rows["own"]]


def test_cli(conn: sqlite3.Connection, rows: dict[str, str]) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["search", "zeppelin", "-p", "mine", "--json", "--limit", "20"],
                        catch_exceptions=False)
    assert {h["id"] for h in json.loads(out.stdout)} == _want(rows, facts_too=True)
    out = runner.invoke(cli, ["facts", "-p", "mine", "--json"], catch_exceptions=False)
    assert {f["id"] for f in json.loads(out.stdout)} == {rows["own_fact"], rows["global_fact"]}


@pytest.fixture
def client(aletheia_home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(token=TOKEN, mcp=False), base_url="http://127.0.0.1:8377",
                    headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def test_rest(client: TestClient, rows: dict[str, str]) -> None:
    def ids(path: str, **params: Any) -> set[str]:
        return {i["id"] for i in client.get(path, params={"project": "mine", **params})
                .json()["items"]}

    assert ids("/v1/search", q="zeppelin", limit=20) == _want(rows, facts_too=True)
    assert ids("/v1/memories") == _want(rows)
    assert ids("/v1/pins") == _want(rows)
    assert ids("/v1/facts") == {rows["own_fact"], rows["global_fact"]}


def test_mcp(conn: sqlite3.Connection, rows: dict[str, str]) -> None:
    from mcp import Client

    from aletheia.web.connections import Connections
    from aletheia.web.mcp_server import build_server

    conns = Connections()
    server = build_server(conns.get, default_project="mine")

    async def main() -> list[Any]:
        async with Client(server, mode="legacy") as c:
            return [(await c.call_tool("search", {"query": "zeppelin", "limit": 20})),
                    (await c.call_tool("list_facts", {}))]

    try:
        found, listed = anyio.run(main)
    finally:
        conns.close_all()
    assert {h["id"] for h in found.structured_content["result"]} == _want(rows, facts_too=True)
    assert {f["id"] for f in listed.structured_content["result"]} == \
        {rows["own_fact"], rows["global_fact"]}


def test_the_builder() -> None:
    w = filters.memories(filters.Filter(project="p", kind="note", since=5, pinned=True), "m")
    assert w.sql() == (" WHERE (m.project = ? OR m.scope = 'global') AND m.kind = ? AND "
                       "m.created_at >= ? AND m.pinned = ? AND m.dismissed_at IS NULL")
    assert w.params == ["p", "note", 5, 1]
    f = filters.facts(filters.Filter(project="p", dismissed=None))
    assert f.sql(" AND ") == " AND (project = ? OR scope = 'global')"
    with pytest.raises(InvalidInput):
        filters.Filter(scope="everywhere")


def test_one_job_list_pages_newest_first(conn: sqlite3.Connection) -> None:
    from aletheia.tasks import jobs

    for i in range(7):
        jobs.create_job(conn, f"s{i}", "p", now=T0 + i)
    seen: list[int] = []
    cursor = None
    while True:
        page = jobs.list_jobs(conn, limit=3, cursor=cursor)
        seen += [j.id for j in page.jobs]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen, reverse=True) and len(seen) == 7
    assert [j.id for j in jobs.list_jobs(conn, project="elsewhere").jobs] == []

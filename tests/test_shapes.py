"""One shape per result (aletheia/shapes.py): the REST models are held to it, and every route that
returns a memory or a fact is called with real ids of both kinds (a fact answered 500 on
/v1/dismiss and /v1/promote when a hand-built fact dict lacked ``created``)."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from aletheia import facts, shapes, store
from aletheia.search import Hit
from aletheia.web import rest
from aletheia.web import schemas as s
from aletheia.web.app import create_app

TOKEN = "t" * 32


def _keys(td: Any) -> set[str]:
    return set(get_type_hints(td))


@pytest.mark.parametrize(("model", "shape"), [
    (s.Memory, shapes.Memory), (s.Fact, shapes.Fact), (s.Session, shapes.Session),
    (s.Job, shapes.Job), (s.CuratedMemory, shapes.TypedMemory), (s.CuratedFact, shapes.TypedFact),
])
def test_rest_models_are_the_shapes(model: type[BaseModel], shape: Any) -> None:
    assert set(model.model_fields) == _keys(shape)


def test_session_detail_and_search_hit() -> None:
    assert set(s.SessionDetail.model_fields) == _keys(shapes.Session) | {"memories"}
    assert set(s.Hit.model_fields) == {f.name for f in dataclasses.fields(Hit)} | {"created"}


def test_every_service_builds_the_shape(conn: sqlite3.Connection) -> None:
    from aletheia import curate, listing, memories, sessions
    from aletheia.tasks import jobs

    mid = store.write_memory(conn, store.MemoryIn(project="p", kind="note", title="one",
                                                  session_id="s1")).id
    fid = facts.add_facts(conn, [facts.FactIn(project="p", text="the build uses make")]).added[0]
    jobs.create_job(conn, "s1", "p", now=1)
    memory_dicts = [memories.get_memory(conn, mid), listing.list_memories(conn).items[0],
                    memories.timeline(conn, mid)[0]]
    for m in memory_dicts:
        assert set(m) == _keys(shapes.Memory)
    for f in (listing.list_facts(conn).items[0], facts.list_facts(conn)[0]):
        assert set(f) == _keys(shapes.Fact)
    for curated in (curate.dismiss(conn, fid), curate.promote(conn, fid, scope="project"),
                    curate.dismiss(conn, mid), curate.pin(conn, mid)):
        assert set(curated) == _keys(shapes.TypedFact if curated["type"] == "fact"
                                     else shapes.TypedMemory)
    assert set(sessions.list_sessions(conn).items[0]) == _keys(shapes.Session)
    assert set(jobs.list_jobs(conn).jobs[0].to_dict()) == _keys(shapes.Job)


# -- every route that returns a memory or a fact --------------------------------------------------

# How to call each such route; "{id}" is a memory id in one call and a fact id in the other.
CALLS: dict[tuple[str, str], tuple[str, dict[str, Any] | None]] = {
    ("GET", "/v1/memories"): ("/v1/memories?project=p", None),
    ("GET", "/v1/memories/{id}"): ("/v1/memories/{id}", None),
    ("PATCH", "/v1/memories/{id}"): ("/v1/memories/{id}", {"title": "renamed zeppelin memory"}),
    ("GET", "/v1/pins"): ("/v1/pins?project=p", None),
    ("POST", "/v1/pins"): ("/v1/pins", {"id": "{id}"}),
    ("DELETE", "/v1/pins/{id}"): ("/v1/pins/{id}", None),
    ("POST", "/v1/dismiss"): ("/v1/dismiss", {"id": "{id}"}),
    ("POST", "/v1/promote"): ("/v1/promote", {"id": "{id}"}),
    ("GET", "/v1/search"): ("/v1/search?q=zeppelin&project=p&include_dismissed=true", None),
    ("GET", "/v1/timeline"): ("/v1/timeline?anchor={id}", None),
    ("GET", "/v1/observations"): ("/v1/observations?ids={id}", None),
    ("GET", "/v1/facts"): ("/v1/facts?project=p&status=any", None),
}
_SHAPED = {"Memory", "Fact", "CuratedMemory", "CuratedFact", "Hit"}


def _refs(node: Any, schemas: dict[str, Any], seen: set[str]) -> set[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                _refs(schemas.get(name, {}), schemas, seen)
        for value in node.values():
            _refs(value, schemas, seen)
    elif isinstance(node, list):
        for value in node:
            _refs(value, schemas, seen)
    return seen


def _shaped_routes() -> set[tuple[str, str]]:
    doc = rest.openapi()
    schemas = doc["components"]["schemas"]
    out = set()
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            ok = {k: v for k, v in op["responses"].items() if k.startswith("2")}
            if _refs(ok, schemas, set()) & _SHAPED:
                out.add((method.upper(), path))
    return out


def test_the_table_names_every_route_that_returns_a_memory_or_a_fact() -> None:
    assert _shaped_routes() == set(CALLS)


@pytest.fixture
def client(aletheia_home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(token=TOKEN, mcp=False), base_url="http://127.0.0.1:8377",
                    headers={"Authorization": f"Bearer {TOKEN}"},
                    raise_server_exceptions=False) as c:
        yield c


def test_every_shaped_route_with_real_ids_of_both_kinds(client: TestClient,
                                                        conn: sqlite3.Connection) -> None:
    mid = store.write_memory(conn, store.MemoryIn(
        project="p", kind="note", title="zeppelin memory", session_id="s1")).id
    fid = facts.add_facts(conn, [facts.FactIn(project="p",
                                              text="the zeppelin fact holds here")]).added[0]
    answered: dict[tuple[str, str, str], int] = {}
    for (method, _), (path, body) in CALLS.items():
        for kind, item in (("memory", mid), ("fact", fid)):
            url = path.replace("{id}", item)
            payload = {k: (v.replace("{id}", item) if isinstance(v, str) else v)
                       for k, v in (body or {}).items()} if body is not None else None
            r = client.request(method, url, json=payload)
            answered[(method, path, kind)] = r.status_code
            assert r.status_code < 500, (method, url, r.text)
            assert r.headers["content-type"].startswith("application/json")
            if r.status_code >= 400:
                assert "{id}" in path or "{id}" in str(body)  # only an id of the other kind
                assert r.status_code == 404 and r.json()["message"], (method, url, r.text)
    # Both kinds where both make sense; a fact id is "not found" on memory-only routes.
    for route in ("/v1/dismiss", "/v1/promote"):
        assert answered[("POST", route, "memory")] == answered[("POST", route, "fact")] == 200
    assert answered[("GET", "/v1/memories/{id}", "fact")] == 404
    hits = client.get("/v1/search", params={"q": "zeppelin", "project": "p",
                                            "include_dismissed": "true"}).json()["items"]
    assert {h["type"] for h in hits} == {"memory", "fact"}
    assert all(h["via"] for h in hits)  # which list found each hit

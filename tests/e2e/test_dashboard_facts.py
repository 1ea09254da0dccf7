"""Curating facts from the dashboard, end to end in Chromium against the real server: dismiss
and restore a fact from its detail and from the facts list, promote it to global scope and take
it back, dismiss one from search results in bulk; each click is checked against what REST, the
search service and the context block then say, and no request may answer 5xx (fact dismiss and
promote answered 500 before the result shapes were unified, issue 14)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia import store
from aletheia.facts import FactIn, add_facts
from tests.e2e.browser import MARKS, SHOTS, signed_in
from tests.webproc import Server, running_server

pytestmark = MARKS

SHOP = "/work/shop-api"
OTHER = "/work/admin-ui"
T0 = 1_800_000_000_000


@pytest.fixture
def server(aletheia_home: Path, conn: sqlite3.Connection) -> Iterator[Server]:
    source = store.write_memory(conn, store.MemoryIn(
        project=SHOP, kind="tool_event", session_id="s1", created_at=T0,
        title="Bash: $ alembic upgrade head",
        narrative='input: {"command": "alembic upgrade head"}\n\noutput:\nRunning upgrade ok')).id
    add_facts(conn, [
        FactIn(project=SHOP, kind="command", confirmed=2, observed_at=T0, session_id="s1",
               subject="command:migrate", value="alembic upgrade head", source_ids=[source],
               text="Apply the migrations with `alembic upgrade head`."),
        FactIn(project=SHOP, kind="decision", stated=True, observed_at=T0, session_id="s1",
               text="Decision: webhook retries are deduplicated by event id."),
        FactIn(project=SHOP, kind="convention", stated=True, observed_at=T0, session_id="s1",
               text="Convention: every endpoint returns problem+json errors."),
    ])
    store.write_memory(conn, store.MemoryIn(project=OTHER, kind="note", title="Admin UI notes",
                                            narrative="the admin ui talks to the shop api",
                                            created_at=T0))
    with running_server(aletheia_home) as srv:
        yield srv


def _fact(c: Any, text: str) -> dict[str, Any]:
    items = c.get("/v1/facts", params={"status": "any", "limit": 200}).json()["items"]
    return next(f for f in items if f["text"].startswith(text))


def _searched(c: Any, q: str, project: str) -> list[str]:
    return [h["id"] for h in c.get("/v1/search", params={"q": q, "project": project}).json()["items"]]


def test_fact_dismiss_and_promote_from_the_dashboard(server: Server) -> None:
    from playwright.sync_api import expect

    with server.client() as c:
        migrate = _fact(c, "Apply the migrations")
        webhook = _fact(c, "Decision: webhook")
        convention = _fact(c, "Convention: every endpoint")
    failures: list[str] = []
    with signed_in(server) as page:
        page.on("response", lambda r: failures.append(f"{r.status} {r.url}")
                if r.status >= 500 else None)
        page.on("pageerror", lambda exc: failures.append(str(exc)))
        page.goto(f"{server.url}/#/facts?p={SHOP}")
        row = page.locator(f"#facts-body tr[data-id='{migrate['id']}']")
        row.locator("button.link").first.click()
        detail = page.locator("#detail")
        expect(detail.locator("h2")).to_have_text(migrate["text"])
        expect(detail.locator("ol.timeline button")).to_have_text(migrate["source_ids"])

        # Dismiss from the detail: hidden from the list, search and the block; kept.
        detail.locator("#fact-dismiss").click()
        expect(page.locator("#toast")).to_contain_text("fact dismissed")
        expect(detail.locator(".fact-status")).to_contain_text("dismissed")
        expect(detail.locator("#fact-dismiss")).to_have_text("Restore")
        expect(row).to_have_count(0)  # the active list no longer holds it
        with server.client() as c:
            assert _fact(c, "Apply the migrations")["status"] == "dismissed"
            assert migrate["id"] not in _searched(c, "alembic migrations", SHOP)
            block = c.get("/v1/context", params={"project": SHOP}).json()["block"]
            assert "alembic upgrade head`." not in block
        detail.locator("#fact-dismiss").click()
        expect(page.locator("#toast")).to_contain_text("fact restored")
        expect(detail.locator(".fact-status")).to_contain_text("active")
        expect(row).to_have_count(1)
        with server.client() as c:
            assert _fact(c, "Apply the migrations")["status"] == "active"
            assert migrate["id"] in _searched(c, "alembic migrations", SHOP)

        # Promote: another project's search sees it; and back.
        detail.locator("#fact-promote").click()
        expect(page.locator("#toast")).to_contain_text("fact promoted")
        expect(detail.locator("#fact-promote")).to_have_text("Back to project")
        expect(detail.locator(".meta .badge")).to_have_text("global")
        with server.client() as c:
            assert _fact(c, "Apply the migrations")["scope"] == "global"
            assert migrate["id"] in _searched(c, "alembic migrations", OTHER)
        detail.locator("#fact-promote").click()
        expect(page.locator("#toast")).to_contain_text("back to its project")
        expect(detail.locator("#fact-promote")).to_have_text("Promote to global")
        with server.client() as c:
            assert _fact(c, "Apply the migrations")["scope"] == "project"
            assert migrate["id"] not in _searched(c, "alembic migrations", OTHER)
        page.keyboard.press("Escape")
        expect(detail).to_be_hidden()

        # The list's own button.
        other_row = page.locator(f"#facts-body tr[data-id='{webhook['id']}']")
        other_row.get_by_role("button", name="Dismiss").click()
        expect(other_row).to_have_count(0)
        with server.client() as c:
            assert _fact(c, "Decision: webhook")["status"] == "dismissed"

        # Bulk dismiss from search results, a fact among them.
        page.goto(f"{server.url}/#/search?q=endpoint+problem+json&p={SHOP}")
        hit = page.locator(f"#results li.hit.fact[data-id='{convention['id']}']")
        hit.locator("input.pick").check()
        page.click("#bulk-dismiss")
        expect(page.locator("#toast")).to_contain_text("dismissed 1")
        expect(hit).to_have_count(0)
        with server.client() as c:
            assert _fact(c, "Convention: every endpoint")["status"] == "dismissed"
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "facts-curated-1366-light.png"), full_page=True)
    assert not failures, failures

"""The dashboard in a real headless Chromium (Debian's ``chromium`` driven by Playwright's Python
package): sign in, search, pin, dismiss, add a note and see it redacted, change a setting and see
what it changes; a screenshot is saved under test-artifacts/.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hookproc import run_hook
from tests.settle import replay_spool
from tests.webproc import REPO, Server, running_server, server_env

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed "
                       "(scripts/ci-system-deps installs it)"),
]


@pytest.fixture
def server(aletheia_home: Path) -> Iterator[Server]:
    with running_server(aletheia_home) as srv:
        yield srv


def _section(block: str, heading: str) -> list[str]:
    """The lines of one section of the block ("## Pinned", "## Recent work" …)."""
    lines = block.splitlines()
    start = lines.index(heading) + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("- "):
            break
        out.append(line)
    return out


def _fake_token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def test_dashboard_in_chromium(server: Server, aletheia_home: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with server.client() as c:
        for title, text in [
            ("Websocket reconnect is flaky", "The websocket client drops after idle; add a ping."),
            ("Release checklist", "Bump the version, tag, push, publish the wheel."),
            ("Database migrations", "Never edit an applied migration; add a new number."),
        ]:
            r = c.post("/v1/memories", json={"title": title, "narrative": text,
                                              "project": "dash-demo", "kind": "note"})
            assert r.status_code == 201
        target = c.get("/v1/search", params={"q": "websocket"}).json()["items"][0]["id"]
        # A question and, next in its session, the answer that holds none of its words.
        for title, text in [
            ("Why does the nightly export time out?", "Why does the nightly export time out?"),
            ("Raised the pool size to 20", "It finishes in four minutes now."),
        ]:
            r = c.post("/v1/memories", json={"title": title, "narrative": text, "kind": "note",
                                              "project": "dash-demo", "session_id": "nightly"})
            assert r.status_code == 201
        found = c.get("/v1/search", params={"q": "nightly export timeout",
                                            "project": "dash-demo"}).json()["items"]
        neighbour = found[1]["id"]
        assert found[1]["via"] == ["neighbour"]
    secret = _fake_token(random.Random(11))
    ARTIFACTS.mkdir(exist_ok=True)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            def preview() -> str:
                """Submit the context preview and wait for its block (the page shows "Building
                the block …" from the click until the answer arrives)."""
                page.click("#context-form button[type=submit]")
                expect(page.locator("#context-block")).to_contain_text("</aletheia-memory>")
                return page.locator("#context-block").inner_text()

            page.goto(server.url + "/")
            # Signed out: the page asks for the token (and never puts it in a URL).
            page.fill("#token", server.token)
            page.click("button[type=submit]")
            page.wait_for_selector("#feed-memories li")  # the landing page: the live feed
            assert server.token not in page.url
            cookies = {ck["name"]: ck for ck in page.context.cookies()}
            session = cookies["aletheia_session"]
            assert session["httpOnly"] is True and session["sameSite"] == "Strict"
            assert page.evaluate("document.cookie") == ""

            # Search with a filter, open the hit.
            page.click("#tabs button[data-tab=search]")
            page.fill("#q", "websocket ping")
            page.fill("#f-project", "dash-demo")
            page.click("#search-form button[type=submit]")
            hit = page.locator(f"#results li[data-id='{target}']")
            expect(hit).to_be_visible()
            hit.locator("button.link").click()
            expect(page.locator("#detail-title")).to_have_text("Websocket reconnect is flaky")

            # A session neighbour of a match is marked as one.
            page.click("#tabs button[data-tab=search]")
            page.fill("#q", "nightly export timeout")
            page.click("#search-form button[type=submit]")
            marked = page.locator(f"#results li.neighbour[data-id='{neighbour}']")
            expect(marked).to_be_visible()
            expect(marked.locator(".badge.via-neighbour")).to_be_visible()
            expect(page.locator("#results li.neighbour")).to_have_count(1)
            page.fill("#q", "websocket ping")
            page.click("#search-form button[type=submit]")
            expect(hit).to_be_visible()
            hit.locator("button.link").click()

            # Pin.
            page.click("#act-pin")
            expect(page.locator("#act-pin")).to_have_text("Unpin")
            with server.client() as c:
                assert c.get(f"/v1/memories/{target}").json()["pinned"] is True
                assert [m["id"] for m in c.get("/v1/pins").json()["items"]] == [target]

            # Dismiss: gone from the next search.
            page.click("#act-dismiss")
            expect(page.locator("#act-dismiss")).to_have_text("Undismiss")
            expect(page.locator(f"#results li[data-id='{target}']")).to_have_count(0)
            with server.client() as c:
                assert c.get(f"/v1/memories/{target}").json()["dismissed_at"] is not None

            # A note with a fake secret: stored redacted, and the page shows what was stored.
            page.click("#tabs button[data-tab=note]")
            page.fill("#note-project", "dash-demo")
            page.fill("#note-text", f"CI deploys with GITHUB_TOKEN={secret} from the vault")
            page.click("#note-form button[type=submit]")
            stored = page.locator("#note-stored")
            expect(stored).to_contain_text("[redacted")
            assert secret not in stored.inner_text()
            blob = b"".join(p.read_bytes() for p in aletheia_home.glob("hub.db*"))
            assert secret.encode() not in blob

            # Rules: add one limited to a host.
            page.click("#tabs button[data-tab=rules]")
            page.fill("#rule-text", "Run make check before every commit")
            page.fill("#rule-project", "dash-demo")
            page.check("#rule-hosts input[value=codex]")
            page.click("#rule-form button[type=submit]")
            expect(page.locator("#rules-body tr")).to_have_count(1)
            page.locator("#rules-body .rule-enabled").uncheck()
            page.wait_for_timeout(300)
            with server.client() as c:
                rules = c.get("/v1/rules").json()["items"]
            assert rules[0]["tools"] == ["codex"] and rules[0]["enabled"] is False

            # A setting changes what the code does: exclude a project, and the real hook stops
            # capturing it.
            env = server_env(aletheia_home, ALETHEIA_PROJECT="blocked-demo")
            payload = {"session_id": "s-blocked", "prompt": "first prompt", "cwd": str(aletheia_home)}
            assert run_hook("claude-code", "UserPromptSubmit", payload, env).code == 0
            replay_spool()  # a hook past its watchdog on a busy machine spools, legitimately
            with server.client() as c:
                before = c.get("/v1/memories", params={"project": "blocked-demo"}).json()["items"]
            assert len(before) == 1
            page.click("#tabs button[data-tab=settings]")
            field = page.locator("#setting-excluded_projects")
            field.fill("blocked-*")
            page.locator("form.setting[data-key=excluded_projects] button").click()
            expect(page.locator("#toast")).to_contain_text("excluded_projects")
            payload["prompt"] = "second prompt"
            assert run_hook("claude-code", "UserPromptSubmit", payload, env).code == 0
            replay_spool()
            with server.client() as c:
                after = c.get("/v1/memories", params={"project": "blocked-demo"}).json()["items"]
                assert c.get("/v1/settings/excluded_projects").json()["value"] == ["blocked-*"]
                event = c.post("/v1/events", json={
                    "host": "codex", "event": "UserPromptSubmit", "project": "blocked-demo",
                    "payload": {"session_id": "s2", "prompt": "third"}}).json()
            assert [m["title"] for m in after] == ["first prompt"]
            assert event["accepted"] is False and "excluded" in event["reason"]

            # The context preview on the same screen: the pinned cap changes the block.
            with server.client() as c:
                for hit in c.get("/v1/search", params={"q": "release checklist migrations",
                                                       "project": "dash-demo"}).json()["items"]:
                    if hit["type"] == "memory" and hit["kind"] == "note":
                        c.post("/v1/pins", json={"id": hit["id"]})
            page.fill("#context-project", "dash-demo")
            pinned = _section(preview(), "## Pinned")
            assert len(pinned) == 2
            page.locator("#setting-context\\.pinned").fill("1")
            page.locator("form.setting[data-key='context.pinned'] button").click()
            expect(page.locator("#toast")).to_contain_text("context.pinned = 1")
            block = preview()
            assert pinned[1][2:40] not in block
            assert len(_section(block, "## Pinned")) == 1
            # The rule limited to codex shows only in a codex session's block (once enabled).
            with server.client() as c:
                c.patch(f"/v1/rules/{rules[0]['id']}", json={"enabled": True})
            page.select_option("#context-host", "codex")
            assert "Run make check" in preview()
            page.select_option("#context-host", "gemini")
            assert "Run make check" not in preview()

            # Stats and jobs render.
            page.click("#tabs button[data-tab=stats]")
            expect(page.locator("#stats-figures")).to_contain_text("memories")
            page.click("#tabs button[data-tab=jobs]")
            expect(page.locator("#jobs-body")).to_contain_text("no jobs")
            page.click("#tabs button[data-tab=search]")
            page.fill("#q", "release checklist migrations vault")
            page.fill("#f-project", "")
            page.click("#search-form button[type=submit]")
            expect(page.locator("#results li")).to_have_count(3)
            page.locator("#results li button.link").first.click()
            page.click("#act-timeline")
            expect(page.locator("#detail-extra li")).not_to_have_count(0)
            expect(page.locator("#detail")).not_to_contain_text("null")
            page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()
    assert (ARTIFACTS / "dashboard.png").stat().st_size > 10_000

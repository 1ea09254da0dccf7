"""Every dashboard view in Debian's Chromium (Playwright, ``executable_path``; never a browser
download), at 1366 px and 390 px, light and dark: each saved under
``test-artifacts/dashboard/`` and checked with axe-core (from the npm registry, installed by
``scripts/npm-axe``) for serious or critical violations.  And the live feed: a real hook fires,
and the landing page shows it without a reload.

The store is filled the way a user's is: a real Claude Code session through the real hook
processes, compressed by ``aletheia compress``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.browser import AXE, MARKS, SHOTS, axe, launch, seed_session, sign_in
from tests.hookproc import claude_tool, run_hook
from tests.webproc import Server, running_server, server_env

pytestmark = MARKS


@dataclass
class Seeded:
    server: Server
    root: Path
    ids: dict[str, str]
    home: Path


WIDTHS = {"1366": {"width": 1366, "height": 900}, "390": {"width": 390, "height": 844}}
THEMES = ("light", "dark")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    home = tmp_path_factory.mktemp("views-home")
    root = tmp_path_factory.mktemp("views-repos") / "slugify-kit"
    ids = seed_session(home, root, "sess-views")
    # A next session is given context (the block, per-prompt recall) and searches: the stats
    # view has economics to chart.
    env = server_env(home, HOOK_CWD=str(root))
    base = {"session_id": "sess-next", "transcript_path": "/dev/null", "cwd": str(root)}
    for event, extra in [("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {
            "prompt": "How do we fix the mypy error about missing yaml stubs?"})]:
        assert run_hook("claude-code", event, {**base, "hook_event_name": event, **extra}, env).code == 0
    subprocess.run([sys.executable, "-m", "aletheia", "search", "--project", str(root), "yaml stubs"],
                   env=env, check=True, capture_output=True)
    with running_server(home, env=server_env(home)) as srv:
        yield Seeded(srv, root, ids, home)


VIEWS: list[tuple[str, str, str]] = [
    # (name, hash, a selector that shows the view has its content)
    ("feed", "#/feed", "#feed-memories li.line"),
    ("search", "#/search?q=pytest", "#results li.hit"),
    ("sessions", "#/sessions?session=sess-views", ".session-timeline .step"),
    ("knowledge", "#/knowledge", "#knowledge-block"),
    ("facts", "#/facts", "#facts-body tr"),
    ("jobs", "#/jobs", "#jobs-body tr.job"),
    ("note", "#/note", "#note-form"),
    ("rules", "#/rules", "#rules-body tr"),
    ("settings", "#/settings", "form.setting"),
    ("data", "#/data", "#receipts li"),
    ("stats", "#/stats", "#chart-economics-sessions svg"),
]


def test_every_view_at_two_widths_and_two_themes_with_axe(seeded: Seeded) -> None:
    from playwright.sync_api import expect, sync_playwright

    server, root = seeded.server, seeded.root
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed ({AXE}; scripts/npm-axe installs it)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    project = str(root)
    tool_event = subprocess.run(
        [sys.executable, "-m", "aletheia", "search", "--all-projects", "--json", "--kind",
         "tool_event", "slug lower"], env=server_env(seeded.home),
        capture_output=True, text=True, check=True)
    edit_id = json.loads(tool_event.stdout)[0]["id"]
    report: dict[str, dict[str, list[str]]] = {}
    saved: list[str] = []
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            for theme in THEMES:
                for width, viewport in WIDTHS.items():
                    context = browser.new_context(viewport=viewport, color_scheme=theme)
                    page = context.new_page()
                    errors: list[str] = []
                    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                    page.on("console", lambda msg, errors=errors: errors.append(msg.text)
                            if msg.type == "error" else None)
                    page.goto(server.url + "/")
                    shot = SHOTS / f"login-{width}-{theme}.png"
                    page.screenshot(path=str(shot), full_page=True)
                    saved.append(shot.name)
                    report[f"login-{width}-{theme}"] = axe(page)
                    sign_in(page, server)
                    for name, hash_, ready in VIEWS:
                        page.goto(f"{server.url}/{hash_}")
                        page.wait_for_selector(ready)
                        page.wait_for_timeout(150)
                        shot = SHOTS / f"{name}-{width}-{theme}.png"
                        page.screenshot(path=str(shot), full_page=True)
                        saved.append(shot.name)
                        report[f"{name}-{width}-{theme}"] = axe(page)
                    # A tool event in the detail pane: the command's diff, then Escape closes it.
                    page.goto(f"{server.url}/#/search?q=slug&p={project}&open={edit_id}")
                    expect(page.locator("#detail .diff")).to_be_visible()
                    expect(page.locator("#detail .diff .add")).to_contain_text("lower()")
                    shot = SHOTS / f"detail-{width}-{theme}.png"
                    page.screenshot(path=str(shot), full_page=True)
                    saved.append(shot.name)
                    report[f"detail-{width}-{theme}"] = axe(page)
                    page.keyboard.press("Escape")
                    expect(page.locator("#detail")).to_be_hidden()
                    assert "open=" not in page.url
                    assert not errors, errors
                    context.close()
        finally:
            browser.close()
    counts: dict[str, int] = {}
    for violations in report.values():
        for impact, rules in violations.items():
            counts[impact] = counts.get(impact, 0) + len(rules)
    (SHOTS / "axe.json").write_text(json.dumps({"counts": counts, "pages": report}, indent=2))
    print(f"axe-core violations by impact over {len(report)} pages: {counts}")
    print(f"{len(saved)} screenshots in {SHOTS}")
    bad = {page: {k: v for k, v in found.items() if k in ("serious", "critical")}
           for page, found in report.items()}
    assert not any(bad.values()), {p: v for p, v in bad.items() if v}
    assert len(saved) == len(THEMES) * len(WIDTHS) * (len(VIEWS) + 2)


def test_live_feed_shows_a_hook_without_a_reload(seeded: Seeded) -> None:
    from playwright.sync_api import expect, sync_playwright

    server, root = seeded.server, seeded.root
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            sign_in(page, server)
            expect(page.locator("#feed-status")).to_have_text("live")
            page.evaluate("window.__noReload = true")
            env = server_env(seeded.home, HOOK_CWD=str(root))
            payload = claude_tool("sess-live", str(root), "make live-feed-check", "all green",
                                  "toolu_live_1")
            assert run_hook("claude-code", "PostToolUse", payload, env).code == 0
            # A hook past its watchdog spools; any CLI command replays it (as a user would run).
            subprocess.run([sys.executable, "-m", "aletheia", "stats"], env=env, check=True,
                           capture_output=True)
            line = page.locator("#feed-memories li", has_text="make live-feed-check")
            expect(line).to_be_visible(timeout=20_000)
            expect(page.locator("#feed-sessions li", has_text="sess-live").or_(
                page.locator("#feed-sessions li[data-session='sess-live']"))).to_have_count(1)
            assert page.evaluate("window.__noReload") is True  # the same page, never reloaded
            line.locator("button").click()
            expect(page.locator("#detail pre.cmd")).to_contain_text("$ make live-feed-check")
            expect(page.locator("#detail .exit")).to_be_visible()
            page.screenshot(path=str(SHOTS / "live-feed-1366-light.png"), full_page=True)
        finally:
            browser.close()


def test_search_as_you_type_bulk_dismiss_and_deep_links(seeded: Seeded) -> None:
    from playwright.sync_api import expect, sync_playwright

    server = seeded.server
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            sign_in(page, server)
            page.keyboard.press("/")  # the search key: opens Search with the box focused
            page.keyboard.type("ruf", delay=40)  # no submit: results come as the user types
            hits = page.locator("#results li.hit")
            expect(hits.first).to_be_visible()  # a prefix already matches
            assert "q=ruf" in page.url
            page.keyboard.type("f")
            expect(page).to_have_url(re.compile(r"q=ruff(&|$)"))
            expect(page.locator("#results li.hit mark").first).to_be_visible()
            expect(page.locator("#results mark").first).to_contain_text("ruff", ignore_case=True)
            assert "[ruff]" not in page.locator("#results").inner_text()
            # Two memories (test_dashboard_facts.py dismisses facts, in bulk too).
            memory_hits = page.locator("#results li.hit.memory")
            chosen = [memory_hits.nth(i).get_attribute("data-id") for i in range(2)]
            for i in range(2):
                memory_hits.nth(i).locator("input.pick").check()
            expect(page.locator("#bulk-count")).to_have_text("2 selected")
            page.click("#bulk-dismiss")
            expect(page.locator("#toast")).to_contain_text("dismissed 2")
            for item in chosen:
                expect(page.locator(f"#results li[data-id='{item}']")).to_have_count(0)
            with server.client() as c:
                found = c.get("/v1/search", params={"q": "ruff", "include_dismissed": "true",
                                                    "limit": 50}).json()["items"]
                visible = c.get("/v1/search", params={"q": "ruff", "limit": 50}).json()["items"]
            assert set(chosen) <= {h["id"] for h in found}
            assert not set(chosen) & {h["id"] for h in visible}
            # The URL holds the view: opening it fresh shows the same search.
            url = page.url
            fresh = browser.new_page(viewport={"width": 1366, "height": 900})
            fresh.context.add_cookies(page.context.cookies())
            fresh.goto(url)
            expect(fresh.locator("#q")).to_have_value("ruff")
            expect(fresh.locator("#results li.hit").first).to_be_visible()
        finally:
            browser.close()

"""The dashboard's stats view charts context economics from the core (``blocks.economics``
through ``/v1/stats/context``): real hook processes inject context into a new session of a
seeded project (SessionStart block, per-prompt recall on UserPromptSubmit, per-file recall on
PreToolUse), the agent then searches over REST, and Chromium shows the tokens each kind cost
that session and the fetch that followed.  The dashboard's own searches are not the agent's
fetches and do not count."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.browser import MARKS, SHOTS, seed_session, signed_in
from tests.hookproc import run_hook
from tests.webproc import Server, running_server, server_env

pytestmark = MARKS

SESSION = "sess-econ"


@dataclass
class Seeded:
    server: Server
    root: Path
    home: Path


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    home = tmp_path_factory.mktemp("econ-home")
    root = tmp_path_factory.mktemp("econ-repos") / "textkit"
    seed_session(home, root, "sess-seed")
    with running_server(home, env=server_env(home)) as srv:
        yield Seeded(srv, root, home)


def _injected(stdout: str, event: str) -> str:
    """What a Claude Code hook handed the agent (its ``additionalContext``)."""
    assert stdout.strip(), f"{event} printed nothing"
    out = json.loads(stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == event
    return str(out["additionalContext"])


def test_stats_chart_tokens_injected_per_session_and_the_fetch_after(seeded: Seeded) -> None:
    from playwright.sync_api import expect

    root, server = seeded.root, seeded.server
    env = server_env(seeded.home, HOOK_CWD=str(root))
    base = {"session_id": SESSION, "transcript_path": "/dev/null", "cwd": str(root)}
    start = run_hook("claude-code", "SessionStart", {**base, "hook_event_name": "SessionStart",
                                                     "source": "startup"}, env)
    block = _injected(start.stdout, "SessionStart")
    assert "<aletheia-memory>" in block
    prompt = run_hook("claude-code", "UserPromptSubmit", {
        **base, "hook_event_name": "UserPromptSubmit",
        "prompt": "How do we fix the mypy error about missing yaml stubs?"}, env)
    per_prompt = _injected(prompt.stdout, "UserPromptSubmit")
    target = str(root / "src" / "textkit" / "slugify.py")
    read = run_hook("claude-code", "PreToolUse", {
        **base, "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": target}, "tool_use_id": "toolu_econ_read"}, env)
    per_file = _injected(read.stdout, "PreToolUse")
    assert "slugify.py" in per_file
    want = {"block": len(block) // 4, "prompt": len(per_prompt) // 4, "file": len(per_file) // 4}
    want["total"] = sum(want.values())
    # The agent fetches detail: one search of its project over REST.
    with server.client() as c:
        found = c.get("/v1/search", params={"q": "slugify separators", "project": str(root)})
        assert found.status_code == 200 and found.json()["items"]
        api = c.get("/v1/stats/context", params={"project": str(root)}).json()
    mine = next(s for s in api["sessions"] if s["session"] == SESSION)
    assert mine["tokens"] == want and mine["fetches"] == 1
    assert mine["injections"] == {"block": 1, "prompt": 1, "file": 1}
    # The CLI reads the same core: the same figures per project.
    cli = subprocess.run([sys.executable, "-m", "aletheia", "stats", "--json"], env=env,
                         capture_output=True, text=True, check=True)
    assert json.loads(cli.stdout)["context"][str(root)] == api["projects"][str(root)]
    row = api["projects"][str(root)]

    with signed_in(server) as page:
        # A person searching in the dashboard first: not the agent, not a fetch.
        page.goto(f"{server.url}/#/search?q=slugify&p={root}")
        page.locator("#results li.hit").first.wait_for()
        page.goto(f"{server.url}/#/stats?p={root}")
        bar = page.locator(f".economics-sessions g.session-bar[data-session='{SESSION}']")
        expect(bar).to_have_attribute("data-total", str(want["total"]))
        for kind in ("block", "prompt", "file"):
            expect(bar.locator(f"rect[data-kind='{kind}']")).to_have_attribute(
                "data-value", str(want[kind]))
        expect(bar).to_have_attribute("data-fetches", "1")
        expect(bar.locator(".fetch-mark text")).to_have_text("1")
        project_row = page.locator(f".economics-projects g.project-row[data-project='{root}']")
        expect(project_row).to_have_attribute("data-total",
                                              _js_number(row["tokens_per_session"]["total"]))
        expect(project_row).to_have_attribute("data-fetches", str(row["fetches"]))
        table = page.locator(f"#economics-projects-body tr[data-project='{root}']")
        expect(table).to_contain_text(f"{row['followed_by_fetch']}/{row['sessions']}")
        page.click("#economics-sessions-details summary")
        line = page.locator(f"#economics-sessions-body tr[data-session='{SESSION}']")
        expect(line).to_contain_text(f"{want['total']:,}")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "stats-economics-1366-light.png"), full_page=True)
        figures = {"session": mine, "project": row}
        (SHOTS / "economics.json").write_text(json.dumps(figures, indent=2))
        print(f"chart figures: {json.dumps(figures)}")
    with server.client() as c:  # the dashboard's search was not counted
        again = c.get("/v1/stats/context", params={"project": str(root)}).json()
    assert next(s for s in again["sessions"] if s["session"] == SESSION)["fetches"] == 1


def _js_number(value: float) -> str:
    """How the page writes a number into an attribute (String(n): 12.0 → "12")."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def test_search_marks_matches_and_leaves_brackets_in_stored_text_alone(seeded: Seeded) -> None:
    from playwright.sync_api import expect

    server = seeded.server
    narrative = ("🚀 pyproject: [tool.ruff] line-length = 100 and [redacted] in CI; "
                 "the linter replaced flake8")
    with server.client() as c:
        made = c.post("/v1/memories", json={"project": "marks-demo", "kind": "note",
                                             "title": "Lint settings", "narrative": narrative})
        assert made.status_code == 201
    with signed_in(server, 390, 844) as page:
        page.goto(f"{server.url}/#/search?q=ruff+linter&p=marks-demo")
        snippet = page.locator(f"#results li[data-id='{made.json()['id']}'] .snippet")
        expect(snippet).to_contain_text("[tool.ruff]")
        expect(snippet).to_contain_text("[redacted]")
        expect(snippet.locator("mark")).to_have_text(["ruff", "linter"])
        page.screenshot(path=str(SHOTS / "search-marks-390-light.png"), full_page=True)

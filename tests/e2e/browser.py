"""What the dashboard's browser tests share: Debian's Chromium (driven by Playwright with
``executable_path``; never a browser download), signing in, axe-core in the page, and a store
filled the way a user's is (a real Claude Code session through the real hook processes,
compressed by ``aletheia compress``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import sessions
from tests.hookproc import run_hook
from tests.webproc import REPO, Server, server_env

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = REPO / "test-artifacts" / "dashboard"
AXE = Path(os.environ.get("ALETHEIA_NPM_AXE", REPO / ".cache" / "npm-axe")) / "node_modules" / "axe-core" / "axe.min.js"

MARKS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed "
                       "(scripts/ci-system-deps installs it)"),
]


def seed_session(home: Path, root: Path, session: str) -> dict[str, str]:
    """A real session through the real hook (prompt, tool events, an edit, stop), then
    ``aletheia compress``: memories, a session, a done job, facts and a summary.  Returns the
    first id of each hit type a search for "pytest" finds."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = server_env(home, HOOK_CWD=str(root))
    token = sessions.fake_token(5)
    for name, payload in sessions.events(str(root), session, token):
        assert run_hook("claude-code", name, payload, env).code == 0
    edit = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(root),
            "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(root / "slug.py"), "old_string": "def slug(s):\n    return s\n",
                           "new_string": "def slug(s):\n    return s.lower().replace(' ', '-')\n"},
            "tool_response": {"filePath": str(root / "slug.py"), "structuredPatch": []},
            "tool_use_id": "toolu_edit_1"}
    assert run_hook("claude-code", "PostToolUse", edit, env).code == 0
    out = subprocess.run([sys.executable, "-m", "aletheia", "compress", "--json"], env=env,
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["done"] >= 1
    ids: dict[str, str] = {}
    listed = subprocess.run([sys.executable, "-m", "aletheia", "search", "--all-projects",
                             "--json", "-n", "50", "pytest"], env=env, cwd=root,
                            capture_output=True, text=True, check=True)
    for hit in json.loads(listed.stdout):
        ids.setdefault(hit["type"], hit["id"])
    return ids


def launch(pw: Any) -> Any:
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)


@contextmanager
def signed_in(server: Server, width: int = 1366, height: int = 900) -> Iterator[Any]:
    """A page of a fresh Chromium, signed in to ``server``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            sign_in(page, server)
            yield page
        finally:
            browser.close()


def sign_in(page: Any, server: Server) -> None:
    page.goto(server.url + "/")
    page.fill("#token", server.token)
    page.click("button[type=submit]")
    page.wait_for_selector("#feed-memories li")


def axe(page: Any) -> dict[str, list[str]]:
    """axe-core in the page: violations by impact (rule ids × nodes)."""
    # Through the DevTools protocol: the page's CSP (script-src 'self') rightly refuses an
    # injected <script>, and the test must not loosen it.
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("""async () => {
        const r = await axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    }""")
    out: dict[str, list[str]] = {}
    for v in result:
        out.setdefault(v["impact"] or "unknown", []).append(f"{v['id']}×{v['nodes']}")
    return out

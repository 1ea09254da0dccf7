"""The dashboard tells the user what ``aletheia doctor`` would (issue 14): a spooled line that
could not be replayed is quarantined, and the dashboard shows it — a banner on whatever page is
open, and the Health list on the stats page with the hint to act on it — in Chromium against the
real server."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia import spool, store
from tests.e2e.browser import MARKS, SHOTS, signed_in
from tests.webproc import Server, running_server, server_env

pytestmark = MARKS


@pytest.fixture
def server(aletheia_home: Path, conn: sqlite3.Connection) -> Iterator[Server]:
    store.write_memory(conn, store.MemoryIn(project="/work/app", kind="note", title="a note",
                                            narrative="something to show in the feed"))
    # A poison line (a stop with no session): once it bricked every command; now it is
    # quarantined with its reason by the next replay.
    spool.append_line(b'{"type": "stop", "project": "x"}\n')
    assert spool.replay(conn).quarantined == 1
    with running_server(aletheia_home) as srv:
        yield srv


def test_a_quarantined_spool_line_is_shown(server: Server, aletheia_home: Path) -> None:
    from playwright.sync_api import expect

    with server.client() as c:
        report = c.get("/v1/doctor").json()
    quarantine = next(ch for ch in report["checks"] if ch["name"] == "quarantine")
    assert quarantine["status"].lower() == "problem"
    with signed_in(server) as page:
        banner = page.locator("#health-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("quarantine")
        page.locator("#health-banner-link").click()
        row = page.locator("#health li[data-check='quarantine']")
        expect(row).to_contain_text("problem")
        expect(row).to_contain_text("could not be replayed")
        expect(row.locator(".hint")).to_contain_text("aletheia spool list")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "health-quarantine-1366-light.png"), full_page=True)
        # Dropping the line (what the hint says to do) clears it; the page says so on reload.
        dropped = subprocess.run([sys.executable, "-m", "aletheia", "spool", "drop", "--all"],
                                 env=server_env(aletheia_home), capture_output=True,
                                 text=True, timeout=120)
        assert dropped.returncode == 0 and "dropped 1" in dropped.stdout, dropped.stderr
        page.reload()
        expect(row).to_contain_text("ok")
        expect(banner).to_be_hidden()

"""``aletheia doctor`` tells the truth: a queue with no worker, a live worker, undelivered
context blocks, modes, the REST report."""

from __future__ import annotations

import json
import os
import sqlite3

from click.testing import CliRunner

from aletheia import blocks, db, ids, paths, store
from aletheia.cli import cli
from aletheia.store import MemoryIn
from aletheia.tasks import heartbeat


def doctor(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["doctor", *args], catch_exceptions=False)
    return result.exit_code, result.output


def checks() -> dict[str, dict[str, object]]:
    return {c["name"]: c for c in json.loads(doctor("--json")[1])["checks"]}


def _queue_a_session(conn: sqlite3.Connection, session: str = "s1") -> None:
    store.write_memory(conn, MemoryIn(project="/p", kind="prompt", title="fix it", session_id=session))
    store.queue_stop(conn, session, "/p", "claude-code")


def test_sessions_waiting_with_no_worker_is_a_problem_with_the_hint(conn: sqlite3.Connection) -> None:
    _queue_a_session(conn)
    code, out = doctor()
    assert code == 1
    assert ("PROBLEM  worker      1 session(s) wait for compression and no worker is running "
            "(no worker has ever run)") in out
    assert "run `aletheia compress`" in out
    # A worker that beats recently is alive: the same queue is then just work in progress.
    heartbeat.beat(conn, "box:123", now=ids.now_ms())
    code, out = doctor()
    assert code == 0 and "1 worker(s) running: box:123" in out
    # One that stopped beating a while ago is not.
    conn.execute("UPDATE worker SET beat_at = beat_at - ?", (heartbeat.STALE_MS + 120_000,))
    code, out = doctor()
    assert code == 1 and "last heartbeat 3 min ago" in out
    # `aletheia compress` drains it: nothing waits, nothing needs the user.
    assert CliRunner().invoke(cli, ["compress"]).exit_code == 0
    assert doctor()[0] == 0


def test_a_stopped_worker_is_not_alive(conn: sqlite3.Connection) -> None:
    now = ids.now_ms()
    heartbeat.beat(conn, "box:1", now=now)
    heartbeat.stopped(conn, "box:1", now=now)
    assert heartbeat.live(conn, now=now) == []
    _queue_a_session(conn)
    assert doctor()[0] == 1


def test_an_undelivered_session_start_is_a_problem_doctor_shows(conn: sqlite3.Connection) -> None:
    # The hook records a block it could not deliver (aletheia.blocks, the context engineer's
    # record); doctor reads it.
    blocks.record_undelivered(event="SessionStart", project="/p", host="claude-code",
                              session_id="s9", reason="no answer within the hook's budget")
    found = checks()["context"]
    assert found["status"] == "problem"
    assert "1 context blocks were not delivered" in str(found["summary"])
    assert doctor()[0] == 1


def test_loose_file_modes_are_a_problem(conn: sqlite3.Connection) -> None:
    os.chmod(paths.hub_db_file(), 0o644)
    found = checks()["files"]
    assert found["status"] == "problem" and "hub.db is 0o644" in str(found["summary"])
    os.chmod(paths.hub_db_file(), 0o600)
    assert checks()["files"]["status"] == "ok"


def test_doctor_json_and_the_rest_field_agree(conn: sqlite3.Connection) -> None:
    from starlette.testclient import TestClient

    from aletheia.web.app import create_app

    _queue_a_session(conn)
    with TestClient(create_app(token="t" * 32), base_url="http://127.0.0.1") as client:
        body = client.get("/v1/doctor", headers={"Authorization": "Bearer " + "t" * 32}).json()
    assert body["ok"] is False and body["problems"] == 1
    assert [c["name"] for c in body["checks"]] == list(checks())
    assert db.schema_version(conn) == body["checks"][1]["data"]["version"]

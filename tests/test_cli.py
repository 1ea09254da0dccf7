"""The CLI over the library: each command's output, --json, and one-line errors."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from aletheia import db
from aletheia.cli import cli
from tests import fakes


def invoke(*args: str, input: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def one_line_error(*args: str, input: str | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error:")
    return lines[0]


def test_save_search_get_timeline(tmp_path: Path) -> None:
    out = json.loads(invoke("save", "--project", "/p", "--json", "the build uses ninja, not make"))
    assert out["inserted"]
    again = json.loads(invoke("save", "--project", "/p", "--json", "the build uses ninja, not make"))
    assert again == {"id": out["id"], "inserted": False}
    invoke("save", "--project", "/p", "tests run with pytest -q")
    hits = json.loads(invoke("search", "--project", "/p", "--json", "ninja build"))
    assert hits[0]["id"] == out["id"]
    full = json.loads(invoke("get", "--json", out["id"]))
    assert full[0]["narrative"] == "the build uses ninja, not make"
    assert out["id"] in invoke("timeline", out["id"])
    assert "no matches" in invoke("search", "--project", "/other", "ninja")


def test_save_uses_the_current_directory_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    memory_id = json.loads(invoke("save", "--json", "hello there"))["id"]
    row = json.loads(invoke("get", "--json", memory_id))[0]
    assert row["project"] == str(tmp_path.resolve())


def test_capture_plain_and_jsonl(tmp_path: Path) -> None:
    invoke("capture", "--project", "/p", input="a captured log\nwith two lines\n")
    lines = [
        {"title": "first", "narrative": "one", "session_id": "s1", "kind": "note", "created_at": "2026-01-02T03:04:05Z"},
        {"title": "second", "narrative": "two", "session_id": "s1", "created_at": 1767323045000, "project": "/q"},
    ]
    out = json.loads(invoke("capture", "--project", "/p", "--jsonl", "--json",
                            input="\n".join(json.dumps(x) for x in lines) + "\n"))
    assert out == {"inserted": 2, "skipped": 0}
    out = json.loads(invoke("capture", "--project", "/p", "--jsonl", "--json",
                            input="\n".join(json.dumps(x) for x in lines)))
    assert out == {"inserted": 0, "skipped": 2}
    conn = db.connect()
    rows = conn.execute("SELECT project, created_at FROM memory WHERE session_id = 's1' ORDER BY created_at").fetchall()
    assert [tuple(r) for r in rows] == [("/p", 1767323045000), ("/q", 1767323045000)]
    conn.close()


@pytest.mark.parametrize(
    "text,expect",
    [
        ('{"title": "ok"}\nnot json\n', "line 2: not valid JSON"),
        ('[1]\n', "line 1: expected a JSON object"),
        ('{"title": "x", "bogus": 1}\n', "unknown memory field"),
        ('{"title": "x", "created_at": "yesterday"}\n', "not an ISO-8601 time"),
        ('{"narrative": ""}\n', "needs a title"),
        ("\n\n", "no lines"),
    ],
)
def test_capture_jsonl_bad_input_writes_nothing(text: str, expect: str) -> None:
    invoke("save", "--project", "/p", "kept")
    assert expect in one_line_error("capture", "--project", "/p", "--jsonl", input=text)
    conn = db.connect()
    assert [r[0] for r in conn.execute("SELECT title FROM memory")] == ["kept"]
    conn.close()


def test_capture_jsonl_10k_is_quick() -> None:
    lines = "\n".join(
        json.dumps({"title": f"memory {i}", "narrative": f"body of memory number {i} " * 5,
                    "session_id": f"s{i // 50}", "project": f"/p{i % 20}"})
        for i in range(10_000)
    )
    start = time.monotonic()
    out = json.loads(invoke("capture", "--jsonl", "--json", input=lines))
    elapsed = time.monotonic() - start
    assert out["inserted"] == 10_000
    print(f"10,000 memories captured in {elapsed:.2f} s")


def test_redact_command_and_jsonl() -> None:
    secret = fakes.github_token(random.Random(1))
    out = invoke("redact", input=f"token={secret}\n")
    assert secret not in out and "token=" in out
    lines = json.dumps({"id": "a", "text": f"GITHUB_TOKEN={secret}"}) + "\n" + json.dumps({"id": 2, "text": "plain"})
    got = [json.loads(x) for x in invoke("redact", "--jsonl", input=lines).splitlines()]
    assert got[0]["id"] == "a" and secret not in got[0]["text"]
    assert got[1] == {"id": 2, "text": "plain"}
    assert "line 1" in one_line_error("redact", "--jsonl", input='{"id": 1}\n')
    assert "line 1" in one_line_error("redact", "--jsonl", input="nope\n")


def test_stats_and_doctor() -> None:
    invoke("save", "--project", "/p", "note one")
    stats = json.loads(invoke("stats", "--json"))
    assert stats["memories"] == 1 and stats["by_kind"] == {"note": 1}
    report = json.loads(invoke("doctor", "--json"))
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] and report["problems"] == 0
    assert checks["integrity"]["data"]["result"] == "ok"
    assert checks["files"]["data"]["modes"]["~"] == "0o700"
    assert checks["files"]["data"]["modes"]["hub.db"] == "0o600"
    assert checks["schema"]["data"]["version"] == checks["schema"]["data"]["latest"]
    assert invoke("doctor").splitlines()[-1] == "ok"


@pytest.mark.parametrize(
    "args",
    [
        ("get", "NOSUCHID"),
        ("timeline", "NOSUCHID"),
        ("search", "--project", "/p", "--limit", "0", "x"),
        ("save", "--project", "/p", "   "),
    ],
)
def test_errors_are_one_line(args: tuple[str, ...]) -> None:
    one_line_error(*args)


def test_database_error_is_one_line(aletheia_home: Path) -> None:
    db.connect().close()
    (aletheia_home / "hub.db").write_bytes(b"this is not a database" * 100)
    for side in ("hub.db-wal", "hub.db-shm"):
        (aletheia_home / side).unlink(missing_ok=True)
    line = one_line_error("stats")
    assert "database" in line
    assert isinstance(sqlite3.sqlite_version, str)

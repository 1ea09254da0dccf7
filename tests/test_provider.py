"""The optional model provider against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aletheia import ids, provider, settings
from aletheia.facts import list_facts
from aletheia.tasks.compress import JobRunner, drain
from tests import fakes, sessions

ROOT = "/home/dev/textkit"
MODEL = "fake-model"


class FakeOpenAI:
    """A chat-completions endpoint whose behaviour the test picks (``mode``)."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.secret = fakes.github_token(random.Random(5))
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "body": body})
                fake.headers.append(dict(self.headers))
                status, payload = fake.answer(body)
                try:
                    if fake.mode == "slow":
                        time.sleep(1.5)
                    data = json.dumps(payload).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.mode == "error":
            return 500, {"error": {"message": "model overloaded"}}
        n = len(self.requests)
        content: str = json.dumps({
            "facts": [
                {"kind": "command", "text": f"Window {n}: run the suite with `pytest -q` from the repo root.", "sources": [1, 2]},
                {"kind": "errors", "text": f"Window {n}: CI pushes used the token {self.secret} for gh.", "sources": [99]},
                {"kind": "weird", "text": "too short"},
            ],
            "summary": f"Window {n} fixed things.",
        })
        if self.mode == "fenced":
            content = f"Here you go:\n```json\n{content}\n```"
        if self.mode == "garbage":
            content = "I could not find anything worth noting, sorry!"
        return 200, {
            "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 2500, "completion_tokens": 500, "total_tokens": 3000},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    api = FakeOpenAI()
    monkeypatch.setenv("ALETHEIA_PROVIDER", api.url)
    monkeypatch.setenv("ALETHEIA_PROVIDER_MODEL", MODEL)
    monkeypatch.setenv("ALETHEIA_PROVIDER_API_KEY", fakes.openai_key(random.Random(9)))
    try:
        yield api
    finally:
        api.close()


def run_sample(conn: sqlite3.Connection, token: str | None = None) -> dict[str, Any]:
    sessions.write(conn, ROOT, "s1", token=token)
    drain(conn, JobRunner(lease_seconds=30))
    job = conn.execute("SELECT result FROM job").fetchone()
    return dict(json.loads(job[0]))


def test_provider_facts_are_redacted_and_stored_like_rule_facts(
    conn: sqlite3.Connection, fake_api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = sessions.fake_token(21)
    result = run_sample(conn, token)
    windows = result["windows"]
    assert windows >= 2 and result["provider_windows"] == windows and result["fallbacks"] == []
    assert len(fake_api.requests) == windows
    request = fake_api.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == MODEL
    assert fake_api.headers[0]["Authorization"] == "Bearer " + os_key(monkeypatch)
    # What is sent is the stored (already redacted) text.
    assert all(token not in json.dumps(r["body"]) for r in fake_api.requests)
    stored = list_facts(conn, project=ROOT, limit=200)
    assert {f["extractor"] for f in stored} == {f"provider:{MODEL}"}
    assert all(f["confidence"] == provider.PROVIDER_CONFIDENCE for f in stored)
    texts = [f["text"] for f in stored]
    assert not any(fake_api.secret in t for t in texts)
    assert any("[redacted" in t for t in texts)
    assert not any(t == "too short" for t in texts)
    kinds = {f["kind"] for f in stored if f["text"].startswith("Window 1:")}
    assert kinds == {"command", "error_fix"}  # "errors" is read as error_fix
    first = next(f for f in stored if f["text"].startswith("Window 1: run the suite"))
    assert len(first["source_ids"]) == 2  # items 1 and 2 of its window
    summary = conn.execute("SELECT narrative FROM memory WHERE kind = 'summary'").fetchone()[0]
    assert "Summary: Window 1 fixed things." in summary and "Files changed:" in summary
    assert provider.used_today(conn, now=ids.now_ms()) == 3000 * windows


def os_key(monkeypatch: pytest.MonkeyPatch) -> str:
    import os

    return os.environ["ALETHEIA_PROVIDER_API_KEY"]


@pytest.mark.parametrize("mode", ["error", "garbage"])
def test_any_failure_falls_back_to_the_rules(conn: sqlite3.Connection, fake_api: FakeOpenAI,
                                             mode: str) -> None:
    fake_api.mode = mode
    result = run_sample(conn)
    assert result["provider_windows"] == 0 and len(result["fallbacks"]) == min(result["windows"], 5)
    stored = list_facts(conn, project=ROOT, limit=200)
    assert stored and {f["extractor"] for f in stored} == {"rules"}
    assert any(f["text"] == "Run the tests with `pytest -q`." for f in stored)
    assert conn.execute("SELECT state FROM job").fetchone()[0] == "done"


def test_fenced_json_is_understood(conn: sqlite3.Connection, fake_api: FakeOpenAI) -> None:
    fake_api.mode = "fenced"
    assert run_sample(conn)["fallbacks"] == []


def test_a_slow_provider_times_out_and_falls_back(conn: sqlite3.Connection, fake_api: FakeOpenAI,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fake_api.mode = "slow"
    monkeypatch.setenv("ALETHEIA_PROVIDER_TIMEOUT", "0.3")
    result = run_sample(conn)
    assert result["provider_windows"] == 0
    assert all("timed out" in reason for reason in result["fallbacks"])
    assert {f["extractor"] for f in list_facts(conn, project=ROOT, limit=200)} == {"rules"}


def test_the_job_budget_limits_calls(conn: sqlite3.Connection, fake_api: FakeOpenAI,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_PROVIDER_JOB_TOKENS", "4000")
    result = run_sample(conn)
    assert result["provider_windows"] == 1 and len(fake_api.requests) == 1
    assert set(result["fallbacks"]) == {"job token budget spent"}
    extractors = {f["extractor"] for f in list_facts(conn, project=ROOT, limit=200)}
    assert extractors == {"rules", f"provider:{MODEL}"}


def test_the_daily_budget_is_shared_and_respected(conn: sqlite3.Connection, fake_api: FakeOpenAI,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_PROVIDER_DAY_TOKENS", "10000")
    now = ids.now_ms()
    assert provider.reserve_day(conn, 9000, limit=10_000, now=now)  # another worker's use
    assert not provider.reserve_day(conn, 2000, limit=10_000, now=now)
    result = run_sample(conn)
    assert result["provider_windows"] == 0 and fake_api.requests == []
    assert set(result["fallbacks"]) == {"daily token budget spent"}
    assert provider.used_today(conn, now=now) == 9000


def test_config_timeout_stays_inside_the_lease(conn: sqlite3.Connection) -> None:
    env = {"ALETHEIA_PROVIDER": "ollama", "ALETHEIA_PROVIDER_MODEL": "qwen2.5-coder"}
    cfg = provider.load_config(conn, env=env, lease_ms=60_000)
    assert cfg is not None and cfg.base_url == "http://127.0.0.1:11434/v1"
    assert cfg.timeout_s == 20.0 and cfg.extractor == "provider:qwen2.5-coder"
    short = provider.load_config(conn, env=env, lease_ms=6_000)
    assert short is not None and short.timeout_s == 2.0
    assert provider.load_config(conn, env={"ALETHEIA_PROVIDER": "rules"}) is None
    assert provider.load_config(conn, env={"ALETHEIA_PROVIDER": "ollama"}) is None  # no model
    assert provider.load_config(conn, env={"ALETHEIA_PROVIDER": "mystery", "ALETHEIA_PROVIDER_MODEL": "m"}) is None
    assert provider.load_config(conn, env={}) is None
    settings.put(conn, "provider", "http://127.0.0.1:9/v1")
    from_setting = provider.load_config(conn, env={"ALETHEIA_PROVIDER_MODEL": "m"})
    assert from_setting is not None and from_setting.base_url == "http://127.0.0.1:9/v1"
    # The environment wins over the setting, also to switch it off.
    assert provider.load_config(conn, env={"ALETHEIA_PROVIDER": "", "ALETHEIA_PROVIDER_MODEL": "m"}) is None


def test_a_refused_connection_falls_back(conn: sqlite3.Connection,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    monkeypatch.setenv("ALETHEIA_PROVIDER", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("ALETHEIA_PROVIDER_MODEL", MODEL)
    result = run_sample(conn)
    assert result["provider_windows"] == 0 and result["fallbacks"]
    assert any(f["extractor"] == "rules" for f in list_facts(conn, project=ROOT, limit=200))


def test_parse_answer() -> None:
    facts, summary = provider.parse_answer('```json\n{"facts": [{"text": "x"}], "summary": " s "}\n```')
    assert facts == [{"text": "x"}] and summary == "s"
    with pytest.raises(ValueError):
        provider.parse_answer("no json here")
    with pytest.raises(ValueError):
        provider.parse_answer('{"facts": "not a list"}')

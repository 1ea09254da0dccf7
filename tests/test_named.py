"""What a store without tool events knows of its stack (the tools the talk names as in use,
``extract.named``), and what per-prompt recall brings for a value a command printed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from aletheia import context, recall, store
from aletheia.extract.named import named_tools
from aletheia.store import MemoryIn
from aletheia.toolkinds import asked_labels, label_of

P = "/home/dev/newsletter"
T = 1_800_000_000_000
DAY = 86_400_000


def names(text: str) -> list[str]:
    return [name for _, name, _ in named_tools(text)]


def test_tools_named_as_in_use() -> None:
    assert names("Stack: FastAPI, Postgres, SQLAlchemy 2.0 with the async engine, Alembic for "
                 "migrations.") == ["FastAPI", "Postgres", "SQLAlchemy", "Alembic"]
    assert names("I ran `uv run pytest -q` and all 12 pass.") == ["uv", "pytest"]
    assert names("Add a Celery task that sends the digest.") == ["Celery"]
    assert names("The Next.js app uses React 18 and Tailwind.") == ["Next.js", "React", "Tailwind"]
    # what each kind of tool is called, for the stack line and a question's words
    assert [label for _, _, label in named_tools("Tests run on pytest against Postgres.")] == [
        "tests", "database"]


def test_tools_set_aside_are_not_in_use() -> None:
    assert names("Should we use Redis or Memcached?") == []  # a question
    assert names("We could use Celery for this.") == []  # a proposal
    assert names("Options: pin bcrypt, or move to Dramatiq.") == []  # weighing options
    assert names("Move from Jest to Vitest.") == ["Vitest"]  # the old side of a change
    assert names("Use pnpm, not npm.") == ["pnpm"]
    assert names("Skip minitest — we write specs with RSpec.") == ["RSpec"]
    assert names("We use standardrb, not a hand-tuned rubocop config.") == ["standardrb"]
    assert names("Sidekiq is gone: jobs run on GoodJob now.") == ["GoodJob"]
    assert names("ruff's isort wants one order, black another.") == ["ruff"]  # a part of ruff
    # looked at, then turned down; tried and kept is in use
    assert names("Go with Room — I looked at SQLDelight but the team knows Room.") == ["Room"]
    assert names("We store plants in Postgres; I looked at MongoDB but the team knows SQL.") == [
        "Postgres"]
    assert names("We tried Zustand, but Redux fits the devtools better.") == ["Redux"]
    assert names("I tried `pytest -x` and all 12 pass.") == ["pytest"]
    assert names("I looked at the Alembic history: two heads.") == ["Alembic"]
    # set aside once, not in use where the same text names it again (why it was dropped)
    assert names("DI with Hilt (not Koin — we had Koin blow up at runtime on the last app).") == ["Hilt"]
    assert names("Use pnpm, not npm. npm kept rewriting the lockfile.") == ["pnpm"]
    # gone in the words after it, or named as where the tool in use comes from
    assert names("Readings go to Postgres. The InfluxDB writer is deleted.") == ["Postgres"]
    assert names("Switched to fourmolu, ormolu's configurable fork: four-space indents.") == ["fourmolu"]
    assert names("We use pytest's fixtures.") == ["pytest"]
    # A tool whose name is an ordinary word counts only written as a name.
    assert names("Black formats the code. We format with black.") == []
    assert names("Next we add the page. The build uses `black` and Express 4.") == ["black", "Express"]


def test_what_a_question_asks_about() -> None:
    assert asked_labels("which test runner do we use".split()) == {"tests"}
    assert "database" in asked_labels("what database are we running against".split())
    assert asked_labels("which library implements the retry".split()) == set()
    assert label_of("pytest-asyncio") == "tests" and label_of("@vitejs/plugin-react") is None


def _said(conn: sqlite3.Connection, text: str, kind: str, session: str, at: int) -> None:
    store.write_memory(conn, MemoryIn(project=P, kind=kind, title=text[:80], narrative=text,
                                      created_at=at, session_id=session))


def _compress(conn: sqlite3.Connection, sessions: list[str]) -> None:
    from aletheia.tasks.compress import JobRunner, drain

    for s in sessions:
        store.queue_stop(conn, s, P, "claude-code")
    assert drain(conn, JobRunner(use_provider=False)).done == len(sessions)


def _stack(block: str) -> str:
    return next((line for line in block.splitlines() if line.startswith("Stack:")), "")


def test_a_talk_only_store_gets_a_stack_line_by_evidence(conn: sqlite3.Connection) -> None:
    # Talk only: no manifest, no install.  Celery is named as in use in two sessions' answers,
    # Postgres by the user once; httpx in one answer only (weak: searchable, not in the block);
    # Redis only as an option.
    _said(conn, "Start the newsletter app: Rails 7.1 on Postgres.", "prompt", "s1", T)
    _said(conn, "Done: the digest job runs on Celery now and uses `httpx` for the mail API.",
          "response", "s1", T + 1000)
    _said(conn, "Should we cache the issues in Redis or Memcached?", "prompt", "s2", T + DAY)
    _said(conn, "Added a second Celery task for the reminders.", "response", "s2", T + DAY + 1000)
    _compress(conn, ["s1", "s2"])
    line = _stack(context.build_block(conn, P))
    assert "Celery" in line and "Postgres" in line and "Rails" in line
    assert "httpx" not in line and "Redis" not in line and "Memcached" not in line
    # A later session replaces Celery: the stack line no longer names it.
    _said(conn, "Replace Celery with Sidekiq for the jobs.", "prompt", "s3", T + 2 * DAY)
    _said(conn, "Done: Sidekiq runs the digest and the reminders.", "response", "s3", T + 2 * DAY + 1000)
    _compress(conn, ["s3"])
    line = _stack(context.build_block(conn, P))
    assert "Sidekiq" in line and "Celery" not in line
    # A prompt asking what kind of tool it wants gets the tools of that kind first.
    text, _ = recall.prompt_block(conn, P, "Which database does the app run against?")
    first = next(line for line in text.splitlines() if line.startswith("- Stack"))
    assert first.startswith("- Stack: database Postgres") and len(text) <= recall.PROMPT_CAP
    # A kind of tool nothing shown names (no broker among the stack or the lines): no block.
    assert recall.prompt_block(conn, P, "Which message broker do we use?") == ("", [])
    assert recall.prompt_block(conn, P, "Which payment provider takes the orders?") == ("", [])
    assert "Sidekiq" in recall.prompt_block(conn, P, "Which job queue do we use?")[0]
    # Lines that say "provider" of something else name no payment provider: what a provider
    # or a service is, only a tool of the kind shows ("Stripe").
    _said(conn, "The orders page now shows each order's payment status and the provider's reference.",
          "response", "s4", T + 3 * DAY)
    assert recall.prompt_block(conn, P, "Which payment provider takes the orders?") == ("", [])
    _said(conn, "Orders are paid through Stripe Checkout now.", "response", "s5", T + 4 * DAY)
    assert "Stripe" in recall.prompt_block(conn, P, "Which payment provider takes the orders?")[0]


def test_a_value_asked_for_is_the_output_line_that_holds_it(conn: sqlite3.Connection,
                                                           tmp_path: Path) -> None:
    p = str(tmp_path / "shop")
    lines = "\n".join(f" + package{i}==1.{i}.0" for i in range(60))
    store.write_memories(conn, [
        MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T,
                 title="Bash: $ uv add stripe",
                 narrative="input: {\"command\": \"uv add stripe\"}\n\noutput:\nResolved 62 packages\n"
                           f"{lines}\n + stripe==11.1.0\n + urllib3==2.2.3"),
        MemoryIn(project=p, kind="tool_event", session_id="s1", created_at=T + 1,
                 title="Bash: $ zgrep -c ReadTimeout api.log.gz",
                 narrative="input: {\"command\": \"zgrep -c ReadTimeout api.log.gz\"}\n\noutput:\n412\n"
                           + "\n".join(f'{{"event": "request.failed", "n": {i}}}' for i in range(5))),
        *[MemoryIn(project=p, kind="note", session_id="s0", created_at=T - i, title=f"note {i}",
                   narrative=f"checkout page tweak {i}: totals and the cart") for i in range(30)],
    ])
    text, listed = recall.prompt_block(conn, p, "What version of the stripe package did we install?")
    assert "stripe==11.1.0" in text and len(text) <= recall.PROMPT_CAP and listed
    text, _ = recall.prompt_block(conn, p, "How many read timeouts were logged?")
    assert "— 412" in text
    # a count is of the word right after it; a version may carry its "v"
    store.write_memories(conn, [
        MemoryIn(project=p, kind="tool_event", session_id="s2", created_at=T + 2,
                 title="Bash: $ restic snapshots --compact && packer version",
                 narrative="input: {\"command\": \"restic snapshots\"}\n\noutput:\nID Time Host\n"
                           "Restored 4812 files/dirs\n61 snapshots\nPacker v1.11.2\nPython 3.12.3"),
    ])
    text, _ = recall.prompt_block(conn, p, "How many restic snapshots are there?")
    assert "— 61 snapshots" in text
    text, _ = recall.prompt_block(conn, p, "Which Packer release is installed?")
    assert "Packer v1.11.2" in text
    # no value of the asked shape near the prompt's words: no value line
    text, _ = recall.prompt_block(conn, p, "Which version of the cart page shipped?")
    assert "==" not in text

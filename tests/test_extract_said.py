"""Commands an assistant's answer names for a purpose become command facts (sessions seen
without their tool calls still say how the project is run), and only those."""

from __future__ import annotations

import sqlite3

from aletheia import context
from aletheia.extract import Item, extract_rules
from aletheia.extract.said import answer_commands
from aletheia.facts import FactIn, add_facts

P = "/home/dev/shop"
T = 1_800_000_000_000


def test_commands_named_for_a_purpose() -> None:
    text = ("Done: `pyproject.toml` is PEP 621 now.\n"
            "- Commands: `uv sync` to install, `uv run pytest -q -x` for tests, "
            "`uv run alembic upgrade head` for migrations; the Makefile targets call `uv run …`.\n"
            "`bun run e2e` runs the suite; `bun run test` = `vitest run` (~1 s).")
    assert answer_commands(text) == [
        ("uv sync", "setup"), ("uv run pytest -q -x", "test"),
        ("uv run alembic upgrade head", "migrate"), ("bun run e2e", "e2e")]


def test_not_the_old_way_a_failure_a_proposal_or_a_question() -> None:
    assert answer_commands("Instead of `npm test` we now use `bun run test`.") == [("bun run test", "test")]
    assert answer_commands("Moved from `npm ci` to `bun install`.") == [("bun install", "setup")]
    assert answer_commands("`npm ci` → `bun install` in CI.") == [("bun install", "setup")]
    assert answer_commands("`poetry run pytest` fails with an import error.") == []
    assert answer_commands("I'd run `make test` next.") == []
    assert answer_commands("Should I run `cargo build --release` too?") == []
    # Not commands: file names, single words, code, a test narrowed to one file.
    assert answer_commands("`src/app.py` holds it; `pytest` is set up; `x = compute(1)`.") == []


def test_a_command_ending_in_a_dot_or_a_script_of_the_repo_alone() -> None:
    # the current directory and every package under it are arguments, not a sentence's end
    assert answer_commands("Lint with `ruff check .`, tests with `go test ./...`.") == [
        ("ruff check .", "lint"), ("go test ./...", "test")]
    # one word is a script of the repository when it is written as one (`bin/dev`)
    assert answer_commands("`Procfile.dev` lists all three, so `bin/dev` starts them.") == [("bin/dev", "run")]
    assert answer_commands("Call `make`. See `etc.` and `pytest.`") == []


def test_the_commands_of_a_shell_code_block() -> None:
    from aletheia.extract.said import block_commands

    text = ("Done. To run the tests:\n\n```bash\nuv run pytest -q -x\n```\n\nLint:\n```\nruff check .\n```\n"
            "A session:\n```console\n$ make build\nok 0.4s\n```\nSet up:\n```sh\n# deps\nbun install\n```")
    assert answer_commands(text) == [("uv run pytest -q -x", "test"), ("ruff check .", "lint"),
                                     ("make build", "build"), ("bun install", "setup")]
    # a failure, a question, an offer, the old way, a file of another language, command output
    assert block_commands("The suite fails:\n```\n$ npm test\nFAIL src/a.test.ts\nError: boom\n```") == []
    assert block_commands("Want me to run this?\n```bash\ncargo build --release\n```") == []
    assert block_commands("I'd suggest:\n```bash\ncargo build --release\n```") == []
    assert block_commands("Instead of the old way:\n```bash\npoetry install\n```") == []
    assert block_commands("The workflow:\n```yaml\nrun: npm test\n```") == []
    assert block_commands("It printed:\n```\nVITE v5 ready in 300 ms\nLocal: http://localhost:5173/\n```") == []


def test_a_command_the_user_writes_for_a_purpose_is_a_stated_command(conn: sqlite3.Connection) -> None:
    items = [
        Item(id="p1", kind="prompt", title="x", created_at=T, narrative=(
            "Run the tests with `go test ./...` before you push, and don't use `go test -short`. "
            "Lint is `golangci-lint run`.")),
        # a command the user says failed, or asks about, is not how the project runs
        Item(id="p2", kind="prompt", title="x", created_at=T + 1, narrative=(
            "`go build ./...` fails on my machine. Should we run `go vet ./...` too?")),
    ]
    drafts, _ = extract_rules(P, items)
    commands = {d.subject: d for d in drafts if d.kind == "command"}
    assert set(commands) == {"command:test", "command:lint"}
    test = commands["command:test"]
    assert test.value == "go test ./..." and test.stated and test.confirmed == 0
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            confirmed=d.confirmed, stated=d.stated, observed_at=T, session_id="s1",
                            source_ids=d.source_ids) for d in drafts])
    block = context.build_block(conn, P)
    assert "Run the tests with `go test ./...`. (u)" in block
    assert "Lint with `golangci-lint run`. (u)" in block


def test_an_answer_alone_puts_the_command_in_the_block(conn: sqlite3.Connection) -> None:
    items = [
        Item(id="p1", kind="prompt", title="x", narrative="Move the project to uv.", created_at=T),
        Item(id="a1", kind="response", title="x", created_at=T + 1, narrative=(
            "The project uses uv now. Commands: `uv sync` to install, `uv run pytest -q` for "
            "the tests.")),
    ]
    drafts, _ = extract_rules(P, items)
    test = next(d for d in drafts if d.subject == "command:test")
    assert test.value == "uv run pytest -q" and test.confirmed == 1 and not test.stated
    assert test.source_ids == ["a1"]
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            confirmed=d.confirmed, stated=d.stated, observed_at=T, session_id="s1",
                            source_ids=d.source_ids) for d in drafts])
    block = context.build_block(conn, P)
    assert "Run the tests with `uv run pytest -q`. (✓1)" in block
    assert "Install the project for development with `uv sync`." in block


def test_what_an_answer_says_a_file_is_for() -> None:
    from aletheia.extract.said import said_roles

    text = ("The skeleton is in place:\n"
            "- `src/shop/db.py` holds the async engine and the `get_session` dependency.\n"
            "Models live in `src/shop/models/order.py` (amounts as integer cents).\n"
            "Logging goes through structlog (`src/shop/logging.py`: JSON in production).\n"
            "I edited `src/a.py` and `src/b.py`. Fixed a typo in `README.md`. "
            "Should `src/c.py` hold the cache?")
    assert said_roles(text) == [
        ("src/shop/db.py", "holds the async engine and the get_session dependency."),
        ("src/shop/models/order.py", "Models live in src/shop/models/order.py (amounts as integer cents)."),
        ("src/shop/logging.py", "Logging goes through structlog (src/shop/logging.py: JSON in production)."),
    ]


def test_an_answer_alone_gives_a_file_its_role(conn: sqlite3.Connection) -> None:
    from aletheia import recall

    items = [
        Item(id="p1", kind="prompt", title="x", narrative="Set up the database layer.", created_at=T),
        Item(id="a1", kind="response", title="x", created_at=T + 1, narrative=(
            f"Done. `{P}/src/shop/db.py` creates the engine and the per-request session. "
            "`src/shop/fx.py` holds the rates client.")),
    ]
    drafts, _ = extract_rules(P, items)
    roles = sorted(d.text for d in drafts if d.kind == "file_role")
    assert roles == ["`src/shop/db.py` — creates the engine and the per-request session.",
                     "`src/shop/fx.py` — holds the rates client."]
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            confirmed=d.confirmed, stated=d.stated, observed_at=T, session_id="s1",
                            source_ids=d.source_ids) for d in drafts])
    text, _, _ = recall.file_block(conn, P, f"{P}/src/shop/db.py")
    assert "per-request session" in text


def test_the_packages_an_answer_lists_are_the_stack() -> None:
    from aletheia.extract.said import answer_dependencies

    text = ("The skeleton is in place: runtime deps: FastAPI 0.114, SQLAlchemy 2.0 (asyncio) + "
            "asyncpg, Alembic; dev deps: pytest, pytest-asyncio, ruff.")
    assert answer_dependencies(text) == [("FastAPI", False), ("SQLAlchemy", False), ("asyncpg", False),
                                         ("Alembic", False), ("pytest", True), ("pytest-asyncio", True),
                                         ("ruff", True)]
    # Prose after the colon, a plan, or nothing listed: no packages.
    assert answer_dependencies("Dependencies: none yet.") == []
    assert answer_dependencies("I'd add dev dependencies: vitest, msw") == []
    assert answer_dependencies("Packages: the ones we discussed before, and some more words") == []
    drafts, _ = extract_rules(P, [Item(id="a1", kind="response", title="x", narrative=text, created_at=T)])
    deps = {d.subject: d.value for d in drafts if str(d.subject).startswith("dep:")}
    assert deps["dep:asyncpg"] == "runtime" and deps["dep:pytest-asyncio"] == "dev"

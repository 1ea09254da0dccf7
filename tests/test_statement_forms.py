"""The forms in which people tell a coding agent what the project settled: standing
instructions said other ways than always/never, rules announced by a header, choices an
answer argues with a reason, a stack said as a list with a bare tool name; and what of them
reaches the context block.  The sentences are written from how people talk to agents, one
test per form."""

from __future__ import annotations

import sqlite3

import pytest

from aletheia.context import argued, build_block
from aletheia.extract import statements
from aletheia.extract.items import Item
from aletheia.extract.statements import _stack_list, argued_decision, sentence_facts
from aletheia.facts import FactIn, add_facts

P = "/repo/app"


def said(text: str, user: bool = True) -> list[tuple[str, str]]:
    item = Item("m1", "prompt" if user else "response", text[:80], narrative=text)
    return [(s.kind, s.text) for s in sentence_facts(item, user)]


@pytest.mark.parametrize("sentence", [
    "Going forward, keep the handlers free of raw SQL.",
    "Moving forward, every migration needs a down step.",
    "Please keep the commit messages in the imperative mood.",
    "Remember to update CHANGELOG.md with each user-facing change.",
    "Stick to snake_case for the JSON fields in the API.",
    "Stay away from lodash in the frontend bundle.",
    "From here on, the API answers in camelCase.",
    "No more than one default export per module, and only for pages.",
    "Whenever you add an endpoint, add it to the OpenAPI file too.",
    "Every time you touch the schema, regenerate the client.",
    "Be sure to run the formatter before pushing anything.",
    "Feature flags are required for anything user-facing.",
    "I'd rather we kept the config in environment variables.",
    "Default to UTC for every timestamp we store.",
    "Keep in mind the reports are read by accountants, so amounts stay exact decimals.",
    "We write the integration tests with testcontainers, one container per module.",
    "Fixtures go under tests/fixtures as JSON files.",
    "Shared types live in packages/shared and nowhere else.",
    "And please no print() debugging in the codebase, set up proper logging instead.",
])
def test_a_standing_instruction_is_a_convention_the_user_stated(sentence: str) -> None:
    assert said(sentence) == [("convention", f"Convention: {sentence}")]


@pytest.mark.parametrize("sentence", [
    # said tersely, with no word for always or never
    "Type hints on every function, please.",
    "PRs get squash-merged, no merge commits.",
    "no ORMs here, raw SQL through sqlc.",
    "one component per file, named like the component.",
    "Run the linter before you commit.",
])
def test_a_terse_rule_is_a_convention_the_user_stated_and_ranks_as_a_rule(sentence: str) -> None:
    from aletheia.context import _strength

    assert said(sentence) == [("convention", f"Convention: {sentence}")]
    assert _strength(f"Convention: {sentence}", "") >= 1.0


@pytest.mark.parametrize("sentence", [
    # a task, a report or an answer to the agent, not a rule
    "No idea why the build is slow on my machine, can you look at it?",
    "no worries, the migration for the orders table can wait until next week.",
    "The invoices page shows all of them, which is too many to scroll through.",
])
def test_no_and_every_said_in_passing_are_no_rule(sentence: str) -> None:
    assert [k for k, _ in said(sentence)] != ["convention"]


def test_the_rules_after_a_header_are_conventions_and_the_header_is_not() -> None:
    text = ("A few house rules before this grows. Wrap errors with context at every layer. "
            "Tests are table-driven with subtests. Handlers return problem+json on errors.")
    assert said(text) == [
        ("convention", "Convention: Wrap errors with context at every layer."),
        ("convention", "Convention: Tests are table-driven with subtests."),
        ("convention", "Convention: Handlers return problem+json on errors."),
    ]
    # The header with its first rule after a colon is one sentence, kept whole.
    assert said("Our conventions: always log with structlog, never print.") == [
        ("convention", "Convention: Our conventions: always log with structlog, never print.")]


def test_a_task_or_a_data_model_is_not_a_rule_without_a_header() -> None:
    assert said("Tests for the new parser are in the tests folder now.") == []
    assert said("A group has members; an expense belongs to a group and has a payer.") == []


@pytest.mark.parametrize("sentence", [
    "I used cursor pagination over offset because rows are added while people scroll.",
    "Chose BullMQ since we already run Redis for the rate limiter.",
    "I went for argon2id so that we follow the current OWASP advice.",
    "Passwords are hashed with argon2id because it is the current OWASP recommendation.",
    "Unpaid bookings are released after 30 minutes so the seat frees up again.",
    "I kept the Prisma client in one PrismaService to avoid opening a pool per module.",
    "A database sequence would be simpler, but sequences leave gaps when a transaction rolls back.",
    "For a wall display TanStack Query is the better fit: mutations and targeted invalidation.",
])
def test_a_choice_an_answer_argues_is_a_decision(sentence: str) -> None:
    assert argued_decision(sentence)
    # (a change's old value may be left out of the stored text: that is the updates' work)
    ((kind, text),) = said(sentence, user=False)
    assert kind == "decision" and text.startswith(f"Decision: {sentence[:20]}") and argued(text)


@pytest.mark.parametrize("sentence", [
    "The test failed with a missing relation because the test database was empty.",
    "I'd use Redis for this because it is already running.",
    "The service has been slow since 2023.",
    "It works but the page is slow to load on the first visit.",
    "Logging goes through pino now, JSON in production.",
])
def test_a_cause_a_proposal_or_a_plain_report_is_no_argued_decision(sentence: str) -> None:
    assert not argued_decision(sentence)


def test_a_stack_said_as_a_list_with_a_bare_tool_name() -> None:
    assert _stack_list("NestJS 10 on Node 20, Prisma with Postgres, pnpm.")
    assert not _stack_list("Fix the login, the signup and the reset pages.")
    assert not _stack_list("Add Redis, Celery and the worker.")


def _fact(text: str, *, stated: bool = False, kind: str = "decision") -> FactIn:
    return FactIn(project=P, text=text, kind=kind, stated=stated, session_id="s1",
                  observed_at=1_700_000_000_000)


def test_an_argued_decision_reaches_the_block_and_a_bare_remark_does_not(conn: sqlite3.Connection) -> None:
    add_facts(conn, [
        _fact("Decision: I used cursor pagination over offset because rows shift while people scroll."),
        _fact("Decision: Added the Class and Booking models."),
    ])
    block = build_block(conn, P)
    assert "cursor pagination over offset because rows shift" in block
    assert "Class and Booking models" not in block


def test_a_task_said_once_gives_way_before_a_rule_or_an_argued_choice(conn: sqlite3.Connection) -> None:
    add_facts(conn, [_fact(f"Convention: Give the report page a filter number {i}.", stated=True,
                           kind="convention") for i in range(60)])
    add_facts(conn, [
        _fact("Convention: Never log a customer's email address.", stated=True, kind="convention"),
        _fact("Decision: Chose BullMQ since we already run Redis for the rate limiter."),
    ])
    block = build_block(conn, P)
    assert "Never log a customer's email address." in block
    assert "Chose BullMQ since we already run Redis" in block
    assert block.count("Give the report page a filter") < 40


def test_a_value_the_user_sets_is_a_decision_without_a_choice_word() -> None:
    assert said("Add a worker that pulls the feed every 10 minutes and stores the rows.") == [
        ("decision", "Decision: Add a worker that pulls the feed every 10 minutes and stores the rows.")]


def test_a_standing_rule_said_another_way_ranks_as_a_rule_not_a_task() -> None:
    from aletheia.context import _strength

    assert _strength("Convention: Going forward, slow work goes on the queue.", "") > 0
    assert _strength("Convention: Give the report page a filter.", "") == 0


@pytest.mark.parametrize("sentence", [
    "The cursor is built from the (created_at, id) pair of the last row on the page.",
    "Each row keeps its id and the tenant id from the token, which the repository filters on.",
])
def test_an_id_column_is_no_recommendation(sentence: str) -> None:
    """"I'd" is a recommendation; the word "id" in any case is not (the pattern is case-blind)."""
    assert not [kind for kind, _ in said(sentence, user=False) if kind == "decision"]


def test_i_would_and_id_said_as_recommendations_still_are() -> None:
    for sentence in ("I'd keep the cursor pagination on created_at for the feed endpoints.",
                     "I’d use Postgres advisory locks for the nightly import job."):
        assert [kind for kind, _ in said(sentence, user=False) if kind == "decision"], sentence


def test_a_lower_case_rule_before_a_question_is_kept_and_the_question_is_not() -> None:
    # typed in lower case, the rule and the question after it read as one sentence ending in "?"
    assert said("the peaks are recomputed on every resize. cache them per zoom level, always. "
                "where's the drawing code?") == [
        ("convention", "Convention: the peaks are recomputed on every resize. cache them per zoom level, always.")]
    assert said("should we always cache them per zoom level? or per file?") == []



# A crash report, a tool's log and a REPL's echo pasted into a prompt (made-up projects).
_PASTED = (
    "The import crashed again overnight, here is the report.\n"
    "{gen_server,handle_msg,6,[{file,\"gen_server.erl\"},{line,1183}]},\n"
    "{depot_feed,handle_cast,2,[{file,\"apps/depot/src/depot_feed.erl\"},{line,15}]},\n"
    "Depot::Model::Stock::add(Depot::Model::Stock=HASH(0x55d1c29f0d40), \"SK-26-043\", \"1.5\") "
    "called at lib/Depot/Controller/Stock.pm line 10\n"
    "Info:    routing  1.83  2.35 Net core.mix.level_q[3] (148,33) -> (150,31)\n"
    ". esttab using \"$out/table1.rtf\", cells(\"mean(fmt(2)) sd(fmt(2))\") label replace\n"
    "From now on always use Postgres for the retry queue.\n"
)


def test_a_pasted_trace_or_log_line_is_no_statement_of_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    assert said(_PASTED) == [("convention", "Convention: From now on always use Postgres for the retry queue.")]
    # (without the test, the pasted lines were stored as the user's decisions)
    monkeypatch.setattr(statements, "MACHINE_SHARE", 99)
    assert len(said(_PASTED)) > 1


@pytest.mark.parametrize("sentence", [
    "Deploy the docs to https://docs.example.org/depot/v2/ from now on, never to the old bucket.",
    "Keep the config in config/app/settings.toml and always load it through Settings.load().",
    "Always run the suite as `pytest -q -x --no-header` (never the full -v output).",
])
def test_a_typed_rule_with_a_path_an_address_or_brackets_is_still_one(sentence: str) -> None:
    assert not statements.machine_output(sentence)
    assert said(sentence), sentence

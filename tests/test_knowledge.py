"""Project knowledge: slots and superseding (a newer fact about the same subject replaces the
older one, kept and linked), change statements, evidence, history, and what the extractor
finds (the stack, package manager, runtimes, make targets, user statements)."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from aletheia import facts
from aletheia.changes import reported_olds
from aletheia.extract import Item, extract_rules
from aletheia.extract.knowledge import (
    install_command,
    mix_findings,
    package_json_fragment,
    version_findings,
)
from aletheia.extract.rules import FileEdit
from aletheia.extract.statements import change_olds, current_form, sentence_facts, statement_slot
from aletheia.extract.updates import file_edit_drafts, number_drafts
from aletheia.facts import FactIn, add_facts
from aletheia.search import SearchQuery, search

P = "/home/dev/shop"
T = 1_800_000_000_000


def slot(text: str, value: str, at: int, *, subject: str = "tool:package-manager",
         kind: str = "stack", session: str = "s1", source: str = "m1") -> FactIn:
    return FactIn(project=P, text=text, kind=kind, subject=subject, value=value, observed_at=at,
                  confirmed=1, session_id=session, source_ids=[source])


def active(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT text FROM fact WHERE status = 'active' ORDER BY observed_at, rowid")]


# --- superseding -----------------------------------------------------------------------------


def test_a_newer_fact_in_the_same_slot_supersedes_the_older_one(conn: sqlite3.Connection) -> None:
    old = add_facts(conn, [slot("Package manager: `poetry`.", "poetry", T)]).added[0]
    result = add_facts(conn, [slot("Package manager: `uv`.", "uv", T + 10, session="s2")])
    new = result.added[0]
    assert result.superseded == [old]
    row = conn.execute("SELECT status, superseded_by FROM fact WHERE id = ?", (old,)).fetchone()
    assert tuple(row) == ("superseded", new)  # kept and linked
    assert active(conn) == ["Package manager: `uv`."]
    # Search and the fact list show the current one only; history shows the chain.
    hits = search(conn, SearchQuery(q="package manager", project=P))
    assert [h.title for h in hits if h.type == "fact"] == ["Package manager: `uv`."]
    assert [f["text"] for f in facts.list_facts(conn, project=P)] == ["Package manager: `uv`."]
    assert [f["id"] for f in facts.history(conn, old)] == [new, old]


def test_an_older_fact_compressed_late_does_not_become_current(conn: sqlite3.Connection) -> None:
    add_facts(conn, [slot("Package manager: `uv`.", "uv", T + 10)])
    late = add_facts(conn, [slot("Package manager: `poetry`.", "poetry", T)])
    row = conn.execute("SELECT status, superseded_by FROM fact WHERE id = ?", (late.added[0],)).fetchone()
    assert row["status"] == "superseded" and row["superseded_by"] is not None
    assert active(conn) == ["Package manager: `uv`."]


def test_the_same_value_again_adds_evidence_not_a_row(conn: sqlite3.Connection) -> None:
    add_facts(conn, [slot("Package manager: `uv`.", "uv", T)])
    again = add_facts(conn, [slot("Package manager: `uv` (`uv add`).", "uv", T + 5, session="s2",
                                  source="m2")])
    assert again.added == [] and len(again.merged) == 1
    (f,) = facts.list_facts(conn, project=P)
    assert f["evidence"] == {"sessions": 2, "confirmed": 2, "stated": False, "strong": True}
    # A re-run of the same job brings the same sources: no new evidence.
    rerun = add_facts(conn, [slot("Package manager: `uv` (`uv add`).", "uv", T + 5, session="s2",
                                  source="m2")])
    assert rerun.merged == [] and facts.list_facts(conn, project=P)[0]["confirmed"] == 2


def test_a_value_chosen_again_comes_back(conn: sqlite3.Connection) -> None:
    first = add_facts(conn, [slot("Package manager: `npm`.", "npm", T)]).added[0]
    add_facts(conn, [slot("Package manager: `bun`.", "bun", T + 10)])
    add_facts(conn, [slot("Package manager: `npm`.", "npm", T + 20, source="m3")])
    assert active(conn) == ["Package manager: `npm`."]
    assert conn.execute("SELECT status FROM fact WHERE id = ?", (first,)).fetchone()[0] == "active"


def test_a_change_statement_retires_what_named_the_old_value(conn: sqlite3.Connection) -> None:
    add_facts(conn, [
        FactIn(project=P, text="Sign tokens with HS256 using LEDGER_JWT_SECRET.", kind="decision",
               stated=True, observed_at=T),
        FactIn(project=P, text="Tokens expire after 15 minutes.", kind="decision", stated=True,
               observed_at=T),
    ])
    add_facts(conn, [FactIn(project=P, text="Switch the JWTs to RS256.", kind="decision",
                            stated=True, observed_at=T + 10, replaces=["HS256"])])
    assert active(conn) == ["Tokens expire after 15 minutes.", "Switch the JWTs to RS256."]


def test_a_slot_change_retires_prose_naming_the_old_value_and_a_removed_dependency(
    conn: sqlite3.Connection,
) -> None:
    add_facts(conn, [
        FactIn(project=P, text="Use npm for now.", kind="decision", stated=True, observed_at=T),
        FactIn(project=P, text="Hash passwords with passlib bcrypt.", kind="decision", stated=True,
               observed_at=T),
        slot("Package manager: `npm`.", "npm", T),
        slot("Dependency: `passlib`.", "runtime", T, subject="dep:passlib"),
        slot("Dev dependency: `httpx`.", "dev", T, subject="dep:httpx"),
    ])
    add_facts(conn, [
        slot("Package manager: `bun`.", "bun", T + 10),
        FactIn(project=P, text="`passlib` was removed from the dependencies.", kind="stack",
               subject="dep:passlib", value="(removed)", observed_at=T + 10, confirmed=1,
               session_id="s1", source_ids=["m1"], ends=True),
        # A dependency that moved from dev to runtime is still a dependency: nothing retired.
        slot("Dependency: `httpx`.", "runtime", T + 10, subject="dep:httpx", source="m9"),
    ])
    # The removal ends the slot: nothing about passlib is current, the history keeps both.
    assert sorted(active(conn)) == ["Dependency: `httpx`.", "Package manager: `bun`."]
    (removal,) = conn.execute("SELECT id FROM fact WHERE value = '(removed)'").fetchone()
    chain = [f["text"] for f in facts.history(conn, removal)]
    assert chain[0] == "`passlib` was removed from the dependencies."
    assert sorted(chain[1:]) == ["Dependency: `passlib`.", "Hash passwords with passlib bcrypt."]
    # Added again, then removed again: each time the newest says what holds.
    add_facts(conn, [slot("Dependency: `passlib`.", "runtime", T + 20, subject="dep:passlib",
                          source="m5")])
    assert "Dependency: `passlib`." in active(conn)
    add_facts(conn, [FactIn(project=P, text="`passlib` was removed from the dependencies.",
                            kind="stack", subject="dep:passlib", value="(removed)",
                            observed_at=T + 30, source_ids=["m6"], ends=True)])
    assert "Dependency: `passlib`." not in active(conn)


def test_what_an_interim_value_retired_comes_back_with_the_value(conn: sqlite3.Connection) -> None:
    # `mypy src` failed and was fixed; an answer misread as a type-check command briefly fills
    # the slot and retires what named `mypy src`; the next session runs `mypy src` again: the
    # slot is `mypy src` again, and so are the fix and the rule that name it.
    cmd = dict(subject="command:typecheck", kind="command")
    add_facts(conn, [slot("Type-check with `mypy src`.", "mypy src", T, **cmd)])
    fix = "`mypy src` failed with `Library stubs not installed for \"yaml\"`. Fixed by `pip install types-PyYAML`."
    rule = "Convention: always run `mypy src` before pushing."
    add_facts(conn, [FactIn(project=P, kind="error_fix", observed_at=T + 1, source_ids=["m2"], text=fix),
                     FactIn(project=P, kind="convention", observed_at=T + 2, source_ids=["m3"],
                            stated=True, text=rule)])
    add_facts(conn, [slot("Type-check with `import that ruff flagged`.", "import that ruff flagged",
                          T + 10, session="s2", source="m4", **cmd)])
    assert fix not in active(conn) and rule not in active(conn)
    add_facts(conn, [slot("Type-check with `mypy src`.", "mypy src", T + 20, session="s3",
                          source="m5", **cmd)])
    now = active(conn)
    assert fix in now and rule in now and "Type-check with `mypy src`." in now
    assert "Type-check with `import that ruff flagged`." not in now


def test_evidence_thresholds() -> None:
    assert not facts.strong(1, 0, False)  # one session, nothing else: weak
    assert facts.strong(1, 0, True) and facts.strong(1, 1, False) and facts.strong(2, 0, False)


def test_cli_facts_shows_current_and_history(conn: sqlite3.Connection) -> None:
    from aletheia.cli import cli

    old = add_facts(conn, [slot("Package manager: `poetry`.", "poetry", T)]).added[0]
    add_facts(conn, [slot("Package manager: `uv`.", "uv", T + 10)])
    runner = CliRunner()
    listed = runner.invoke(cli, ["facts", "-p", P], catch_exceptions=False).output
    assert "`uv`" in listed and "poetry" not in listed and "(✓1; rules" in listed
    chains = runner.invoke(cli, ["facts", "-p", P, "--history"], catch_exceptions=False).output
    lines = chains.splitlines()
    assert "`uv`" in lines[0] and lines[1].startswith(f"  ↳ replaced {old}") and "[superseded]" in lines[1]
    one = json.loads(runner.invoke(cli, ["facts", old, "--history", "--json"]).output)
    assert [f["value"] for f in one] == ["uv", "poetry"]
    missing = runner.invoke(cli, ["facts", "01NOSUCHFACT0000000000000", "--history"])
    assert missing.exit_code != 0 and "no fact" in missing.output


def test_a_later_sessions_choices_supersede_through_the_worker_the_block_and_the_cli(
    conn: sqlite3.Connection,
) -> None:
    # Two sessions a month apart, compressed by the real worker (offline).  The second moves the
    # port and the package manager in one sentence, with a reason that names the old port, and
    # its answer describes a file with a clause about the dropped tool.
    from aletheia import store
    from aletheia.cli import cli
    from aletheia.context import build_block
    from aletheia.store import MemoryIn
    from aletheia.tasks.compress import JobRunner, drain

    def said(text: str, kind: str, session: str, at: int) -> None:
        store.write_memory(conn, MemoryIn(project=P, kind=kind, title=text, narrative=text,
                                          created_at=at, session_id=session))

    later = T + 30 * 86_400_000
    said("Start billing-api: FastAPI and Postgres, with Poetry for the dependencies. The dev "
         "server runs on port 8080.", "prompt", "s1", T)
    said("Set up: Poetry manages the dependencies and `make dev` serves the API on port 8080.",
         "response", "s1", T + 1000)
    said("The gateway sits on 8080 now. Move the dev server to port 8090, and switch the project "
         "from Poetry to uv.", "prompt", "s2", later)
    said("Done: the dev server listens on port 8090 and the project uses uv instead of Poetry "
         "(`uv sync`).", "response", "s2", later + 1000)
    for session in ("s1", "s2"):
        store.queue_stop(conn, session, P, "claude-code")
    assert drain(conn, JobRunner(use_provider=False)).done == 2

    runner = CliRunner()
    listed = runner.invoke(cli, ["facts", "-p", P], catch_exceptions=False).output
    block = build_block(conn, P)
    for shown in (listed, block):
        assert "8090" in shown and "uv" in shown
        assert "8080" not in shown and "poetry" not in shown.lower()
    # The history keeps the old choices, each under the change that replaced it.
    lines = runner.invoke(cli, ["facts", "-p", P, "--history"], catch_exceptions=False).output.splitlines()
    for old in ("`8080` was replaced", "`Poetry` was replaced by `uv`."):
        at = next(i for i, line in enumerate(lines) if old in line)
        assert lines[at + 1].startswith("  ↳ replaced") and "[superseded]" in lines[at + 1]
    assert any("port 8080" in line for line in lines) and any("with Poetry" in line for line in lines)


def test_prose_written_after_a_change_is_kept_without_the_replaced_value(
    conn: sqlite3.Connection,
) -> None:
    # `Poetry` was replaced; an answer written later describes pyproject.toml with a clause
    # about it: the role is stored without that clause.  A role that says the old value of a
    # slot (the poll interval) is said again without it when the slot changes.
    add_facts(conn, [FactIn(project=P, kind="decision", text="`Poetry` was replaced.",
                            subject="replaced:poetry", value="(replaced)", observed_at=T,
                            replaces=["Poetry"], ends=True, source_ids=["m1"])])
    add_facts(conn, [FactIn(project=P, kind="file_role", observed_at=T + 5, source_ids=["m2"],
                            text="`pyproject.toml` — PEP 621 metadata, dev tools in a dependency "
                                 "group; poetry.lock is replaced by uv.lock.")])
    role = "`src/useMetrics.ts` — polls every 30 s, through a route handler at /api/metrics."
    add_facts(conn, [slot("Decision: poll the metrics every 30 seconds.", "30 s", T,
                          subject="setting:every-poll", kind="decision"),
                     FactIn(project=P, kind="file_role", text=role, observed_at=T + 1,
                            source_ids=["m3"])])
    add_facts(conn, [FactIn(project=P, kind="decision", text="`30 seconds` was replaced.",
                            subject="replaced:30 seconds", value="(replaced)", observed_at=T + 10,
                            replaces=["30 seconds"], ends=True, source_ids=["m4"])])
    now = active(conn)
    assert "`pyproject.toml` — PEP 621 metadata, dev tools in a dependency group." in now
    assert any(t.startswith("`src/useMetrics.ts`") and "through a route handler at /api/metrics" in t
               for t in now)
    assert not any("30 s" in t or "poetry" in t.lower() for t in now)


# --- what the extractor finds ----------------------------------------------------------------


def test_install_commands_name_the_package_manager_and_dependencies() -> None:
    assert install_command('poetry add fastapi "uvicorn[standard]" "sqlalchemy[asyncio]>=2.0"') == (
        "poetry", "add", [("fastapi", False), ("uvicorn", False), ("sqlalchemy", False)])
    assert install_command("poetry add --group dev pytest") == ("poetry", "add", [("pytest", True)])
    assert install_command("bun add -d @tanstack/react-query@5 zod") == (
        "bun", "add", [("@tanstack/react-query", True), ("zod", True)])
    assert install_command("uv remove black") == ("uv", "remove", [("black", False)])
    assert install_command("npm ci") == ("npm", "sync", [])
    assert install_command("python -m pip install -e .") is None or install_command(
        "python -m pip install -e .")[2] == []
    assert install_command("pytest -q") is None


def test_version_commands_name_the_runtime() -> None:
    (py,) = version_findings("python3.12 --version && poetry --version", "Python 3.12.6\nPoetry 1.8")
    assert (py.subject, py.value) == ("runtime:python", "Python 3.12")
    (node,) = version_findings("node -v", "v22.11.0")
    assert (node.subject, node.value) == ("runtime:node", "Node 22")


def test_a_package_json_edit_names_its_scripts() -> None:
    found = package_json_fragment("package.json", '"typecheck": "tsc --noEmit",\n"next": "14.2.13"')
    assert [(f.subject, f.value) for f in found] == [("script:typecheck", "tsc --noEmit")]


def test_a_mix_exs_names_its_dependencies_and_aliases() -> None:
    from aletheia.extract.knowledge import edited_dependencies, file_findings

    whole = ('defmodule App.MixProject do\n  def project do\n    [app: :app, elixirc_paths: ["lib", "test/support"],\n'
             '     aliases: aliases(), deps: deps()]\n  end\n  defp deps do\n    [\n      {:phoenix, "~> 1.7.14"},\n'
             '      {:floki, ">= 0.30.0", only: :test},\n      {:bandit, "~> 1.5"}\n    ]\n  end\nend\n')
    assert [(f.subject, f.value) for f in file_findings("mix.exs", whole)] == [
        ("dep:phoenix", "runtime"), ("dep:floki", "dev"), ("dep:bandit", "runtime")]
    # the lines an edit shows: an alias is a named task list, as a make target is
    found = mix_findings("mix.exs", '      "assets.deploy": ["tailwind app --minify", "phx.digest"],\n'
                                    '      precommit: ["format --check-formatted", "credo --strict", "test"]')
    assert [(f.subject, f.text) for f in found] == [
        ("mix:assets.deploy", "`mix assets.deploy` runs `tailwind app --minify && phx.digest` (`mix.exs`)."),
        ("mix:precommit", "`mix precommit` runs `format --check-formatted && credo --strict && test` (`mix.exs`).")]
    # a dependency an edit takes out is removed
    assert edited_dependencies("mix.exs", '{:bandit, "~> 1.5"},\n{:timex, "~> 3.7"}',
                               '{:bandit, "~> 1.5"},\n{:tz, "~> 0.28"}') == ["timex"]


def test_a_flake_nix_names_its_inputs_and_the_release_each_follows() -> None:
    from aletheia.extract.knowledge import edited_dependencies, file_findings

    whole = ('{\n  inputs = {\n    nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";\n'
             '    home-manager.url = "github:nix-community/home-manager/release-24.11";\n'
             '    home-manager.inputs.nixpkgs.follows = "nixpkgs";\n'
             '    disko = { url = "github:nix-community/disko"; inputs.nixpkgs.follows = "nixpkgs"; };\n'
             '  };\n  outputs = { self, nixpkgs, ... }: { };\n}\n')
    assert [(f.subject, f.value) for f in file_findings("flake.nix", whole)] == [
        ("dep:nixpkgs", "runtime"), ("version:nixpkgs", "nixpkgs nixos-24.11"),
        ("dep:home-manager", "runtime"), ("version:home-manager", "home-manager release-24.11"),
        ("dep:disko", "runtime")]
    # an input an edit takes out is removed; a `follows` line is no input
    assert edited_dependencies("flake.nix", '    ragenix.url = "github:yaxitech/ragenix";\n',
                               '    sops-nix.url = "github:Mic92/sops-nix";\n'
                               '    sops-nix.inputs.nixpkgs.follows = "nixpkgs";\n') == ["ragenix"]


def test_statements_name_their_slot_and_their_old_values() -> None:
    assert statement_slot("Move ledgerline's dev server to port 8010 everywhere.") == ("port:dev-server", "8010")
    assert statement_slot("Use 3001 for the dev server and the e2e server.") == ("port:dev-server", "3001")
    assert statement_slot("Make the metrics poll every 15 seconds.") == ("setting:every-poll", "15 s")
    assert statement_slot("Use npm for now.") == ("tool:package-manager", "npm")
    assert statement_slot("And bump Node to 22 everywhere.") == ("runtime:node", "Node 22")
    assert statement_slot("Make it fail fast: 3 second timeout.") == ("setting:timeout", "3 s")
    assert change_olds("Switch the JWTs from HS256 to RS256.") == ["HS256"]
    assert change_olds("Let's drop black and use ruff for both.") == ["black"]
    assert change_olds("Replace Jest with Vitest + jsdom.") == ["Jest"]
    assert change_olds("Drop the table and start again.") == []  # not a choice of the project
    assert current_form("Switch the JWTs from HS256 to RS256: keep the expiry.") == \
        "Switch the JWTs to RS256: keep the expiry."
    assert current_form("Let's drop black and use ruff for both.") == "Use ruff for both."
    # A clause that still names a dropped value goes; a statement that only drops says nothing.
    assert current_form("Replace Sidekiq with GoodJob so jobs live in Postgres and we can drop Redis "
                        "entirely.") == "Use GoodJob so jobs live in Postgres."
    assert current_form("Drop ESLint and Prettier and use Biome for both.") == "Use Biome for both."
    assert current_form("Sidekiq and Redis are gone.") == ""
    # Words of the sentence around a change are not values: nothing is retired by them.
    assert change_olds("so a lazy load fails loudly in tests instead of with this obscure error") == []
    assert change_olds("waits 3 s instead of holding a worker indefinitely") == []
    assert current_form("Replace Jest with Vitest.") == "Use Vitest."


def test_the_ways_a_change_is_said() -> None:
    said = {
        "Swap Jest for Vitest.": (["Jest"], "Use Vitest."),
        "We swapped out Moment for date-fns.": (["Moment"], "We use date-fns."),
        "Celery was replaced by Dramatiq.": (["Celery"], "Use Dramatiq."),
        "Dramatiq replaces Celery for background jobs.": (["Celery"], "Dramatiq for background jobs."),
        "We no longer use Redis; the cache is in Postgres now.": (["Redis"], "The cache is in Postgres now."),
        "Migrate off Heroku to Fly.io.": (["Heroku"], "Migrate to Fly.io."),
        "Phase out Mocha in favour of Vitest.": (["Mocha"], "Use Vitest."),
        "Let's go with Postgres over MySQL.": (["MySQL"], "Let's go with Postgres."),
        "Sign with HS256 -> RS256 now.": (["HS256"], "Sign with RS256 now."),
        "Move the queue to SQS (was RabbitMQ).": (["RabbitMQ"], "Move the queue to SQS."),
        "Use Aerich for migrations instead of Alembic.": (["Alembic"], "Use Aerich for migrations."),
        "The new boards came, so we're off the UP5K and there's room to spare.":
            (["UP5K"], "The new boards came and there's room to spare."),
    }
    for sentence, (olds, current) in said.items():
        assert (change_olds(sentence), current_form(sentence)) == (olds, current), sentence
    # Code a change rewrote is not a choice it left.
    assert change_olds("Replaced `print()` with `logger.info()`.") == []
    assert change_olds("Replace `requests.get` with `httpx.get` and `datetime.utcnow` with `now(UTC)`.") == []
    # Words of an ordinary sentence are not a change of the project's choices.
    assert change_olds("The user is replaced by a guest account after logout.") == []
    assert change_olds("The request goes over HTTP to the service.") == []
    assert change_olds("We're off to the Fringe next week, back Monday.") == []
    assert change_olds("Turn off the LED when the beam is clear.") == []
    assert change_olds("Bump Node 20 → 22 everywhere.") == []  # the runtime's slot says it


def test_a_swap_retires_the_facts_about_the_old_tool(conn: sqlite3.Connection) -> None:
    add_facts(conn, [
        FactIn(project=P, text="Run the unit tests with Jest and jsdom.", kind="convention", stated=True,
               observed_at=T),
        FactIn(project=P, text="Components live in src/components.", kind="convention", stated=True,
               observed_at=T),
    ])
    prompt = Item(id="p", kind="prompt", title="x", narrative="Jest keeps fighting us on ESM. Swap Jest for Vitest.")
    (change,) = [s for s in sentence_facts(prompt, True) if s.replaces]
    add_facts(conn, [FactIn(project=P, text=change.text, kind=change.kind, stated=True,
                            observed_at=T + 10, replaces=change.replaces)])
    assert "Jest" not in " ".join(active(conn))
    assert "Components live in src/components." in active(conn)


def test_a_runtime_change_sets_the_new_version_and_says_only_that() -> None:
    said = {
        "Bump PHP 8.2 → 8.3 everywhere.": ("PHP 8.3", "Bump PHP 8.3 everywhere."),
        "Bump Node 20 -> 22 in CI and the image.": ("Node 22", "Bump Node 22 in CI and the image."),
        "Upgrade from Python 3.11 to 3.12.": ("Python 3.12", "Upgrade to Python 3.12."),
        "Move from Node 20 to Node 22.": ("Node 22", "Move to Node 22."),
        "And bump Node to 22 everywhere.": ("Node 22", "And bump Node to 22 everywhere."),
    }
    for sentence, (value, text) in said.items():
        prompt = Item(id="p", kind="prompt", title="x", narrative=sentence)
        (found,) = sentence_facts(prompt, True)
        assert (found.value, found.text.split(": ", 1)[1]) == (value, text), sentence
    # A runtime named in passing keeps its version.
    assert statement_slot("Rails 7.1 on Ruby 3.2, Postgres, Tailwind") == ("runtime:ruby", "Ruby 3.2")


def test_services_started_by_name_fill_a_slot_each() -> None:
    from aletheia.extract.rules import command_slot

    assert [command_slot(c, "services") for c in (
        "docker compose up -d db", "docker compose up -d redis", "docker compose -f dev.yml up -d redis db",
        "docker compose up -d", "docker compose up --scale web=2 -d")] == [
        "services:db", "services:redis", "services:db+redis", "services", "services"]


def test_what_a_command_does_in_other_ecosystems() -> None:
    from aletheia.extract.commands import category

    assert [category(c) for c in ("./vendor/bin/pest", "php artisan test", "./vendor/bin/pint --test",
                                  "php artisan migrate:fresh", "php artisan queue:work --once")] == [
        "test", "test", "format", "migrate", "worker"]
    # a container image is built beside the project's own build: neither replaces the other
    assert [category(c) for c in ("./gradlew build", "docker build -t x .", "./gradlew bootBuildImage",
                                  "docker compose build", "cargo build --release")] == [
        "build", "image", "image", "image", "build"]


def test_a_dependency_taken_out_of_a_manifest_is_removed() -> None:
    def edit(path: str, old: str, new: str, n: int) -> Item:
        data = {"file_path": f"{P}/{path}", "old_string": old, "new_string": new}
        return Item(id=f"e{n}", kind="tool_event", title=f"Edit {path}", subtitle="Edit",
                    narrative=f"input: {json.dumps(data)}\n\noutput:\n{{}}", files=(f"{P}/{path}",))

    drafts, _ = extract_rules(P, [
        edit("requirements.txt", "celery==5.3.6\nredis==5.0.1", "dramatiq[redis]==1.16.0", 1),
        edit("package.json", '    "jest": "^29.7.0",\n    "ts-jest": "^29.1.0",', '    "vitest": "^2.1.0",', 2),
        edit("Gemfile", 'gem "sidekiq", "~> 7.2"', 'gem "good_job", "~> 4.1"', 3),
        edit("package.json", '    "zod": "^3.22.0",', '    "zod": "^3.23.8",', 4),  # a new version only
        Item(id="b1", kind="tool_event", title="Bash: $ pip uninstall -y flask-cors", subtitle="Bash",
             narrative='input: {"command": "pip uninstall -y flask-cors"}\n\noutput:\nSuccessfully uninstalled'),
    ])
    removed = sorted(d.subject for d in drafts if d.value == "(removed)")
    # redis is still named ("dramatiq[redis]"); zod only changed its version
    assert removed == ["dep:celery", "dep:flask-cors", "dep:jest", "dep:sidekiq", "dep:ts-jest"]


def test_a_change_only_the_answer_reports_retires_the_old_value(conn: sqlite3.Connection) -> None:
    add_facts(conn, [FactIn(project=P, text="Start the worker with `bundle exec sidekiq`.", kind="command",
                            subject="command:worker", value="bundle exec sidekiq", confirmed=2, observed_at=T)])
    prompt = Item(id="p", kind="prompt", title="x", narrative="Use GoodJob for the background jobs.")
    answer = Item(id="a", kind="response", title="x", narrative=(
        "Jobs moved from Sidekiq to GoodJob: the queue lives in Postgres now. "
        "If you want, we could also drop Redis from the compose file."))
    drafts, _ = extract_rules(P, [prompt, answer])
    replaced = [d.subject for d in drafts if d.value == "(replaced)"]
    assert replaced == ["replaced:sidekiq"]  # the proposal about Redis is not a change
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            observed_at=T + 10, replaces=d.replaces, ends=d.ends) for d in drafts])
    assert not any("sidekiq" in t for t in active(conn))


def test_a_tool_said_by_its_short_form_is_retired_and_not_named_again(conn: sqlite3.Connection) -> None:
    # A database sessions call by its short form ("no more influx"): the tool's own "uses" fact
    # goes, and the answer telling how it went ("the InfluxDB writer is deleted") keeps it gone.
    add_facts(conn, [FactIn(project=P, text="Uses InfluxDB (database).", kind="stack", subject="uses:influxdb",
                            value="influxdb (in use)", observed_at=T)])
    prompt = Item(id="p", kind="prompt", title="x", created_at=2, narrative=(
        "the club is moving everything to Home Assistant. so no more influx: publish to its MQTT "
        "broker instead."))
    answer = Item(id="a", kind="response", title="x", created_at=3, narrative=(
        "Readings now go to the Mosquitto broker. The InfluxDB writer is deleted."))
    drafts, _ = extract_rules(P, [prompt, answer])
    assert "uses:influxdb" not in [d.subject for d in drafts]
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            observed_at=T + 10, replaces=d.replaces, ends=d.ends) for d in drafts])
    assert not any("influx" in t.lower() for t in active(conn))


def test_an_edited_script_line_supersedes_the_command_run_by_hand(conn: sqlite3.Connection) -> None:
    # A session ran the build by hand and put it in a script; a later one edits the script's line
    # (the target changed) without reading it whole: the command fact quoting the old line goes.
    gnu = "zig build -Dtarget=aarch64-linux-gnu.2.36 -Doptimize=ReleaseSmall --sysroot ~/sysroots/pi"
    musl = "zig build -Dtarget=aarch64-linux-musl -Doptimize=ReleaseSmall"
    add_facts(conn, [FactIn(project=P, text=f"Build with `{gnu}`.", kind="command", subject="command:build",
                            value=gnu, confirmed=1, observed_at=T)])
    assert file_edit_drafts(conn, P, [FileEdit("deploy/push.sh", "set -e", "set -eu", "e1", T + 5),
                                      FileEdit("deploy/push.sh", "scp", "rsync", "e1", T + 5)]) == []
    (draft,) = file_edit_drafts(conn, P, [FileEdit("deploy/push.sh", gnu, musl, "e2", T + 10)])
    assert (draft.subject, draft.value, draft.text) == ("command:build", musl, f"Build with `{musl}`.")
    add_facts(conn, [FactIn(project=P, text=draft.text, kind=draft.kind, subject=draft.subject,
                            value=draft.value, confirmed=draft.confirmed, observed_at=draft.at)])
    assert active(conn) == [f"Build with `{musl}`."]
    # a line the edit keeps (lines added after it) changes nothing
    assert file_edit_drafts(conn, P, [FileEdit("deploy/push.sh", musl, musl + "\nscp x pi:", "e3", T + 20)]) == []


def test_edited_numbers_are_lines_whose_numbers_alone_changed() -> None:
    from aletheia.changes import edited_numbers, says_number

    assert edited_numbers("src/reminders.clj", "(def lead (Duration/ofHours 24))",
                          "(def lead (Duration/ofHours 48))") == [
        ("(def lead (Duration/ofHours #))", "(def lead (Duration/ofHours 48))", ["24"], ["48"])]
    # a comment reworded beside it is no number; the setting under it is
    assert edited_numbers("src/rota.clj", ";; cap at three a week.\n(def max-shifts-per-week 3)",
                          ";; cap (lowered for winter).\n(def max-shifts-per-week 2)") == [
        ("(def max-shifts-per-week #)", "(def max-shifts-per-week 2)", ["3"], ["2"])]
    assert edited_numbers("conf/run.nml", "  kd = 0.5\n  dt = 900.0", "  kd = 0.8\n  dt = 900.0") == [
        ("kd = #", "kd = 0.8", ["0.5"], ["0.8"])]
    # not a test's number, not a line whose words changed too, not a line of numbers only
    assert edited_numbers("tests/test_rota.py", "CAP = 3", "CAP = 2") == []
    assert edited_numbers("src/a.py", "retries = 3", "attempts = 4") == []
    assert edited_numbers("data/t.csv", "1,2,3", "1,2,4") == []
    assert [says_number(t, n) for t, n in (("reminders 48 hours ahead", "48"), ("two a week", "2"),
                                           ("measured at 0.80", "0.8"), ("30 days is too long", "30"),
                                           ("use v2 of the API", "2"), ("one of them", "1"))] == [
        True, True, True, True, False, False]


def test_a_number_a_statement_set_is_superseded_by_a_later_edit_of_its_line(conn: sqlite3.Connection) -> None:
    # A session states a value and sets it in a file; a later session changes only the file's
    # line ("meet them halfway"): the statement is history and the line as it is now is current.
    def edit(n: int, path: str, old: str, new: str) -> Item:
        return _tool(n, "Edit", {"file_path": f"{P}/{path}", "old_string": old, "new_string": new})

    def stored(items: list[Item], at: int) -> None:
        drafts, rules = extract_rules(P, items)
        drafts += number_drafts(conn, P, rules.numbers)
        add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                                stated=d.stated, confirmed=d.confirmed, observed_at=at, replaces=d.replaces,
                                ends=d.ends, source_ids=d.source_ids) for d in drafts])

    prompt = "a day's notice is too short for the Saturday lot, they want reminders 48 hours ahead"
    said = f"Decision: {prompt}"
    stored([Item(id="p1", kind="prompt", title="x", narrative=prompt),
            edit(2, "src/reminders.clj", "(def lead (Duration/ofHours 24))", "(def lead (Duration/ofHours 48))"),
            edit(3, "src/rota.clj", "(def max-shifts-per-week 3)", "(def max-shifts-per-week 4)")], T)
    (row,) = conn.execute("SELECT subject, value FROM fact WHERE text = ?", (said,)).fetchall()
    assert tuple(row) == ("set:(def lead (Duration/ofHours #))", "48")
    # another line's edit, and a number no statement was about, leave it as it is
    stored([edit(4, "src/rota.clj", "(def max-shifts-per-week 4)", "(def max-shifts-per-week 2)")], T + 10)
    assert said in active(conn)
    assert not any("max-shifts" in t for t in active(conn))
    stored([edit(5, "src/reminders.clj", "(def lead (Duration/ofHours 48))", "(def lead (Duration/ofHours 36))")],
           T + 20)
    now = active(conn)
    assert said not in now
    assert "`(def lead (Duration/ofHours 36))` (`src/reminders.clj`)." in now
    (by,) = conn.execute("SELECT superseded_by FROM fact WHERE text = ?", (said,)).fetchone()
    assert conn.execute("SELECT value FROM fact WHERE id = ?", (by,)).fetchone()[0] == "36"


def test_user_statements_are_stated_and_assistant_remarks_are_not() -> None:
    prompt = Item(id="p", kind="prompt", title="x", narrative=(
        "Add the login page. Never use default exports, named exports only. Python 3.12. "
        "Switch the JWTs from HS256 to RS256."))
    found = {s.text: s for s in sentence_facts(prompt, True)}
    assert "Add the login page." not in " ".join(found)  # a task, not knowledge
    assert found["Convention: Never use default exports, named exports only."].stated
    assert found["Decision: Python 3.12."].subject == "runtime:python"
    switch = found["Decision: Switch the JWTs to RS256."]
    assert switch.replaces == ["HS256"] and switch.stated
    answer = Item(id="a", kind="response", title="x", narrative="I'd use TanStack Query here.")
    (rec,) = sentence_facts(answer, False)
    assert not rec.stated and rec.recommends


def test_an_answer_the_user_approves_becomes_stated() -> None:
    items = [
        Item(id="p1", kind="prompt", title="SWR or TanStack Query?", narrative="SWR or TanStack Query?",
             created_at=1),
        Item(id="a1", kind="response", title="x", narrative="I'd use TanStack Query for the mutations.",
             created_at=2),
        Item(id="p2", kind="prompt", title="Agreed", narrative="Agreed, TanStack Query it is. Go.",
             created_at=3),
    ]
    drafts, _ = extract_rules(P, items)
    rec = next(d for d in drafts if "TanStack Query for the mutations" in d.text)
    assert rec.stated and "p2" in rec.source_ids and rec.at == 3


def _tool(i: int, tool: str, tool_input: dict[str, object], output: str = "") -> Item:
    return Item(id=f"t{i}", kind="tool_event", title=f"{tool} x", subtitle=tool, created_at=i,
                narrative=f"input: {json.dumps(tool_input)}\n\noutput:\n{output}")


def test_a_makefile_edit_updates_the_target_it_changes() -> None:
    makefile = "dev:\n\tuv run uvicorn app:app --port 8000\n\ntest:\n\tuv run pytest -q\n"
    items = [
        _tool(1, "Write", {"file_path": f"{P}/Makefile", "content": makefile}),
        _tool(2, "Edit", {"file_path": f"{P}/Makefile", "old_string": "--port 8000",
                          "new_string": "--port 8010"}),
        _tool(3, "Bash", {"command": "uv add httpx"}, "Resolved 3 packages"),
    ]
    drafts, _ = extract_rules(P, items)
    dev = [(d.value, d.at) for d in drafts if d.subject == "make:dev"]
    assert dev == [("uv run uvicorn app:app --port 8000", 1), ("uv run uvicorn app:app --port 8010", 2)]
    assert any(d.subject == "dep:httpx" for d in drafts)
    assert any(d.subject == "tool:package-manager" and d.value == "uv" for d in drafts)


def test_manifests_of_other_ecosystems() -> None:
    from aletheia.extract.knowledge import file_findings

    cargo = file_findings("Cargo.toml", '[package]\nname = "x"\nrust-version = "1.79"\n'
                          '[dependencies]\nclap = { version = "4", features = ["derive"] }\n'
                          '[dev-dependencies]\nassert_cmd = "2"\n')
    assert [(f.subject, f.value) for f in cargo] == [
        ("dep:clap", "runtime"), ("dep:assert_cmd", "dev"), ("runtime:rust", "Rust 1.79")]
    gomod = file_findings("go.mod", "module x\n\ngo 1.22\n\nrequire (\n\tgithub.com/spf13/cobra v1.8.0\n)\n")
    assert [(f.subject, f.value) for f in gomod] == [
        ("dep:github.com/spf13/cobra", "runtime"), ("runtime:go", "Go 1.22")]
    assert install_command("cargo add clap --features derive") == ("cargo", "add", [("clap", False)])


def test_a_restated_fact_is_redacted_like_every_fact(conn: sqlite3.Connection) -> None:
    """A fact restated in its current form (a successor's value, a renamed file's path put into
    its text and subject) is a new fact row: redacted and capped like the others, and a value
    holding a backslash is put in as text."""
    import random
    import string

    rng = random.Random(12)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    add_facts(conn, [FactIn(project=P, text="Role of `src/app.py`: the entry point.", kind="file_role",
                            subject="file:src/app.py", observed_at=T, confirmed=1,
                            session_id="s1", source_ids=["m1"])])
    row = conn.execute("SELECT rowid, * FROM fact").fetchone()
    with conn:
        new_id = facts._restate(conn, row, f"Role of `src/{token}.py`: the entry point.", T + 5,
                                subject=f"file:src/{token}.py")
    stored = conn.execute("SELECT text, subject FROM fact WHERE id = ?", (new_id,)).fetchone()
    assert token not in stored["text"] and token not in stored["subject"]
    assert "[redacted" in stored["text"]
    assert facts._restated("Runs on Ruby 3.2 with Postgres, Tailwind, Sidekiq, Redis and Puma.",
                           ["3.2"], {"3.2": "C:\\Ruby33"}) == (
        "Runs on Ruby C:\\Ruby33 with Postgres, Tailwind, Sidekiq, Redis and Puma.")


def test_a_stack_list_naming_an_old_runtime_in_passing_is_restated(conn: sqlite3.Connection) -> None:
    first = Item(id="p1", kind="prompt", title="x", created_at=T, narrative=(
        "New app: quillstack. Rails 7.1 on Ruby 3.2, Postgres, Tailwind through tailwindcss-rails."))
    later = Item(id="p2", kind="prompt", title="x", created_at=T + 10,
                 narrative="Ruby 3.3 please — .ruby-version, the Gemfile and the Dockerfile.")
    for at, item in ((T, first), (T + 10, later)):
        drafts, _ = extract_rules(P, [item])
        add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                                stated=d.stated, observed_at=at, replaces=d.replaces, session_id=item.id,
                                source_ids=d.source_ids) for d in drafts])
    now = active(conn)
    assert "Decision: Rails 7.1 on Ruby 3.3, Postgres, Tailwind through tailwindcss-rails." in now
    assert not any("Ruby 3.2" in t for t in now)
    # A sentence about the old value itself is retired, not restated.
    assert facts._restated("Decision: Use npm for now.", ["npm"], {"npm": "bun"}) is None


def test_a_stack_said_as_names_and_their_roles() -> None:
    prompt = Item(id="p", kind="prompt", title="x", narrative=(
        "Start ferrydock: a small HTTP API. Go 1.22, chi for routing, pgx for Postgres, goose for "
        "migrations. Also: tests for the parser, docs for users, types for everything."))
    found = [s.text for s in sentence_facts(prompt, True)]
    assert "Decision: Go 1.22, chi for routing, pgx for Postgres, goose for migrations." in found
    assert not any("docs for users" in t for t in found)  # roles with no name written as one


# --- the forms a change takes, and what is no change -------------------------------------------


def test_the_forms_a_session_says_a_change_in() -> None:
    said = {
        "We moved from Celery to Dramatiq last week.": ["Celery"],
        "Use Dramatiq now, not Celery.": ["Celery"],
        "Use pnpm, not npm.": ["npm"],
        "Rip out Celery and put the jobs on Dramatiq.": ["Celery"],
        "We ripped out Redux in favour of Zustand.": ["Redux"],
        "We're dropping Heroku for Fly.io.": ["Heroku"],
        "We abandoned Kafka and went with NATS.": ["Kafka"],
        "Scrap the Flask prototype, we're doing it in FastAPI.": ["Flask"],
        # only the answer says it, after the work
        "Removed Redis from the compose file; the cache lives in Postgres now.": ["Redis"],
        "Celery has been removed; Dramatiq runs the jobs.": ["Celery"],
        # a value changes: a port, a measure, a named thing's version
        "Change the API port from 8080 to 9000.": ["8080"],
        "The API now listens on 9000 (was 8080).": ["8080"],
        "Set the request timeout to 5 s instead of 30 s.": ["30 s"],
        "Refresh every 15 s (was 30 s).": ["30 s"],
        "Bump Django from 4.2 to 5.0.": ["Django 4.2"],
        "Upgrade Postgres 15 → 16 in docker-compose and CI.": ["Postgres 15"],
        "Upgrade clap from 3 to 4.": ["clap 3"],
    }
    for sentence, olds in said.items():
        assert change_olds(sentence) == olds, sentence
    assert current_form("Use Dramatiq now, not Celery.") == "Use Dramatiq."
    assert current_form("We ripped out Redux in favour of Zustand.") == "We use Zustand."
    assert current_form("Set the request timeout to 5 s instead of 30 s.") == "Set the request timeout to 5 s."
    # A runtime's version is its slot's; a number that names nothing is no version.
    for sentence in ("Bump Node 20 → 22 everywhere.", "Move from Python 3.11 to 3.12.",
                     "It took 2 to 3 minutes.", "Bump it to 5 and go."):
        assert change_olds(sentence) == [], sentence


def test_what_does_not_replace_the_old_choice() -> None:
    # asked, proposed, planned, conditional, negated, or limited to one part of the project
    for sentence in (
        "Should we move from Celery to Dramatiq?",
        "Don't switch from Poetry to uv yet.",
        "We are not moving from Postgres to MySQL.",
        "If we ever replace Celery with Dramatiq, the retries change.",
        "We could drop Redis later.",
        "I'd replace Jest with Vitest.",
        "We plan to migrate from Heroku to Fly.io next quarter.",
        "Keep Celery; don't replace it with Dramatiq.",
        "Jest is replaced by Vitest in the e2e tests only.",
        "Replace Jest with Vitest only in the web package.",
        "Never switch from Postgres to MySQL.",
    ):
        assert change_olds(sentence) == [], sentence
        assert reported_olds(sentence) == [], sentence
    # A negation in another clause is not the change's: the change still stands.
    assert change_olds("Jest is not fast enough; replace Jest with Vitest.") == ["Jest"]


def _stored(conn: sqlite3.Connection, items: list[Item], at: int) -> None:
    drafts, _ = extract_rules(P, items)
    add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                            stated=d.stated, observed_at=at, replaces=d.replaces, ends=d.ends,
                            source_ids=d.source_ids) for d in drafts])


def test_a_rejected_proposal_or_a_change_in_one_part_keeps_the_old_choice(
    conn: sqlite3.Connection,
) -> None:
    _stored(conn, [Item(id="p1", kind="prompt", title="x",
                        narrative="Unit tests run with Jest and React Testing Library.")], T)
    _stored(conn, [
        Item(id="a2", kind="response", title="x",
             narrative="I'd replace Jest with Vitest: it starts faster and speaks ESM."),
        Item(id="p3", kind="prompt", title="x", narrative="No, we stay on Jest for now."),
    ], T + 10)
    _stored(conn, [Item(id="p4", kind="prompt", title="x",
                        narrative="Jest is replaced by Playwright in the e2e folder only.")], T + 20)
    assert any("Jest" in t for t in active(conn))
    assert not conn.execute("SELECT count(*) FROM fact WHERE subject LIKE 'replaced:%'").fetchone()[0]


def test_a_version_bump_says_the_stack_again_with_the_new_version(conn: sqlite3.Connection) -> None:
    _stored(conn, [Item(id="p1", kind="prompt", title="x", narrative=(
        "New project: Django 4.2, DRF, Postgres, Celery for the background jobs."))], T)
    _stored(conn, [Item(id="p2", kind="prompt", title="x", narrative=(
        "Bump Django from 4.2 to 5.0 everywhere: requirements, CI and the Dockerfile."))], T + 10)
    now = " ".join(active(conn))
    assert "Django 5.0" in now and "Django 4.2" not in now
    assert any("DRF, Postgres, Celery" in t and "Django 5.0" in t for t in active(conn))
    record = conn.execute("SELECT text FROM fact WHERE subject = 'replaced:django 4.2'").fetchone()
    assert record[0] == "`Django 4.2` was replaced by `Django 5.0`."


def test_a_measure_replaced_retires_prose_in_any_spelling_of_its_unit(conn: sqlite3.Connection) -> None:
    add_facts(conn, [FactIn(project=P, text="Note: the FX client gives up after 30 seconds.", kind="fact",
                            observed_at=T, source_ids=["m1"]),
                     FactIn(project=P, text="Note: the invoice list shows 30 rows per page.", kind="fact",
                            observed_at=T, source_ids=["m2"])])
    _stored(conn, [Item(id="p2", kind="prompt", title="x", narrative=(
        "The FX service hangs during incidents. Set the FX timeout to 5 s instead of 30 s."))], T + 10)
    assert not any("30 seconds" in t for t in active(conn))
    # the number alone is another value: it stays
    assert "Note: the invoice list shows 30 rows per page." in active(conn)


def test_a_recommendation_the_user_turns_down_is_no_decision(conn: sqlite3.Connection) -> None:
    answer = Item(id="a1", kind="response", title="x",
                  narrative="I'd replace Jest with Vitest: it is faster with ESM. Want me to do it?")
    no = Item(id="p2", kind="prompt", title="x", narrative="No, keep Jest for now.")
    drafts, _ = extract_rules(P, [answer, no])
    assert not any("Vitest" in d.text for d in drafts)
    from aletheia.changes import REJECTION

    for said in ("Nope.", "Keep Jest for now.", "Let's stay on Celery.", "Not yet — first the migration.",
                 "Stick with Poetry."):
        assert REJECTION.search(said), said
    for said in ("No worries, go ahead.", "Don't forget the tests.", "Keep the tests green.", "Nothing to add."):
        assert not REJECTION.search(said), said
    # approved, it stays (and is the user's choice)
    drafts, _ = extract_rules(P, [answer, Item(id="p3", kind="prompt", title="x", narrative="Yes, do it.")])
    assert any("Vitest" in d.text and d.stated for d in drafts)


def test_a_value_set_in_other_words_replaces_the_old_one(conn: sqlite3.Connection) -> None:
    # "refresh … every 30 seconds" and "make the metrics poll every 10 seconds" fill one slot;
    # "the API on port 4000" and "serve the app on 4100" too.
    _stored(conn, [Item(id="p1", kind="prompt", title="x", narrative=(
        "The dashboard should refresh the service metrics every 30 seconds. "
        "The API listens on port 4000."))], T)
    _stored(conn, [Item(id="p2", kind="prompt", title="x", narrative=(
        "Make the metrics poll every 10 seconds. Serve the app on 4100 instead."))], T + 10)
    now = " ".join(active(conn))
    assert "10 seconds" in now and "4100" in now
    assert "30 seconds" not in now and "4000" not in now
    assert {r[0] for r in conn.execute("SELECT subject FROM fact WHERE subject IS NOT NULL")} >= {
        "setting:every-poll", "port:app"}


def test_a_slot_changed_with_a_reason_naming_the_old_value() -> None:
    prompt = Item(id="p", kind="prompt", title="x", narrative=(
        "On-call says 30 seconds is too slow during incidents. Make the metrics refresh every 10 seconds."))
    (s,) = sentence_facts(prompt, True)
    assert (s.kind, s.value, s.replaces) == ("decision", "10 s", ["30 seconds"])
    assert s.text == "Decision: Make the metrics refresh every 10 seconds — why: On-call says … is too slow during incidents."
    assert statement_slot("Run the import on 2000 rows.") is None


def test_an_identifier_named_id_is_no_proposal() -> None:
    answer = ("`GET /invoices` now uses keyset pagination, ordered by `(created_at, id)` descending; "
              "`offset` and `total` are gone.")
    assert reported_olds(answer) == ["offset", "total"]
    assert reported_olds("I'd drop `offset` and `total`.") == []


def test_a_value_only_a_diff_changes_is_replaced(conn: sqlite3.Connection) -> None:
    from aletheia.changes import edited_values

    assert edited_values("src/settings.py", '    jwt_algorithm: str = "HS256"\n    jwt_secret: str = "x"',
                         '    jwt_algorithm: str = "RS256"\n    jwt_key_id: str = "k1"') == [
        ("jwt_algorithm", "HS256", "RS256")]
    assert edited_values("docker-compose.yml", "    image: postgres:15", "    image: postgres:16") == [
        ("image", "postgres:15", "postgres:16")]
    assert edited_values(".env.example", "PORT=8080\nLOG_LEVEL=debug", "PORT=9000\nLOG_LEVEL=info") == [
        ("PORT", "8080", "9000")]
    # a runtime's version under a key that names it (CI, a Dockerfile's ARG)
    assert edited_values(".github/workflows/ci.yml", '  python-version: "3.11"', '  python-version: "3.12"') == [
        ("python-version", "Python 3.11", "Python 3.12")]
    assert edited_values("Dockerfile", "ARG NODE_VERSION=20", "ARG NODE_VERSION=22") == [
        ("NODE_VERSION", "Node 20", "Node 22")]
    assert edited_values("docker-compose.yml", "version: 2", "version: 3") == []
    # a typed declaration of the C family: the type before the name is no part of it
    assert edited_values("src/core/Spectrum.hpp", "    std::size_t windowSize = 4096;\n    double overlap = 0.5;",
                         "    std::size_t windowSize = 8192;\n    double overlap = 0.75;") == [
        ("windowSize", "4096", "8192")]
    assert edited_values("src/main/java/App.java", '    private static final String ALG = "HS256";',
                         '    private static final String ALG = "RS256";') == [("ALG", "HS256", "RS256")]
    assert edited_values("src/app.c", "    if (port == 8080) {", "    if (port == 9090) {") == []
    # not a choice of the project: a test's value, a lockfile, code, a small number, a plain word
    assert edited_values("tests/test_auth.py", 'ALG = "HS256"', 'ALG = "RS256"') == []
    assert edited_values("uv.lock", 'version = "4.2.0"', 'version = "5.0.1"') == []
    assert edited_values("src/app.py", "x = compute(a)", "x = compute(b)") == []
    assert edited_values("src/fx.py", "TIMEOUT = 10.0", "TIMEOUT = 3.0") == []
    assert edited_values("package.json", '"test": "jest",', '"test": "vitest run",') == []
    # a test folder's build file is how the project's tests run (make's `?=`), and a value in
    # lower case is a name when the session's talk writes it as one mid-sentence
    said = "Most of that is Icarus interpreting the tests; Verilator is faster. Switch?"
    assert edited_values("tests/Makefile", "SIM ?= icarus\nTOPLEVEL_LANG = verilog",
                         "SIM ?= verilator\nTOPLEVEL_LANG = verilog", said) == [("SIM", "icarus", "verilator")]
    assert edited_values("tests/Makefile", "SIM ?= icarus", "SIM ?= verilator") == []
    assert edited_values(".env", "LOG_LEVEL=debug", "LOG_LEVEL=info", "Debug output is noisy. Info is enough.") == []
    assert edited_values("tests/fixtures/Makefile", "SIM ?= icarus", "SIM ?= verilator", said) == []
    # through the extractor: the edit records HS256 as replaced, which retires what names it
    add_facts(conn, [FactIn(project=P, text="Decision: sign the access tokens with HS256.", kind="decision",
                            stated=True, observed_at=T, source_ids=["m1"])])
    edit = _tool(5, "Edit", {"file_path": f"{P}/src/app/settings.py",
                             "old_string": '    jwt_algorithm: str = "HS256"',
                             "new_string": '    jwt_algorithm: str = "RS256"'})
    _stored(conn, [edit], T + 10)
    assert not any("HS256" in t for t in active(conn))
    (record,) = [r[0] for r in conn.execute("SELECT text FROM fact WHERE subject = 'replaced:hs256'")]
    assert record == "`HS256` was replaced by `RS256` (`jwt_algorithm` in `src/app/settings.py`)."


def test_a_tool_chosen_again_is_current_again(conn: sqlite3.Connection) -> None:
    # A → B → A: Jest → Vitest → Jest.  The second change retires Vitest and makes Jest current
    # again: the block's list of outdated values leaves Jest out, and prose written after says it.
    from aletheia.context import outdated

    _stored(conn, [Item(id="p1", kind="prompt", title="x", narrative="Unit tests run on Jest with jsdom.")], T)
    _stored(conn, [Item(id="p2", kind="prompt", title="x", narrative="Replace Jest with Vitest.")], T + 10)
    assert [t for t, _ in outdated(conn, P)] == ["Jest"]
    _stored(conn, [Item(id="p3", kind="prompt", title="x", narrative=(
        "Vitest breaks our module mocks. Switch back from Vitest to Jest."))], T + 20)
    assert [t for t, _ in outdated(conn, P)] == ["Vitest"]
    add_facts(conn, [FactIn(project=P, kind="fact", text="Note: the Jest config lives in jest.config.ts.",
                            observed_at=T + 30, source_ids=["m4"])])
    now = active(conn)
    assert "Note: the Jest config lives in jest.config.ts." in now
    assert not any("Vitest" in t for t in now)


def test_a_port_moved_away_from_the_one_named_beside_it() -> None:
    from aletheia.changes import moved_port

    assert reported_olds("The gateway already listens on 8080 in the shared compose, so ferrydock can't "
                         "sit there. Move ferrydock to port 8090.") == ["8080"]
    assert reported_olds("ferrydock now listens on :8090 (the gateway has 8080).") == ["8080"]
    # more than one other port, none, or only asked: no old port
    assert moved_port("Move the API to port 8010; the DB stays on 5432 and Redis on 6379.") == []
    assert moved_port("The API listens on 8000.") == []
    assert reported_olds("Should we move ferrydock to port 8090 since the gateway has 8080?") == []


def test_a_runtime_bumped_only_in_ci_says_the_stack_again(conn: sqlite3.Connection) -> None:
    add_facts(conn, [FactIn(project=P, text="Decision: Next.js 14 on Node 20, Tailwind, TanStack Query.",
                            kind="decision", stated=True, observed_at=T, source_ids=["m1"])])
    edit = _tool(5, "Edit", {"file_path": f"{P}/.github/workflows/ci.yml",
                             "old_string": "          node-version: 20", "new_string": "          node-version: 22"})
    _stored(conn, [edit], T + 10)
    assert "Decision: Next.js 14 on Node 22, Tailwind, TanStack Query." in active(conn)


def test_a_package_in_lower_case_reported_gone_beside_its_successor() -> None:
    assert reported_olds("Passwords are hashed with `pwdlib` (Argon2id); passlib and bcrypt are gone.") == [
        "passlib", "bcrypt"]
    # a plural, a word with no named successor beside it: no package
    assert reported_olds("The mocks are gone; tests use `vi.fn`.") == []
    assert reported_olds("Removed the retry loop.") == []


def test_a_name_the_sentence_says_left_the_dependencies_is_a_package() -> None:
    # a plural-looking name in lower case, with nothing named beside it: the sentence says it was
    # a dependency
    assert reported_olds("The OOM was the frames on flood days. pandas is gone from the dependencies.") == ["pandas"]
    assert reported_olds("requests is removed from pyproject.toml; httpx does it now.") == ["requests"]
    # gone from anything else, or not said as done: no package
    assert reported_olds("The mocks are gone from the test helpers.") == []
    assert reported_olds("pandas is not gone from the dependencies yet.") == []


def test_a_thing_named_before_a_word_for_its_code_is_gone() -> None:
    said = ("Done: the two settings are in a Preferences DataStore file now, exposed as a Flow, and the "
            "SharedPreferences version is gone.")
    assert reported_olds(said) == ["SharedPreferences"]
    assert reported_olds("The Webpack setup has been removed; Vite builds it now.") == ["Webpack"]
    # a question, a negation, a proposal, a thing not named, the tests only: nothing replaced
    assert reported_olds("is the SharedPreferences version gone?") == []
    assert reported_olds("The SharedPreferences version is not gone yet.") == []
    assert reported_olds("We could say the Glide setup is gone once Coil lands, if you want.") == []
    assert reported_olds("The old version is gone.") == []
    assert reported_olds("In the tests only, the Jest setup is gone.") == []


def test_a_version_an_edit_bumps_is_the_current_one_in_the_stack_and_the_facts(
    conn: sqlite3.Connection,
) -> None:
    # Version bumps made only by editing a manifest: each is the current version of its slot, a
    # later bump supersedes it, and the stack line and `aletheia facts` show the current only.
    from aletheia.cli import cli
    from aletheia.context import build_block
    from aletheia.extract.knowledge import edited_versions

    def values(path: str, old: str, new: str) -> list[tuple[str | None, str | None]]:
        return [(f.subject, f.value) for f in edited_versions(path, old, new)]

    assert values("gradle/libs.versions.toml", 'agp = "8.5.0"\nkotlin = "2.0.0"\ncoreKtx = "1.13.1"',
                  'agp = "8.7.2"\nkotlin = "2.0.21"\ncoreKtx = "1.13.1"') == [
        ("version:agp", "agp 8.7.2"), ("version:kotlin", "kotlin 2.0.21")]
    assert values("gradle/wrapper/gradle-wrapper.properties",
                  "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.7-bin.zip",
                  "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.10.2-bin.zip") == [
        ("version:gradle", "gradle 8.10.2")]
    assert values("CMakeLists.txt", "project(sonoview VERSION 0.1.0 LANGUAGES CXX)\nfind_package(Qt6 6.5 REQUIRED)",
                  "project(sonoview VERSION 0.4.0 LANGUAGES CXX)\nfind_package(Qt6 6.7 REQUIRED)") == [
        ("version:project", "version 0.4.0"), ("version:qt6", "Qt6 6.7")]
    assert values("requirements.txt", "ansible-core==2.16.6\n", "ansible-core==2.17.5\n") == [
        ("version:ansible-core", "ansible-core 2.17.5")]
    assert values("apps/web/package.json", '  "version": "1.2.0",\n  "vite": "^5.4.8",',
                  '  "version": "1.3.0",\n  "vite": "^6.0.1",') == [
        ("version:project@apps/web", "version 1.3.0"), ("version:vite", "vite 6.0.1")]
    # a runtime keeps its own slot; a line the edit only adds, or a version kept, is no bump
    assert values("go.mod", "go 1.22", "go 1.23") == [("runtime:go", "Go 1.23")]
    assert values(".tool-versions", "nodejs 20.11.0", "nodejs 22.11.0") == [("runtime:node", "Node 22")]
    assert values("Cargo.toml", 'serde = "1.0.210"', 'serde = "1.0.210"\ntokio = "1.40"') == []
    assert values("src/config.py", 'VERSION = "1.0.0"', 'VERSION = "2.0.0"') == []

    def bump(i: int, old: str, new: str) -> Item:
        return _tool(i, "Edit", {"file_path": f"{P}/gradle/libs.versions.toml", "old_string": old,
                                 "new_string": new})

    for at, item in ((T, bump(1, 'kotlin = "1.9.24"', 'kotlin = "2.0.0"')),
                     (T + 10, bump(2, 'kotlin = "2.0.0"', 'kotlin = "2.0.21"'))):
        drafts, _ = extract_rules(P, [item])
        add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                                confirmed=d.confirmed, observed_at=at, source_ids=d.source_ids)
                         for d in drafts])
    listed = CliRunner().invoke(cli, ["facts", "-p", P], catch_exceptions=False).output
    block = build_block(conn, P)
    assert "kotlin 2.0.21" in block and "2.0.21" in listed
    for shown in (listed, block):
        assert "2.0.0" not in shown.replace("2.0.21", "") and "1.9.24" not in shown


def test_a_prompt_gets_the_versions_only_when_it_asks_for_one(conn: sqlite3.Connection) -> None:
    from aletheia.recall import _query_words, _stack_line

    add_facts(conn, [slot("Dependency: `compose`.", "runtime", T, subject="dep:compose"),
                     slot("`kotlin` is at 2.0.21 (`gradle/libs.versions.toml`).", "kotlin 2.0.21", T,
                          subject="version:kotlin")])
    assert "kotlin 2.0.21" in _stack_line(conn, P, _query_words("What Kotlin version is the build on?"))[0]
    assert "kotlin 2.0.21" in _stack_line(conn, P, _query_words("Which kotlin do we build with?"))[0]
    assert "2.0.21" not in _stack_line(conn, P, _query_words("What UI toolkit are the screens written in?"))[0]


def test_a_version_a_command_sets_or_reports_is_the_current_one() -> None:
    from aletheia.extract.knowledge import command_versions

    def values(command: str, output: str) -> list[tuple[str | None, str | None]]:
        return [(f.subject, f.value) for f in command_versions(command, output)]

    # a tool's own version command and the line of its output that names it
    assert values("./gradlew --version", "\n----\nGradle 8.7\n----") == [("version:gradle", "gradle 8.7")]
    assert values("ansible --version | head -3 && packer version && python3 --version",
                  "ansible [core 2.16.6]\n  config file = None\nPacker v1.11.2\nPython 3.12.3") == [
        ("version:ansible", "ansible 2.16.6"), ("version:packer", "packer 1.11.2")]
    # the version a wrapper command sets; what pipx says it upgraded
    assert values("./gradlew wrapper --gradle-version 8.10.2", "BUILD SUCCESSFUL in 9s") == [
        ("version:gradle", "gradle 8.10.2")]
    assert values("pipx upgrade ansible-core", "upgraded package ansible-core from 2.16.6 to 2.17.5 (location: x)") == [
        ("version:ansible-core", "ansible-core 2.17.5")]
    # vcpkg's plan: what it installs is current, what it removes and does not put back is gone
    plan = ("The following packages will be removed:\n    fftw3:x64-linux@3.3.10\n    catch2:x64-linux@3.5.2\n"
            "The following packages will be built and installed:\n    catch2:x64-linux@3.7.1\n"
            "    qtbase[core,gui,widgets]:x64-linux@6.7.2#2\nTotal install time: 37 min")
    found = command_versions("cmake --preset dev", plan)
    assert [(f.subject, f.value, f.ends) for f in found] == [
        ("version:catch2", "catch2 3.7.1", False), ("version:qtbase", "qtbase 6.7.2", False),
        ("version:fftw3", "(removed)", True)]
    # a verbose test run is no version command; a runtime's version is ``version_findings``'
    assert values("pytest -v tests/", "pytest 8.3.2") == []
    assert values("node -v", "v22.11.0") == []
    # bare versions, printed in the order asked, belong to the version commands no line names
    assert values("go version && buf --version && sqlc version",
                  "go version go1.22.5 linux/amd64\n1.34.0\nv1.25.0") == [
        ("version:buf", "buf 1.34.0"), ("version:sqlc", "sqlc v1.25.0")]
    assert values("buf --version && sqlc version", "1.34.0") == []  # one line for two: whose?
    # the product's own name after its vendor, behind another part's version on the same line
    assert values("swift --version", "swift-driver version: 1.115 Apple Swift version 6.0.2 (swiftlang-6.0.2.1.2)") == [
        ("version:swift", "swift 6.0.2")]


def test_the_language_of_the_sources_sessions_edit_reaches_the_stack_line(conn: sqlite3.Connection) -> None:
    from aletheia.context import build_block
    from aletheia.extract.knowledge import source_language
    from aletheia.recall import _query_words, _stack_line

    assert [(f.subject, f.value) for f in map(source_language, ("src/main/kotlin/Offers.kt", "app/Main.hs"))
            if f] == [("lang:kotlin", "Kotlin"), ("lang:haskell", "Haskell")]
    # not a build script, a header of no one language, a vendored file, a config file
    assert [source_language(p) for p in ("build.gradle.kts", "include/x.h", "node_modules/a/i.js",
                                         "config.yml")] == [None] * 4

    def session(sid: str, at: int, *paths: str) -> None:
        items = [_tool(i, "Write", {"file_path": f"{P}/{p}", "content": "x = 1\n"})
                 for i, p in enumerate(paths, 1)]
        drafts, _ = extract_rules(P, items)
        add_facts(conn, [FactIn(project=P, text=d.text, kind=d.kind, subject=d.subject, value=d.value,
                                confirmed=d.confirmed, observed_at=at, session_id=sid,
                                source_ids=d.source_ids) for d in drafts])

    session("s1", T, "src/main/kotlin/Offers.kt", "scripts/seed.py")
    assert "Kotlin" not in build_block(conn, P)  # one session is no evidence yet
    session("s2", T + 10, "src/main/kotlin/Queue.kt", "src/test/kotlin/QueueTest.kt")
    block = build_block(conn, P)
    assert "Stack: language Kotlin" in block and "Python" not in block
    line, _ = _stack_line(conn, P, _query_words("What language is the waiting-list service written in?"))
    assert line.startswith("Stack: language Kotlin")


def test_a_julia_project_and_julia_s_pkg_name_the_dependencies() -> None:
    from aletheia.extract.knowledge import file_findings, install_findings

    project = '[deps]\nJuMP = "4076af6c-e467-56ae-b986-b466b2749572"\nHiGHS = "87dc4568-4c63-4d18-b0c0-bb2238e4078b"\n' \
              '[extras]\nTest = "8dfed614-e22c-5e08-85e1-65c5234f0b40"\n'
    assert [(f.subject, f.value) for f in file_findings("Project.toml", project)] == [
        ("dep:jump", "runtime"), ("dep:highs", "runtime"), ("dep:test", "dev")]
    added = install_findings("""julia --project=. -e 'using Pkg; Pkg.add(["JuMP", "GLPK"])'""")
    swapped = install_findings("""julia --project=. -e 'using Pkg; Pkg.add("HiGHS"); Pkg.rm("GLPK")'""")
    assert [(f.subject, f.value) for f in added + swapped] == [
        ("dep:jump", "runtime"), ("dep:glpk", "runtime"), ("dep:highs", "runtime"), ("dep:glpk", "(removed)")]
    assert file_findings("Project.toml", "[deps\n") == []


def test_r_s_package_calls_and_an_r_package_s_description_name_the_dependencies() -> None:
    from aletheia.extract.knowledge import file_findings, install_findings

    command = """Rscript -e 'renv::init(bare = TRUE); renv::install(c("targets", "sf")); renv::snapshot(prompt = FALSE)'"""
    more = """Rscript -e 'install.packages("glmmTMB"); pak::pkg_install("ropensci/ruODK@v1.4"); remove.packages("rgdal")'"""
    assert [(f.subject, f.value) for f in install_findings(command) + install_findings(more)] == [
        ("dep:targets", "runtime"), ("dep:sf", "runtime"), ("dep:glmmtmb", "runtime"), ("dep:ruodk", "runtime"),
        ("dep:rgdal", "(removed)")]
    assert install_findings("Rscript -e 'targets::tar_make()'") == []
    description = ("Package: moor\nVersion: 0.1\nDepends: R (>= 4.1)\nImports:\n    sf (>= 1.0),\n    ggplot2,\n"
                   "    targets\nSuggests: testthat (>= 3.0.0)\nLicense: MIT\n")
    assert [(f.subject, f.value) for f in file_findings("DESCRIPTION", description)] == [
        ("dep:sf", "runtime"), ("dep:ggplot2", "runtime"), ("dep:targets", "runtime"), ("dep:testthat", "dev")]

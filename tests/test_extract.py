"""The rule extractor on a realistic session, on its own parts, and on other hosts' shapes."""

from __future__ import annotations

import json
import sqlite3

import pytest

from aletheia import store
from aletheia.extract import (
    WINDOW_CHARS,
    WINDOW_ITEMS,
    Item,
    describe_file,
    error_signature,
    extract_rules,
    normalize_command,
    outcome,
    parse_tool,
    session_summary,
    windows,
)
from aletheia.tasks.compress import JobRunner, drain
from tests import sessions

ROOT = "/home/dev/textkit"


def sample_items(root: str = ROOT) -> list[Item]:
    out = []
    for i, (_, m) in enumerate(sessions.memories(root)):
        if m is None:
            continue
        out.append(Item(id=f"M{i:02d}", kind=m.kind, title=m.title, subtitle=m.subtitle,
                        narrative=m.narrative, files=tuple(m.files), concepts=tuple(m.concepts),
                        created_at=m.created_at or 0, tool="claude-code"))
    return out


def tool_item(title: str, tool: str, tool_input: object, output: str, *, failed: bool = False,
              files: tuple[str, ...] = (), n: int = 0) -> Item:
    narrative = f"input: {json.dumps(tool_input)}\n\noutput:\n{output}"
    return Item(id=f"T{n}", kind="tool_event", title=title + (" (failed)" if failed else ""),
                subtitle=tool, narrative=narrative, files=files,
                concepts=(tool, "error") if failed else (tool,))


def bash(cmd: str, output: str, *, failed: bool = False, n: int = 0) -> Item:
    return tool_item(f"Bash: $ {cmd}", "Bash", {"command": cmd}, output, failed=failed, n=n)


# --- windows ---------------------------------------------------------------------------------


def test_windows_hold_at_most_20_items_and_12000_chars() -> None:
    items = [Item(id=str(i), kind="note", title="t", narrative="x" * (50 + 37 * (i % 9)))
             for i in range(95)]
    items.insert(40, Item(id="big", kind="tool_event", title="Bash: $ make",
                          narrative="head " + "y" * 50_000 + " TAIL-ERROR"))
    cut = windows(items)
    assert [i.id for w in cut for i in w] == [i.id for i in items]  # nothing lost, order kept
    assert all(len(w) <= WINDOW_ITEMS for w in cut)
    assert all(sum(i.size for i in w) <= WINDOW_CHARS for w in cut)
    big = next(i for w in cut for i in w if i.id == "big")
    assert big.narrative.startswith("head ") and big.narrative.endswith("TAIL-ERROR")
    assert "characters cut" in big.narrative
    assert windows([]) == []


# --- the sample session ----------------------------------------------------------------------


def test_sample_session_facts_are_useful_to_a_coding_agent() -> None:
    drafts, _ = extract_rules(ROOT, sample_items())
    texts = {d.text: d for d in drafts}
    expected = {
        "command": [
            "Run the tests with `pytest -q`.",
            "Lint with `ruff check .`.",
            "Type-check with `mypy src`.",
            "Install the project for development with `pip install -e .`.",
            "Check formatting with `ruff format --check .`.",
        ],
        "error_fix": [
            "`mypy src` failed with `src/textkit/cli.py:5: Library stubs not installed for \"yaml\" "
            "[import-untyped]`. Fixed by running `pip install types-PyYAML`; then `mypy src` passed.",
            "`ruff check .` failed with `src/textkit/slugify.py:3:8: F401 [*] 'os' imported but "
            "unused`. Fixed by editing src/textkit/slugify.py (removed `import os`); then `ruff "
            "check .` passed.",
        ],
        "convention": [
            "Convention: Always use pytest.mark.parametrize for table-driven tests, and prefer the "
            "standard library over new dependencies.",
            "Ruff line length is 100 (`pyproject.toml` [tool.ruff]).",
            "The code uses a src layout (`src/textkit/`).",
        ],
        "file_role": [
            "`src/textkit/slugify.py` — Turn arbitrary titles into URL-safe slugs.",
            "`tests/test_slugify.py` holds the tests for `src/textkit/slugify.py`.",
        ],
        "fact": [
            "Note: `python -m textkit` only works after `pip install -e .` because the package "
            "uses a src layout.",
        ],
    }
    for kind, wanted in expected.items():
        for text in wanted:
            assert text in texts, text
            assert texts[text].kind == kind
    fix = next(t for t in texts if t.startswith("`pytest -q` failed with `AssertionError: assert 'hello---world'"))
    assert "tests/test_slugify.py::test_collapses_repeated_separators" in fix
    assert 'Fixed by editing src/textkit/slugify.py (`text = re.sub(r"[^a-z0-9]", "-", text)` → ' in fix
    assert any(t.startswith("Cause: The root cause was that the character class") for t in texts)
    assert any(t.startswith("Decision: ") and "python-slugify" in t for t in texts)
    # Looking around (ls, git status, the one-off python -c) never becomes a fact.
    assert not any("`ls`" in t or "git status" in t or "python -c" in t for t in texts)
    # No absolute paths of the project leak into facts.
    assert not any(ROOT in t for t in texts)
    # Every fact points at the memories it came from.
    ids = {i.id for i in sample_items()}
    assert all(d.source_ids and set(d.source_ids) <= ids for d in drafts)


def test_extraction_is_deterministic() -> None:
    a, _ = extract_rules(ROOT, sample_items())
    b, _ = extract_rules(ROOT, sample_items())
    assert [(d.kind, d.text, d.source_ids) for d in a] == [(d.kind, d.text, d.source_ids) for d in b]
    assert session_summary(ROOT, sample_items()) == session_summary(ROOT, sample_items())


def test_a_fix_in_a_later_job_finds_the_error_seen_in_an_earlier_one() -> None:
    items = sample_items()
    cut = next(i for i, item in enumerate(items) if item.title.startswith("Bash: $ mypy src (failed)"))
    first, _ = extract_rules(ROOT, items[: cut + 1])
    assert not any(d.text.startswith("`mypy src` failed") for d in first)
    second, _ = extract_rules(ROOT, items[cut + 1:], context=items[: cut + 1])
    fix = [d for d in second if d.text.startswith("`mypy src` failed")]
    assert len(fix) == 1 and items[cut].id in fix[0].source_ids
    # Primed context emits nothing itself.
    assert not any(d.text == "Run the tests with `pytest -q`." and "M12" in d.source_ids and
                   d.source_ids == ["M12"] for d in second)


def test_session_summary_says_request_work_errors_and_outcome() -> None:
    draft = session_summary(ROOT, sample_items())
    text = draft.narrative
    # The title says what was done and how it ended, not the opening prompt again.
    assert draft.title.startswith("Session summary: `slugify()` now folds accents")
    assert draft.title.endswith("; tests and lint and types passed")
    assert "CI is red" not in draft.title
    assert text.startswith("Outcome: Done. `slugify()` now folds accents")
    assert "\nRequest: CI is red on main: tests/test_slugify.py::test_collapses_repeated_separators fails." in text
    assert "Follow-ups: Thanks. Now make slugify handle accented titles" in text
    assert "Files changed: src/textkit/slugify.py, pyproject.toml, tests/test_slugify.py" in text
    assert "`pytest -q` ×3 (last: passed)" in text and "`mypy src` ×3 (last: passed)" in text
    assert text.count("\nFixed: ") == 5 and "Unresolved" not in text
    assert draft.files == ["src/textkit/slugify.py", "pyproject.toml", "tests/test_slugify.py"]
    assert "error" in draft.concepts and "test" in draft.concepts


def test_a_question_asked_after_the_work_does_not_become_what_the_session_did() -> None:
    def said(kind: str, text: str, n: int) -> Item:
        return Item(id=f"{kind[0]}{n}", kind=kind, title=text, narrative=text)

    work = [said("prompt", "move the reminder to the day before arrival", 1),
            bash("mix test test/workers", "6 tests, 0 failures", n=2),
            said("response", "Reminders now go out the day before arrival (`@lead_hours 24`).", 3)]
    asked = [said("prompt", "did the seeds survive that?", 4),
             said("response", "Yes, the seeds ran again after the migrations and all rows are back.", 5)]
    draft = session_summary(ROOT, work + asked)
    assert draft.title.startswith("Session summary: Reminders now go out the day before arrival")
    assert draft.narrative.startswith("Outcome: Yes, the seeds ran again")  # how it ended
    # a rule the user states after the work, and the answer taking it up, is what the session left
    rule = [said("prompt", "that's the rule from now on: no fmt.Println left in", 4),
            said("response", "Noted: no fmt.Println anywhere, the structured logger only.", 5)]
    assert session_summary(ROOT, work + rule).title.startswith("Session summary: Noted: no fmt.Println")
    # work after the question: its answer reports it
    checked = [*asked[:1], bash("mix run priv/repo/seeds.exs", "seeded 62 berths", n=6), asked[1]]
    assert session_summary(ROOT, work + checked).title.startswith("Session summary: Yes, the seeds ran")


def test_a_session_that_built_the_project_and_its_image_says_both() -> None:
    items = [bash("./gradlew build", "BUILD SUCCESSFUL in 38s", n=1),
             bash("docker build -t shop:dev .", "Successfully tagged shop:dev", n=2)]
    draft = session_summary(ROOT, items)
    assert draft.title.endswith("build and image passed")


def test_an_unfixed_error_is_reported_as_unresolved() -> None:
    items = [
        Item(id="p", kind="prompt", title="make the types pass", narrative="make the types pass"),
        bash("mypy src", "src/a.py:3: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]\nFound 1 error in 1 file", failed=True, n=1),
    ]
    draft = session_summary(ROOT, items)
    assert "Unresolved: `mypy src` fails with `src/a.py:3: Incompatible return value type" in draft.narrative
    assert "Outcome: last command `mypy src` failed" in draft.narrative
    drafts, _ = extract_rules(ROOT, items)
    assert not [d for d in drafts if d.kind == "error_fix"]


def test_through_the_store_the_fake_token_is_gone(conn: sqlite3.Connection) -> None:
    token = sessions.fake_token(11)
    sessions.write(conn, ROOT, "s1", token=token)
    drain(conn, JobRunner(use_provider=False))
    for (text,) in conn.execute("SELECT text FROM fact"):
        assert token not in text
    for (narrative,) in conn.execute("SELECT narrative FROM memory"):
        assert token not in narrative
    assert store  # the write path is the store's


# --- pieces ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("output", "signature", "tests"), [
    ("FAILED tests/test_a.py::test_x[a b-c] - AssertionError: assert 1 == 2\n1 failed, 3 passed in 0.1s",
     "AssertionError: assert 1 == 2", ["tests/test_a.py::test_x[a b-c]"]),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    import yaml\n"
     "ModuleNotFoundError: No module named 'yaml'", "ModuleNotFoundError: No module named 'yaml'", []),
    ("src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
     "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.", []),
    ("npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
     "npm ERR! code ERESOLVE", []),
    ("bash: line 1: pytset: command not found", "bash: line 1: pytset: command not found", []),
    ("error[E0308]: mismatched types\n --> src/main.rs:4:5", "error[E0308]: mismatched types", []),
    ("Exit code 2\nsomething odd happened", "something odd happened", []),
    # Elixir's form of an exception; never the host's own result fields
    ("...\n** (DBConnection.OwnershipError) cannot find ownership process for #PID<0.612.0>.\n34 tests, 1 failure",
     "DBConnection.OwnershipError: cannot find ownership process for #PID<0.612.0>.", []),
    ("gmake: *** [Makefile:146: all] Error 2\n{\"interrupted\": false, \"isImage\": false}",
     "gmake: *** [Makefile:146: all] Error 2", []),
])
def test_error_signatures(output: str, signature: str, tests: list[str]) -> None:
    assert error_signature(output) == (signature, tests)


@pytest.mark.parametrize(("output", "failed", "expected"), [
    ("12 passed in 0.08s", False, "pass"),
    ("=== 1 failed, 11 passed in 0.1s ===", False, "fail"),
    ("All checks passed!", False, "pass"),
    ("Success: no issues found in 3 source files", False, "pass"),
    ("src/x.py:1:1: F401 `os` imported but unused\nFound 1 error.", False, "fail"),
    ("creme-brulee", False, "ok"),
    ("creme-brulee", True, "fail"),
    ("tests/test_errors.py ....    [100%]\n4 passed", False, "pass"),
    # the summary lines of ExUnit, RSpec, minitest and XCTest
    ("Finished in 1.1 seconds\n34 tests, 1 failure", False, "fail"),
    ("Finished in 0.9 seconds\n34 tests, 0 failures", False, "pass"),
    ("12 examples, 2 failures", False, "fail"),
    ("5 runs, 9 assertions, 1 failures, 0 errors, 0 skips", False, "fail"),
    ("Executed 16 tests, with 0 failures (0 unexpected) in 1.276 (1.310) seconds", False, "pass"),
])
def test_outcomes(output: str, failed: bool, expected: str) -> None:
    call = parse_tool(bash("x", output, failed=failed))
    assert call is not None and outcome(call) == expected


def test_normalize_command() -> None:
    assert normalize_command(f"cd {ROOT} && pytest -q 2>&1 | tail -n 20", ROOT) == "pytest -q"
    assert normalize_command("export GH_TOKEN=abc && gh run list", ROOT) == "gh run list"
    assert normalize_command(f"ruff check {ROOT}/src\nsecond line", ROOT) == "ruff check src"
    # output piped into a filter: the command is what ran
    assert normalize_command('molecule test 2>&1 | grep -E "idempotence: Executed"') == "molecule test"
    assert normalize_command("cmake --build --preset dev 2>&1 | grep -E 'error' | head -5") == \
        "cmake --build --preset dev"
    # a quoted value of an environment variable set before the command
    assert normalize_command('FFLAGS="-I$(nf-config --includedir) -g" LDFLAGS=\'-L/opt\' fpm run -- x.nml') == \
        "fpm run -- x.nml"


@pytest.mark.parametrize(("command", "expected"), [
    ("cmake --build --preset dev", ("build", "build@dev")),  # the action is an option; the preset a part
    ("cmake --preset dev", ("setup", "setup:cmake@dev")),  # configuring
    ("run-clang-tidy -p build/dev src/", ("lint", "lint")),
    ("ansible-lint roles/dns", ("lint", "lint")),
    ("npx prisma db seed", ("seed", "seed")),  # seeding through a migration tool's CLI
    ("prisma migrate deploy", ("migrate", "migrate")),
    # the word after "migrate" says whether it writes a new migration or applies them
    ("atlas migrate diff --env local add_failed_attempts", ("migration", "migration")),
    ("atlas migrate apply --env local", ("migrate", "migrate")),
    ("sqlx migrate add create_users", ("migration", "migration")),
    ("migrate create -ext sql -dir db/migrations add_index", ("migration", "migration")),
    ("knex migrate:make add_orders", ("migration", "migration")),
    ("knex migrate:latest", ("migrate", "migrate")),
    # a program named for what it does, whatever its arguments
    ("swiftlint --strict", ("lint", "lint")),
    ("swiftformat --lint .", ("format", "format")),
    ("xcodebuild -version", (None, None)),
    ("./vendor/bin/pint --test", ("format", "format")),
    ("gh run watch --exit-status", (None, None)),  # the CI service, a phone, a remote host
    ("adb shell dumpsys package app.fernnote", (None, None)),
    # code given to an interpreter or an editor: what the code calls says what the command does
    ("Rscript -e 'testthat::test_dir(\"tests/testthat\")'", ("test", "test")),
    ("Rscript -e 'targets::tar_make()'", ("build", "build")),
    ("Rscript -e 'renv::restore(prompt = FALSE)'", ("setup", "setup")),  # the project's install
    ("Rscript -e 'styler::style_dir(\"R\")'", ("format", "format")),
    ("julia --project -e 'using Pkg; Pkg.test()'", ("test", "test")),
    ("nvim --headless -c \"PlenaryBustedDirectory tests/\" -c qa", ("test", "test")),
    # a library call or a method on a value computed on the way says nothing of the command
    ("Rscript -e 'cat(as.character(packageVersion(\"targets\")))'", (None, None)),
    ("nvim --headless -c \"lua print(('%d notes'):format(#require('x').notes))\" -c qa", (None, None)),
    ("python -c 'import secrets; print(secrets.token_hex(32))'", (None, None)),
    # tools named for what they do, in stacks without a package.json
    ("busted", ("test", "test")),
    ("stylua --check .", ("format", "format")),
    ("selene lua tests", ("lint", "lint")),
    ("luacheck lua tests", ("lint", "lint")),  # a folder named tests is an argument, not a test run
    ("ruff check src tests", ("lint", "lint")),
    ("ruff format .", ("format", "format")),
    ("nixfmt flake.nix", ("format", "format")),
    ("hlint src app test", ("lint", "lint")),  # Haskell's: folders named app and test are arguments
    ("fourmolu --mode inplace src app", ("format", "format")),
    ("luarocks upload linkwort-1.0-1.rockspec", ("deploy", "deploy")),
    ("make db", (None, None)),
    # a declared configuration applied to a machine: one slot per tool (a laptop and a server)
    ("darwin-rebuild switch --flake .#pebble", ("apply", "apply:darwin-rebuild")),
    ("sudo nixos-rebuild switch --flake .#wren", ("apply", "apply:nixos-rebuild")),
    ("terraform apply -auto-approve", ("apply", "apply:terraform")),
    ("./gradlew spotlessApply", ("format", "format")),  # what it applies says more
    ("git switch main", (None, None)),
    # a project script says what it does by its folder when its own name does not
    ("./deploy/push.sh", ("deploy", "deploy")),
    ("./tools/release/upload.sh", ("deploy", "deploy")),
    ("./ops/helpers/go.sh", (None, None)),
    # the build system's step says it (`zig build run`), and an interpreter's own options
    # come before its script
    ("zig build run -- /dev/ttyUSB0", ("run", "run")),
    ("zig build -Dtarget=aarch64-linux-musl -Doptimize=ReleaseSmall", ("build", "build")),
    ("julia --project=. scripts/test.jl", ("test", "test")),
    ("node --env-file=.env scripts/seed.js", ("seed", "seed")),
    # the action given as the first option: what follows are its arguments (folders here)
    ("clj-kondo --lint src test", ("lint", "lint")),
    # from a source folder on, the words are paths, not what the command does
    ("tidy-up src app test", (None, None)),
    # an option naming the project's aliases or tasks
    ("clojure -M:test", ("test", "test")),
    ("clojure -T:build uber", ("build", "build")),
    ("clojure -M:migrate", ("migrate", "migrate")),
    # a shell given the command as a string or a script file: what the string runs (not the
    # filters its output goes through)
    ("bash -c 'make test'", ("test", "test")),
    ("pwsh -NoProfile -c 'Install-Module PSScriptAnalyzer -Force; Invoke-ScriptAnalyzer -Path ./src "
     "-Recurse | Format-Table'", ("lint", "lint")),
    ("pwsh -NoProfile -File ./build/Publish-Module.ps1", ("deploy", "deploy")),
    ("pwsh -NoProfile -c 'Get-Module Az -ListAvailable | Format-Table'", (None, None)),
    # analysing is linting, but a type checker's own subcommand keeps it a type check
    ("dart analyze", ("lint", "lint")),
    ("phpstan analyse", ("typecheck", "typecheck")),
    # the project's files copied onto another machine are deployed; fetched from it, not
    ("rsync -az --delete ./ deploy@example.org:site/", ("deploy", "deploy")),
    ("scp target/app.jar vm:/opt/app/", ("deploy", "deploy")),
    ("scp deploy@example.org:/var/log/app.log .", (None, None)),
    # the project's shell set-up, read into the shell
    ("source scripts/env.sh", ("env", "env")),
    ("source ~/.bashrc", (None, None)),
    # code evaluated in passing, or another program run inside the project's container, is a
    # probe, not how to run the project; the project run itself is
    ("npx wp-env run cli wp eval 'echo 1;'", (None, None)),
    ("npx wp-env run cli wp config set MAIL_FROM shop@example.org", (None, None)),
    ("gcloud run services add-iam-policy-binding api --member user:a@example.org", (None, None)),
    ("npx wp-env start", ("run", "run")),
    ("./gradlew run -q & sleep 12; curl -s localhost:8080/health; kill %1", ("run", "run")),
    ("fpm run --profile release -- namelists/reference.nml", ("run", "run")),
    # a formatter named for prettifying
    ("fprettify -r src app test", ("format", "format")),
    ("js-beautify -r src/app.js", ("format", "format")),
])
def test_what_a_command_does(command: str, expected: tuple[str | None, str | None]) -> None:
    from aletheia.extract import category
    from aletheia.extract.rules import command_slot

    cat = category(command)
    assert (cat, command_slot(command, cat) if cat else None) == expected


@pytest.mark.parametrize(("path", "content", "expected"), [
    ("src/a.py", '#!/usr/bin/env python\n"""Parse the config file. More text."""\n', "Parse the config file."),
    ("src/b.py", "# Copyright 2024 ACME\n# Helpers for date ranges\nimport x\n", "Helpers for date ranges"),
    ("web/app.ts", "/**\n * The dashboard's router and its routes.\n */\nexport {}", "The dashboard's router and its routes."),
    ("main.go", "// Package main starts the HTTP server on :8080.\npackage main", "starts the HTTP server on :8080."),
    ("README.md", "# textkit — small text utilities\n\nMore.", "textkit — small text utilities"),
    ("scripts/ci.sh", "#!/bin/sh\n# Run the same checks as CI\nset -e", "Run the same checks as CI"),
    ("src/c.py", "import os\n", None),
])
def test_describe_file(path: str, content: str, expected: str | None) -> None:
    assert describe_file(path, content) == expected


def test_codex_and_gemini_shapes() -> None:
    codex = Item(id="c1", kind="tool_event", title="Bash: $ cargo test", subtitle="Bash",
                 narrative='input: {"command": ["bash", "-lc", "cargo test"]}\n\noutput:\n'
                           "test result: ok. 7 passed; 0 failed", concepts=("Bash",))
    gemini = Item(id="g1", kind="tool_event", title="run_shell_command: $ npm test",
                  subtitle="run_shell_command",
                  narrative='input: {"command": "npm test"}\n\noutput:\nTests: 12 passed, 12 total',
                  concepts=("run_shell_command",))
    drafts, _ = extract_rules(ROOT, [codex, gemini])
    assert {d.text for d in drafts} >= {"Run the tests with `cargo test`.", "Run the tests with `npm test`."}


def test_a_test_run_through_an_interpreter_s_code_option_is_how_to_run_the_tests() -> None:
    # ``-e`` is where the code goes and ``::`` is R's namespace: neither picks some of the tests
    r = bash("""Rscript -e 'testthat::test_dir("tests/testthat")' 2>&1 | tail -1""",
             "[ FAIL 0 | WARN 0 | SKIP 0 | PASS 12 ]")
    julia = bash("""julia --project=. -e 'using Pkg; Pkg.test()'""", "     Testing sched tests passed", n=1)
    one = bash("pytest tests/test_a.py::test_x", "1 passed in 0.02s", n=2)
    drafts, _ = extract_rules(ROOT, [r, julia, one])
    texts = {d.text for d in drafts}
    assert """Run the tests with `Rscript -e 'testthat::test_dir("tests/testthat")'`.""" in texts
    assert "Run the tests with `julia --project=. -e 'using Pkg; Pkg.test()'`." in texts
    assert not any("test_a.py::test_x" in t for t in texts)


def test_package_json_scripts_and_write_docstrings() -> None:
    pkg = tool_item("Read /p/package.json", "Read", {"file_path": "/p/package.json"},
                    json.dumps({"scripts": {"test": "vitest run", "build": "tsc -b && vite build"}}),
                    files=("/p/package.json",))
    write = tool_item("Write /p/src/util/dates.ts", "Write",
                      {"file_path": "/p/src/util/dates.ts", "content": "// Date helpers that always use UTC.\nexport {}"},
                      "", files=("/p/src/util/dates.ts",), n=1)
    drafts, _ = extract_rules("/p", [pkg, write])
    texts = {d.text for d in drafts}
    assert "Script `test` runs `vitest run` (`package.json`)." in texts
    assert "`src/util/dates.ts` — Date helpers that always use UTC." in texts


def test_a_flaky_pass_is_called_flaky() -> None:
    items = [bash("pytest -q", "FAILED tests/t.py::test_net - TimeoutError: timed out\n1 failed", failed=True, n=1),
             bash("pytest -q", "5 passed in 1.0s", n=2)]
    drafts, _ = extract_rules(ROOT, items)
    assert any("passed on a re-run with no change in between (flaky?)" in d.text for d in drafts)


def test_a_test_run_known_by_its_output() -> None:
    """A command whose words do not say it runs the tests (a runner's plugin, a cmdlet) does,
    when its output ends as a test run does; each part of a chain keeps its own form."""
    items = [
        bash("lein kaocha 2>&1 | tail -1", "6 tests, 14 assertions, 0 failures.", n=1),
        bash("clj-kondo --lint src test 2>&1 | tail -1 && lein midje 2>&1 | tail -1",
             "linting took 412ms, errors: 0, warnings: 0\n6 tests, 14 assertions, 0 failures.", n=2),
        bash("pwsh -NoProfile -c 'Invoke-Pester ./tests -TagFilter Privacy'",
             "Tests Passed: 1, Failed: 0, Skipped: 0 NotRun: 0", n=3),
        bash("./tools/report 2>&1 | tail -1", "wrote 3 files", n=4),
    ]
    drafts, _ = extract_rules(ROOT, items)
    texts = [d.text for d in drafts if d.kind == "command"]
    assert "Lint with `clj-kondo --lint src test`." in texts
    # the chain's other part is the one that ran the tests; it is the newest test command
    assert "Run the tests with `lein midje`." in texts
    assert "Run the tests with `lein kaocha`." in texts
    # a run of some of the tests is not how to run them; output that is no test run says nothing
    assert not any("Invoke-Pester" in t or "tools/report" in t for t in texts)


def test_a_command_no_word_names_is_kept_by_its_program_and_subcommand() -> None:
    """A command that worked although none of its words says what it does (a type checker of
    one ecosystem, a store's CLI, a runner's ``exec``) fills a slot of its program and
    subcommand: the form run last is current, each clean run confirms it.  Looking around, code
    given inline, a piece of a quoted line and a failed run say nothing."""
    items = [
        bash("rebar3 dialyzer 2>&1 | tail -1", "===> Warnings written to _build/default/22.dialyzer_warnings", n=1),
        bash("butler status lumenfox/saltglass | sed -n 3,4p", "| win-linux | 41 | 0.1 |", n=2),
        bash("rebar3 dialyzer", "===> Resolving files...", n=3),
        bash("carton exec prove -lr t/ 2>&1 | tail -1", "Result: PASS", n=4),
        bash("~/renpy/renpy.sh --version", "Ren'Py 8.2.3.24061702", n=5),
        bash("erl -noshell -eval 'io:format(\"~s~n\", [erlang:system_info(otp_release)]), halt().'", "27", n=6),
        bash("ls -la output", "total 0", n=7),
        bash("mosquitto_sub -t gust/#", "Error: Connection refused", failed=True, n=8),
        bash("ssh box 'tar -xzf /opt/a.tar.gz && /opt/a/bin/a ping'", "pong", n=9),
    ]
    drafts, _ = extract_rules(ROOT, items)
    ran = {d.subject: d for d in drafts if str(d.subject or "").startswith("command:ran:")}
    assert set(ran) == {"command:ran:rebar3 dialyzer", "command:ran:butler status",
                        "command:ran:carton exec prove", "command:ran:renpy.sh --version"}
    assert ran["command:ran:rebar3 dialyzer"].text == "Ran clean: `rebar3 dialyzer`."
    assert ran["command:ran:rebar3 dialyzer"].confirmed == 2
    assert ran["command:ran:butler status"].value == "butler status lumenfox/saltglass"
    assert ran["command:ran:renpy.sh --version"].text == \
        "Show the installed version with `~/renpy/renpy.sh --version`."
    # (a fact seen, not a command of a named purpose: those still come only from their words)
    assert all(d.kind == "fact" for d in ran.values())


def test_the_worker_keeps_a_command_no_word_names_once_it_is_a_habit(conn: sqlite3.Connection) -> None:
    """Run clean once it is a probe and no fact; run again in a later session (or twice in
    one), it is a fact confirmed by both runs, listed by the block with the commands."""
    from aletheia.context import build_block
    from aletheia.store import MemoryIn

    def ran(session: str, cmd: str, at: int, *, failed: bool = False) -> None:
        store.write_memory(conn, MemoryIn(
            project=ROOT, kind="tool_event", session_id=session, created_at=at, subtitle="Bash",
            concepts=["Bash", "error"] if failed else ["Bash"],
            title=f"Bash: $ {cmd}" + (" (failed)" if failed else ""),
            narrative=f"input: {json.dumps({'command': cmd})}\n\noutput:\n" + ("Exit code 1\nboom" if failed else "ok")))

    t0 = 1_800_000_000_000
    ran("s1", "rebar3 dialyzer 2>&1 | tail -1", t0)
    ran("s1", "butler status fox/glass", t0 + 1)
    ran("s1", "mosquitto_sub -C 1 -t gust/#", t0 + 2, failed=True)
    store.queue_stop(conn, "s1", ROOT, "claude-code", now=t0 + 3)
    drain(conn, JobRunner(use_provider=False))
    assert conn.execute("SELECT count(*) FROM fact WHERE subject LIKE 'command:ran:%'").fetchone()[0] == 0
    ran("s2", "rebar3 dialyzer", t0 + 86_400_000)
    ran("s2", "mosquitto_sub -C 1 -t gust/#", t0 + 86_400_001)
    ran("s2", "zip -qr out.zip game && echo packed", t0 + 86_400_002)
    store.queue_stop(conn, "s2", ROOT, "claude-code", now=t0 + 86_400_003)
    drain(conn, JobRunner(use_provider=False))
    rows = conn.execute("SELECT subject, text, confirmed FROM fact WHERE subject LIKE 'command:ran:%'").fetchall()
    # (the earlier mosquitto_sub run failed: one clean run is still a probe)
    assert [tuple(r) for r in rows] == [("command:ran:rebar3 dialyzer", "Ran clean: `rebar3 dialyzer`.", 2)]
    assert "- Also run clean: `rebar3 dialyzer` (✓2)" in build_block(conn, ROOT).splitlines()
    summaries = " ".join(r[0] for r in conn.execute("SELECT facts FROM memory WHERE kind = 'summary'"))
    assert "Ran clean" not in summaries  # (a session's summary says what it did, not its habits)

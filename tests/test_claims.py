"""What a memory shows a slot holding (``aletheia.claims``), and search reading two memories that
show one slot with different values as a change (``search._claimed_changes``): told only in tool
output, a version file written by the shell, a setting in a file; never a comparison, a question,
a matrix, a test fixture, nor a question that is not about the slot."""

from __future__ import annotations

import json
import sqlite3

from aletheia import store
from aletheia.claims import slot_values
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn
from tests.test_search import DAY, T0, P


def _bash(command: str, output: str) -> tuple[str, str, str]:
    return ("tool_event", f"Bash: $ {command}",
            f"input: {json.dumps({'command': command})}\n\noutput:\n{output}")


def _write(path: str, content: str) -> tuple[str, str, str]:
    return "tool_event", f"Write /repo/app/{path}", f"input: {content}\n{json.dumps({'file_path': path})}"


def _edit(path: str, old: str, new: str) -> tuple[str, str, str]:
    data = {"file_path": f"/repo/app/{path}", "old_string": old, "new_string": new}
    return "tool_event", f"Edit /repo/app/{path}", f"input: {json.dumps(data)}\n\noutput:\n{{}}"


def _read(path: str, content: str) -> tuple[str, str, str]:
    numbered = "\n".join(f"{i:6d}→{line}" for i, line in enumerate(content.splitlines(), 1))
    out = {"type": "text", "file": {"filePath": f"/repo/app/{path}", "content": numbered}}
    return ("tool_event", f"Read /repo/app/{path}",
            f"input: {json.dumps({'file_path': path})}\n\noutput:\n{json.dumps(out)}")


def test_a_runtime_version_shown_only_in_tool_output() -> None:
    assert slot_values(*_bash('echo "22" > .nvmrc && fnm use', "Using Node v22.11.0")) == {"runtime:node": "Node 22"}
    assert slot_values(*_bash("echo 3.12 > .python-version", "")) == {"runtime:python": "Python 3.12"}
    assert slot_values(*_bash("node --version", "v20.17.0")) == {"runtime:node": "Node 20"}
    assert slot_values(*_bash("go version", "go version go1.23.2 linux/amd64")) == {"runtime:go": "Go 1.23"}
    assert slot_values(*_write("Dockerfile", "FROM node:22-alpine AS build\nRUN npm ci\nFROM node:22-alpine\n")) \
        == {"runtime:node": "Node 22"}
    assert slot_values(*_write(".github/workflows/ci.yml", "    with:\n      node-version: 22\n")) \
        == {"runtime:node": "Node 22"}
    assert slot_values(*_write("pom.xml", "<properties>\n  <java.version>17</java.version>\n")) \
        == {"runtime:java": "Java 17"}
    assert slot_values(*_edit("build.gradle.kts", "JavaLanguageVersion.of(17)", "JavaLanguageVersion.of(21)")) \
        == {"runtime:java": "Java 21"}


def test_the_interpreter_a_project_manager_says_it_uses() -> None:
    # uv says it on every environment it makes, whatever the command
    made = "Initialized project `app`\nUsing CPython 3.11.9 interpreter at: /usr/bin/python3.11\n" \
           "Creating virtual environment at: .venv\nResolved 71 packages in 1.84s"
    assert slot_values(*_bash("uv init --package app && uv add httpx", made)) == {"runtime:python": "Python 3.11"}
    assert slot_values(*_bash("poetry install", "Creating virtualenv app-Xb2q-py3.12 in /home/u/.cache")) \
        == {"runtime:python": "Python 3.12"}
    # two interpreters in one output (an environment made again on another) say none
    again = "Using CPython 3.11.9 interpreter at: /usr/bin/python3.11\nUsing CPython 3.12.7 interpreter at: /x"
    assert slot_values(*_bash("uv sync && uv sync -p 3.12", again)) == {}
    assert slot_values(*_bash("uv sync", made), runtimes=False) == {}


def test_a_tools_own_version_command_and_the_line_naming_it() -> None:
    shown = "Xcode 15.4\nBuild version 15F31d"
    assert slot_values(*_bash("xcodebuild -version", shown)) == {"version:xcode": "15.4"}
    assert slot_values(*_bash("terraform version", "Terraform v1.9.8\non linux_amd64")) \
        == {"version:terraform": "1.9.8"}
    # a line naming another thing, or a command that is no version command, says none
    assert slot_values(*_bash("xcodebuild -version", "Build version 15F31d")) == {}
    assert slot_values(*_bash("xcodebuild test -scheme App", "Xcode 15.4")) == {}


def test_a_setting_in_a_file_an_edit_a_read_or_a_code_span() -> None:
    assert slot_values(*_write("src/fx.py", "import httpx\nFX_TIMEOUT_SECONDS = 10.0\n")) \
        == {"setting:fx_timeout_seconds": "10"}
    assert slot_values(*_edit("src/fx.py", "FX_TIMEOUT_SECONDS = 10.0", "FX_TIMEOUT_SECONDS = 3.0")) \
        == {"setting:fx_timeout_seconds": "3"}
    assert slot_values(*_read("src/fx.py", "FX_TIMEOUT_SECONDS = 10\n")) == {"setting:fx_timeout_seconds": "10"}
    assert slot_values("response", "", "The client fails fast now: `FX_TIMEOUT_SECONDS = 3.0`.") \
        == {"setting:fx_timeout_seconds": "3"}
    assert slot_values(*_write(".env.example", "QUEUE_CONNECTION=database\n")) \
        == {"setting:queue_connection": "database"}


def test_a_runtime_said_in_prose() -> None:
    assert slot_values("prompt", "", "Next.js 14 with the App Router. Use npm for now. Node 20.") \
        == {"runtime:node": "Node 20"}
    assert slot_values("prompt", "", "And bump Node to 22 everywhere — .nvmrc, CI, the image.") \
        == {"runtime:node": "Node 22"}
    assert slot_values("response", "", "Moved the project from Node 20 to 22.") == {"runtime:node": "Node 22"}


def test_no_slot_from_a_question_a_comparison_a_matrix_a_fixture_or_a_flag() -> None:
    assert slot_values("prompt", "", "Should we move to Node 22?") == {}
    assert slot_values("response", "", "We could go to Python 3.13 later.") == {}
    assert slot_values("response", "", "Python 3.12 is faster than Python 3.11 on this benchmark.") == {}
    assert slot_values(*_write(".github/workflows/ci.yml", "    strategy:\n      matrix:\n        node-version: [20, 22]\n")) == {}
    assert slot_values(*_write("tests/test_fx.py", "FX_TIMEOUT_SECONDS = 0.1\n")) == {}
    assert slot_values(*_write("src/app.py", "DEBUG_MODE = true\nretry_count = 1\ni = 4\n")) == {}
    assert slot_values(*_bash("ls -la", "v22 directory")) == {}


def _memory(conn: sqlite3.Connection, memory: tuple[str, str, str], session: str, at: int) -> str:
    kind, title, narrative = memory
    return store.write_memory(conn, MemoryIn(project=P, kind=kind, title=title, narrative=narrative,
                                             created_at=at, session_id=session)).id


def _node_sessions(conn: sqlite3.Connection) -> dict[str, str]:
    """The first session pinned Node 20 with a shell write; two months later another wrote 22.
    Neither says "change" in words."""
    later = T0 + 60 * DAY
    out = {
        "old": _memory(conn, _bash('echo "20" > .nvmrc && node --version && npm --version',
                                   "v20.17.0\n10.8.2"), "s1", T0),
        "old_ci": _memory(conn, _write(".github/workflows/ci.yml", "name: ci\n  node-version: 20\n"), "s1",
                          T0 + 1000),
        "new": _memory(conn, _bash('echo "22" > .nvmrc && fnm use', "Using Node v22.11.0"), "s2", later),
        "sharp": _memory(conn, _bash("bun add sharp", "installed sharp@0.33.5 (node 22 build)"), "s2",
                         later + 1000),
    }
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    return out


def test_a_tool_that_prints_its_bare_version() -> None:
    # `zig version` prints only the number, after whatever ran before it in the command
    assert slot_values(*_bash("zig version && zig init 2>&1 | tail -2", "0.13.0\ninfo: created build.zig")) \
        == {"version:zig": "0.13.0"}
    fetched = "downloading https://ziglang.org/download/0.14.0/zig-linux-x86_64-0.14.0.tar.xz\n0.14.0"
    assert slot_values(*_bash("zigup 0.14.0 && zig version", fetched)) == {"version:zig": "0.14.0"}
    # with two version commands a bare number could be either's: none
    assert slot_values(*_bash("zig version && cmake --version", "0.13.0\ncmake version 3.30.5")) \
        == {"version:cmake": "3.30.5"}
    assert slot_values(*_bash("zig build test", "0.13.0")) == {}


def test_a_builds_metadata_names_no_other_version() -> None:
    # the installer's line carries the build ("+0.x64.linux.gnu"), the version command's does not
    shown = "Installing Julia 1.11.2+0.x64.linux.gnu\nConfigured the default Julia version to be 'release'.\n" \
            "julia version 1.11.2"
    assert slot_values(*_bash("juliaup add release && juliaup default release && julia --version", shown),
                       keys={"julia", "version"}) == {"version:julia": "1.11.2"}


def test_a_release_asked_for_is_the_version_a_tool_prints(conn: sqlite3.Connection) -> None:
    # "release" is the question's word, "version" the command's; the builds say "ReleaseSmall",
    # "build" and the tool's name, more of the question's words than the version runs hold
    old = _memory(conn, _bash("zig version && zig init 2>&1 | tail -2", "0.13.0\ninfo: created build.zig"), "s1", T0)
    for i in range(6):
        _memory(conn, _bash(f"zig build -Doptimize=ReleaseSmall -Dstep={i} && ls zig-out/bin",
                            f"gustline-{i}"), f"s{i + 2}", T0 + (i + 1) * DAY)
    new = _memory(conn, _bash("zigup 0.14.0 && zig version",
                              "downloading https://ziglang.org/download/0.14.0/zig-x86_64-linux-0.14.0.tar.xz\n0.14.0"),
                  "s9", T0 + 30 * DAY)
    hits = [h.id for h in search(conn, SearchQuery(q="Which Zig release do we build with?", project=P))]
    assert hits[0] == new
    assert old in hits and hits.index(new) < hits.index(old)
    # a memory holding no word of the question but "version" is found for its "release"
    alone = _memory(conn, _bash("helm version --short", "v3.16.2+g13654a5"), "s10", T0 + 31 * DAY)
    _memory(conn, ("note", "helm chart", "the helm chart for the ingress; helm lint passes on it"), "s11", T0 + 32 * DAY)
    assert alone in [h.id for h in search(conn, SearchQuery(q="Which helm release is installed?", project=P))][:1]


def test_how_often_is_asked_of_an_interval(conn: sqlite3.Connection) -> None:
    # "How often" is what an interval, a period or a frequency answers
    _memory(conn, ("note", "cache purged", "the cache was purged by hand, then purged again after the deploy"), "s1", T0)
    answer = _memory(conn, _edit("src/cache.zig", "const purge_interval_s = 60;", "const purge_interval_s = 20;"),
                     "s2", T0 + DAY)
    hits = [h.id for h in search(conn, SearchQuery(q="How often is the cache purged?", project=P))]
    assert hits[0] == answer


def test_a_version_changed_only_in_tool_output_ranks_the_newest_first(conn: sqlite3.Connection) -> None:
    m = _node_sessions(conn)
    hits = [h.id for h in search(conn, SearchQuery(q="Which Node version does the project run on?", project=P))]
    assert hits.index(m["new"]) < hits.index(m["old"])
    assert hits.index(m["new"]) < hits.index(m["old_ci"])
    assert m["old"] in hits  # the old answer stays findable, below


def test_a_tool_version_reported_again_later_ranks_the_newest_first(conn: sqlite3.Connection) -> None:
    # The first session's run holds the question's words as well as the later one's: the version
    # each prints is what says which is current.
    old = _memory(conn, _bash("xcodebuild -version && swift --version",
                              "Xcode 15.4\nBuild version 15F31d\nApple Swift version 5.10"), "s1", T0)
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    new = _memory(conn, _bash("xcodebuild -version && swift --version 2>&1 | head -1",
                              "Xcode 16.1\nBuild version 16B40"), "s2", T0 + 30 * DAY)
    import aletheia.search as s

    query = SearchQuery(q="Which Xcode release do we build with?", project=P)
    s.SLOT_CLAIMS = False
    try:
        without = [h.id for h in search(conn, query)]
    finally:
        s.SLOT_CLAIMS = True
    assert without.index(old) < without.index(new)
    hits = [h.id for h in search(conn, query)]
    assert hits.index(new) < hits.index(old)


def test_the_newest_version_of_a_runtime_the_query_names_goes_first(conn: sqlite3.Connection) -> None:
    # "release" is in every deploy memory; the runs that print Elixir's version hold only
    # "elixir": the newest of them is the answer, above the deploy talk, not only above the old run.
    old = _memory(conn, _bash("elixir --version", "Erlang/OTP 26 [erts-14.2]\n\nElixir 1.16.3 (compiled with Erlang/OTP 26)"),
                  "s1", T0)
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    for i in range(4):
        _memory(conn, ("response", f"release {i}", f"The release is built with mix release and shipped; release {i} "
                       "of the project went out, the release notes list it."), "s3", T0 + 20 * DAY + i)
    new = _memory(conn, _bash("asdf install && elixir --version",
                              "Erlang/OTP 27 [erts-15.1]\n\nElixir 1.17.3 (compiled with Erlang/OTP 27)"), "s2",
                  T0 + 30 * DAY)
    import aletheia.search as s

    query = SearchQuery(q="Which Elixir release is the project on?", project=P)
    bonus = s.OBSERVED_BONUS
    s.SLOT_FIRST, s.OBSERVED_BONUS = False, 0.0  # (the bonus for a run's output lifts it too)
    try:
        without = [h.id for h in search(conn, query)]
    finally:
        s.SLOT_FIRST, s.OBSERVED_BONUS = True, bonus
    assert without[0] not in (old, new)
    hits = [h.id for h in search(conn, query)]
    assert hits[0] == new
    assert hits.index(new) < hits.index(old)
    # a version of something else that names the runtime is not asked about the runtime
    other = [h.id for h in search(conn, SearchQuery(q="Which version of the Elixir linter plugin is installed?",
                                                    project=P))]
    s.SLOT_FIRST = False
    try:
        assert other == [h.id for h in search(conn, SearchQuery(
            q="Which version of the Elixir linter plugin is installed?", project=P))]
    finally:
        s.SLOT_FIRST = True


def test_a_question_not_about_the_slot_is_ranked_as_it_was(conn: sqlite3.Connection) -> None:
    import aletheia.search as s

    m = _node_sessions(conn)
    query = SearchQuery(q="What version of sharp is in the image?", project=P)
    with_claims = [h.id for h in search(conn, query)]
    s.SLOT_CLAIMS = False
    try:
        without = [h.id for h in search(conn, query)]
    finally:
        s.SLOT_CLAIMS = True
    assert with_claims == without
    assert with_claims[0] == m["sharp"]


def test_a_question_naming_the_old_value_asks_about_that_time(conn: sqlite3.Connection) -> None:
    m = _node_sessions(conn)
    hits = [h.id for h in search(conn, SearchQuery(q="When did we pin Node 20 in .nvmrc?", project=P))]
    assert hits[0] == m["old"]


# --- the tool of a purpose, said in words no change rule knows -----------------------------------

def test_a_tool_said_to_be_the_one_in_use_now() -> None:
    from aletheia.claims import tool_claims

    assert tool_claims("Set up unit tests: Jest with next/jest and React Testing Library.") \
        == {"test-runner": ("jest", False)}
    assert tool_claims("Jest is slow. We switched the tests over to Vitest.") == {"test-runner": ("vitest", True)}
    assert tool_claims("Tests run on Vitest now.") == {"test-runner": ("vitest", True)}
    assert tool_claims("Use Vitest instead of Jest from now on.") == {"test-runner": ("vitest", True)}
    assert tool_claims("Jest is gone; tests run on Vitest 2.1.") == {"test-runner": ("vitest", True)}
    assert tool_claims("We went with pnpm for the workspace.") == {"package-manager": ("pnpm", True)}
    # sign-in: the library, by the name the project writes it with ("better-auth" is the vocabulary's
    # betterauth, and no "better" of a comparison); what it is built from (a JWT, a cookie) is none
    assert tool_claims("I don't want to own session crypto. move us to better-auth, it has a prisma adapter.") == {
        "auth": ("better-auth", True), "orm": ("prisma", False)}  # (the ORM is named, not changed)
    assert tool_claims("Lucia for vendor sign-in, sessions in a cookie.") == {"auth": ("lucia", False)}
    assert tool_claims("Sign the JWT with RS256 and keep it in a cookie.") == {}



def test_a_tool_named_with_a_dot_and_a_later_clause_about_something_else() -> None:
    from aletheia.claims import tool_claims

    # the vocabulary writes "mini.test" / "socket.io" as one word; a "later" in a clause after the
    # change ("… and fails when it changes later") defers nothing, one in the change's clause does
    assert tool_claims("Tests now run on mini.test: each case starts a fresh child, and the screenshot "
                       "test fails when it changes later.") == {"test-runner": ("mini.test", True)}
    assert tool_claims("We will switch the tests to Vitest later.") == {}
    assert tool_claims("Move the tests to Vitest later, not now.") == {}


def test_the_tool_the_changes_clause_names_is_the_new_one() -> None:
    from aletheia.claims import tool_claims

    # the old tool named after a comma to say what the new one is ("X, Y's fork") is no new one
    assert tool_claims("Switched to fourmolu, ormolu's configurable fork: `fourmolu.yaml` sets the indent.") \
        == {"formatter": ("fourmolu", True)}
    assert tool_claims("Moved the tests over to Vitest, a drop-in for Jest with the same API.") \
        == {"test-runner": ("vitest", True)}
    # a clause naming both says neither
    assert tool_claims("Switched to vitest and jest, both running.") == {}


def test_a_mention_is_not_a_change() -> None:
    from aletheia.claims import tool_claims

    def now(text: str) -> dict[str, str]:
        return {p: tool for p, (tool, is_now) in tool_claims(text).items() if is_now}

    assert tool_claims("Vitest is faster than Jest on this suite.") == {}  # a comparison names neither
    assert tool_claims("Should we move the tests to Vitest?") == {}  # a question
    assert now("I could move the tests to Vitest later.") == {}  # a plan
    assert tool_claims("We tried Vitest for a day, then reverted to Jest.") == {}  # a trial, a revert
    assert tool_claims("Run next build, then click through the pages.") == {}  # plain words
    # a tool named with its family ("ansible-vault") is of the family's purpose; "jest-dom" is no jest
    assert tool_claims("The secrets are encrypted with ansible-vault.") == {"secrets": ("ansible-vault", False)}
    assert tool_claims("Matchers come from @testing-library/jest-dom.") == {}


def test_a_purpose_is_asked_by_its_own_names() -> None:
    from aletheia.claims import asks_purpose

    assert asks_purpose({"runs", "unit", "tests"}, "test-runner")
    assert asks_purpose({"which", "package", "manager"}, "package-manager")
    assert not asks_purpose({"many", "subscribers", "delivery", "job", "handle"}, "queue")
    assert not asks_purpose({"starts", "web", "server"}, "web-framework")


def _runner_sessions(conn: sqlite3.Connection) -> dict[str, str]:
    later = T0 + 40 * DAY
    out = {
        "old": _memory(conn, ("prompt", "Set up unit tests", "Set up unit tests: Jest with React Testing "
                              "Library, one test file per component."), "s1", T0),
        "old_done": _memory(conn, ("response", "Jest is set up", "Jest is set up with jsdom and Testing Library; "
                                   "component tests sit next to each component."), "s1", T0 + 1000),
        "new": _memory(conn, ("prompt", "tests over to Vitest", "The ESM transforms keep breaking. We switched the "
                              "unit tests over to Vitest."), "s2", later),
        "trial": _memory(conn, ("response", "tried Bun's runner", "I tried Bun's test runner on the unit tests "
                                "for comparison; 2x faster than Vitest here."), "s3", later + 5 * DAY),
    }
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    return out


def test_a_runner_said_in_new_words_ranks_above_the_old_one(conn: sqlite3.Connection) -> None:
    m = _runner_sessions(conn)
    hits = [h.id for h in search(conn, SearchQuery(q="What runs the unit tests?", project=P))]
    assert hits.index(m["new"]) < min(hits.index(m["old"]), hits.index(m["old_done"]))
    # a question naming the old tool asks about that time
    named = [h.id for h in search(conn, SearchQuery(q="How was Jest set up for the unit tests?", project=P))]
    assert named.index(m["old_done"]) < named.index(m["new"])


def test_the_worker_reads_a_runtime_from_a_shell_write_and_a_version_key() -> None:
    from aletheia.extract.knowledge import file_findings, version_findings

    [written] = version_findings('echo "22" > .nvmrc && fnm use', "Using Node v22.11.0")
    assert (written.subject, written.value) == ("runtime:node", "Node 22")
    [ci] = file_findings(".github/workflows/ci.yml", "      - uses: actions/setup-node@v4\n        with:\n"
                                                     "          node-version: 20\n")
    assert (ci.subject, ci.value) == ("runtime:node", "Node 20")
    assert file_findings(".github/workflows/ci.yml", "  matrix:\n    node-version: [20, 22]\n") == []
    assert file_findings(".github/workflows/ci.yml", "python-version: 3.11\n---\npython-version: 3.12\n") == []


def test_a_tool_installed_is_taken_up_and_one_removed_is_not() -> None:
    from aletheia.claims import installed_tools, tool_claims

    assert installed_tools("npm uninstall zod && npm install valibot") == {"validation": ("valibot", True)}
    assert installed_tools("Bash: $ npm install zod") == {"validation": ("zod", True)}
    assert installed_tools('grep -E "zod|total" bundle.txt') == {}
    assert installed_tools("npm uninstall zod") == {}
    # chat without capitals after a full stop, and a change whose old value is "it"
    assert tool_claims("zod is 60% of our client bundle. swap it for valibot, same rules.") \
        == {"validation": ("valibot", True)}


def test_a_named_things_version_in_a_catalog_or_in_prose() -> None:
    assert slot_values(*_edit("gradle/libs.versions.toml", 'kotlin = "2.0.0"', 'kotlin = "2.0.21"'),
                       keys={"kotlin"}) == {"version:kotlin": "2.0.21"}
    assert slot_values("prompt", "", "we're on Kotlin 2.0 now btw", keys={"kotlin"}) == {"version:kotlin": "2.0"}
    assert slot_values("response", "", "Kotlin 2.0 compiles faster than Kotlin 1.9 here.", keys={"kotlin"}) == {}


# --- the fact store: a tool said to be the one now retires what the project used before ---------

def test_a_session_saying_another_tool_is_now_in_use_retires_the_old_ones_facts(conn: sqlite3.Connection) -> None:
    from aletheia.context import outdated
    from aletheia.facts import FactIn, add_facts, list_facts

    add_facts(conn, [
        FactIn(project=P, text="Convention: the order form is validated with zod, server side in the action.",
               kind="convention", observed_at=T0, stated=True),
        FactIn(project=P, text="Uses zod (validation).", kind="stack", subject="uses:zod", value="(in use)",
               observed_at=T0),
        FactIn(project=P, text="Dependency: `zod-form-data`.", kind="stack", subject="dep:zod-form-data",
               value="runtime", observed_at=T0),  # another package, not the tool
        FactIn(project=P, text="Uses Prisma (ORM).", kind="stack", subject="uses:prisma", value="(in use)",
               observed_at=T0),
    ])
    add_facts(conn, [FactIn(project=P, text="`valibot` is now the project's validation.", kind="decision",
                            subject="now:validation", value="valibot", observed_at=T0 + DAY, ends=True)])
    active = {f["text"] for f in list_facts(conn, project=P)}
    assert "Uses zod (validation)." not in active
    assert not any("validated with zod" in t for t in active)
    assert "Uses Prisma (ORM)." in active and "Dependency: `zod-form-data`." in active
    assert "zod" in {token for token, _ in outdated(conn, P)}


def test_the_extractor_records_a_tool_said_to_be_in_use_now() -> None:
    from aletheia.extract.updates import tool_now_drafts

    [d] = tool_now_drafts("zod is 60% of our client bundle. swap it for valibot, same rules.", "m1",
                          stated=True, at=T0)
    assert (d.subject, d.value, d.ends) == ("now:validation", "valibot", True)
    assert tool_now_drafts("Should we swap zod for valibot?", "m2", stated=True, at=T0) == []
    assert tool_now_drafts("validation with zod, server side in the action.", "m3", stated=True, at=T0) == []


def test_a_timer_setting_asked_by_its_files_name(conn: sqlite3.Connection) -> None:
    timer = "[Timer]\nOnCalendar=*-*-* 03:00:00\nPersistent=true\n"
    # (a key none of the query's words name, read because the file's own name holds one)
    assert slot_values(*_write("roles/restic/templates/restic-backup.timer", timer), keys={"backup"}) \
        == {"setting:on_calendar": "*-*-* 03:00:00"}
    assert slot_values(*_write("roles/restic/templates/restic-backup.timer", timer), keys={"invoice"}) == {}
    old = _memory(conn, _write("roles/restic/templates/restic-backup.timer", timer), "s1", T0)
    new = _memory(conn, _edit("roles/restic/templates/restic-backup.timer", "OnCalendar=*-*-* 03:00:00",
                              "OnCalendar=*-*-* 02:15:00"), "s2", T0 + 30 * DAY)
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    hits = [h.id for h in search(conn, SearchQuery(q="When does the restic backup timer fire?", project=P))]
    assert hits.index(new) < hits.index(old)


def test_a_version_line_that_names_another_program_is_not_the_runtimes() -> None:
    from aletheia.claims import printed_versions

    assert printed_versions("python3 --version && ansible --version", "ansible [core 2.16.6]\nPython 3.12.3") \
        == [("python", "3.12.3", "`python3 --version` prints `Python 3.12.3`")]
    assert [v for _, v, _ in printed_versions("go version", "go version go1.23.2 linux/amd64")] == ["1.23.2"]
    assert [v for _, v, _ in printed_versions("ruby -v", "3.3.4")] == ["3.3.4"]


def test_what_a_package_manager_says_it_resolved_installed_or_upgraded() -> None:
    from aletheia.claims import package_versions

    printed = "\n".join([
        "Resolved 70 packages in 3.12s", "Updated duckdb v1.0.0 -> v1.1.3", "Added tzdata v2024.2",
        "Installed 8 packages in 140ms", " + httpx==0.27.2", "  - Updating requests (2.31.0 -> 2.32.3)",
        "    Updating crates.io index", "    Updating serde v1.0.210 -> v1.0.215",
        "go: upgraded github.com/jackc/pgx/v5 v5.6.0 => v5.7.1", "  tz 0.26.5 => 0.28.1",
        "Installing rails 7.1.3 (was 7.1.2)", "+ react 18.3.1", "    qtbase[core,gui]:x64-linux@6.7.2#2",
        "    pocketfft:x64-linux@2024-05-16", "added 6 packages, and audited 1221 packages in 4s",
    ])
    assert package_versions(printed) == [
        ("duckdb", "1.1.3"), ("tzdata", "2024.2"), ("httpx", "0.27.2"), ("requests", "2.32.3"),
        ("serde", "1.0.215"), ("pgx", "5.7.1"), ("tz", "0.28.1"), ("rails", "7.1.3"), ("react", "18.3.1"),
        ("qtbase", "6.7.2")]
    # read as a slot only for a package the query names (keys), like every version slot
    run = _bash("uv lock --upgrade && uv sync", "Updated duckdb v1.0.0 -> v1.1.3\nUpdated polars v1.14.0 -> v1.16.0")
    assert slot_values(*run, keys={"duckdb", "lock"}) == {"version:duckdb": "1.1.3"}
    assert slot_values(*run, runtimes=False) == {}


def test_a_tools_version_said_further_along_its_line() -> None:
    # `swift --version` names the driver first: the program's own name wins
    line = "swift-driver version: 1.115 Apple Swift version 6.0.2 (swiftlang-6.0.2.1.2 clang-1600.0.26.4)"
    assert slot_values(*_bash("swift --version 2>&1 | head -1", line)) == {"version:swift": "6.0.2"}


def test_a_package_upgraded_in_the_lock_ranks_the_newest_first(conn: sqlite3.Connection) -> None:
    old = _memory(conn, _bash("uv add dagster duckdb pandas", "Resolved 71 packages in 1.84s\n + dagster==1.8.13\n"
                              " + duckdb==1.0.0\n + pandas==2.2.3"), "s1", T0)
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    for i in range(3):
        _memory(conn, ("response", f"duckdb {i}", f"The DuckDB file is opened read-only by the analysts; DuckDB "
                       f"allows one writer, and the lock file of DuckDB {i} is held by the writer."), "s3",
                T0 + 20 * DAY + i)
    new = _memory(conn, _bash("uv lock --upgrade && uv sync", "Resolved 70 packages in 3.12s\n"
                              "Updated dagster v1.8.13 -> v1.9.3\nUpdated duckdb v1.0.0 -> v1.1.3"), "s2", T0 + 30 * DAY)
    hits = [h.id for h in search(conn, SearchQuery(q="Which DuckDB release is in the lock file?", project=P))]
    assert hits[0] == new
    assert hits.index(new) < hits.index(old)


def test_a_runtimes_compiler_release_is_the_runtimes() -> None:
    from aletheia.search import _names_version_of

    assert _names_version_of("Which Swift compiler release is installed?", "version:swift")
    assert _names_version_of("Which Python interpreter version do we run?", "runtime:python")
    assert not _names_version_of("Which Swift linter release is installed?", "version:swift")


def _build_number_runs(conn: sqlite3.Connection, *, second: str = "Android versionCode: 22",
                       first: str = "Android versionCode: 14") -> dict[str, str]:
    """The same command run in two sessions months apart, printing another value the second time;
    the first run's description holds more of the question's words."""
    command = "eas build:version:get --platform android"
    out = {"old": _memory(conn, ("tool_event", f"Bash: $ {command}", f"input: {json.dumps({'command': command, 'description': 'Android build number kept by EAS'})}"
                                 f"\n\noutput:\nProject @ferries/app\n{first}"), "s1", T0)}
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    out["new"] = _memory(conn, ("tool_event", f"Bash: $ {command}", f"input: {json.dumps({'command': command, 'description': 'Ask'})}"
                                f"\n\noutput:\nProject @ferries/app\n{second}"), "s2", T0 + 60 * DAY)
    return out


def test_a_command_run_again_with_another_output_ranks_the_newer_first(conn: sqlite3.Connection) -> None:
    import aletheia.search as s

    m = _build_number_runs(conn)
    query = SearchQuery(q="What Android build number did the 1.4 release get?", project=P)
    s.RERUN_LATER = False
    try:
        without = [h.id for h in search(conn, query)]
    finally:
        s.RERUN_LATER = True
    assert without.index(m["old"]) < without.index(m["new"])
    hits = [h.id for h in search(conn, query)]
    assert hits.index(m["new"]) < hits.index(m["old"])
    # a question about the earlier state keeps the older run first
    past = [h.id for h in search(conn, SearchQuery(q="What was the Android build number before the first release?",
                                                   project=P))]
    assert past.index(m["old"]) < past.index(m["new"])


def test_one_programs_version_asked_twice_is_one_command_run_again(conn: sqlite3.Connection) -> None:
    # The same tool's version asked in two differently written commands (one of them long enough
    # for its title to be cut), months apart: the later output is what is installed now.
    import aletheia.search as s

    def run(command: str, output: str, session: str, at: int, description: str) -> str:
        return _memory(conn, ("tool_event", f"Bash: $ {command[:60]}…" if len(command) > 60 else f"Bash: $ {command}",
                              f"input: {json.dumps({'command': command, 'description': description})}"
                              f"\n\noutput:\n{output}"), session, at)

    old = run("npm i -g @google/clasp >/dev/null 2>&1; clasp --version && clasp login --no-localhost | tail -1",
              "2.4.2\nAuthorization successful.", "s1", T0, "Install the upload tool, which version")
    for i in range(8):
        _memory(conn, ("note", f"unrelated work {i}", f"unrelated work {i} on the invoice list"), "s9", T0 + 10 + i)
    new = run("ssh box 'sudo npm i -g @google/clasp@3 >/dev/null && clasp --version | head -1'", "3.0.6", "s2",
              T0 + 60 * DAY, "Upgrade")
    query = SearchQuery(q="Which version of the upload tool is installed?", project=P)
    s.VERSION_RUNS = False
    try:
        without = [h.id for h in search(conn, query)]
    finally:
        s.VERSION_RUNS = True
    assert without.index(old) < without.index(new)
    hits = [h.id for h in search(conn, query)]
    assert hits.index(new) < hits.index(old)


def test_a_commands_run_key() -> None:
    from aletheia.search import _run_key

    assert _run_key("Bash: $ echo about | stata-mp -q | head -3") == _run_key("Bash: $ echo about | stata-mp -q | head -2")
    assert _run_key("Bash: $ cobc --version | head -3") == _run_key("Bash: $ make && sudo make install && cobc --version")
    assert _run_key("Bash: $ cobc --version") != _run_key("Bash: $ cobc --version (failed)")
    assert _run_key("Bash: $ python3 --version && node -v") == "Bash: $ python3 --version && node -v"  # (two programs)
    assert _run_key("Bash: $ grep -c x a | head -1") != _run_key("Bash: $ grep -c y a | head -1")
    # (-v with more after it is verbose or inverted, not a version asked: two such lines differ)
    assert _run_key("Bash: $ grep -v foo app.log") != _run_key("Bash: $ grep -v bar app.log")
    assert _run_key("Bash: $ curl -v http://127.0.0.1:8000/a") != _run_key("Bash: $ curl -v http://127.0.0.1:8000/b")
    assert _run_key("Bash: $ node -v") == _run_key("Bash: $ nvm use 20 && node -v") == "version:node"


def test_a_run_printing_what_the_question_quotes_keeps_its_place(conn: sqlite3.Connection) -> None:
    # The first run printed the lint finding the question quotes; the second printed none.
    m = _build_number_runs(conn, first="Android versionCode: 14\nwarning: ineffectual assignment to err",
                           second="0 issues.")
    hits = [h.id for h in search(conn, SearchQuery(q="Android build: ineffectual assignment to err, fix?", project=P))]
    assert hits.index(m["old"]) < hits.index(m["new"])


def test_a_value_named_as_a_style_is_mentioned() -> None:
    from aletheia.changes import mentions

    # "busted-style specs", "a Redux-like store" name the old tool (recent work saying it is stale
    # once it was replaced); a package of the family ("jest-dom") or a longer word does not
    assert mentions("Tests are busted-style specs in `tests/`", "busted")
    assert mentions("a Redux-like store for the cart", "redux")
    assert not mentions("Matchers come from @testing-library/jest-dom.", "jest")
    assert not mentions("a jestful remark", "jest")
    assert mentions("Jest is slow", "jest")


def test_mentions_answers_as_the_value_pattern_does() -> None:
    import random
    import re

    from aletheia.changes import mentions, value_pattern

    # ``mentions`` tests a substring before the pattern: it must never say no where the pattern
    # (case-insensitive, a measure in any spelling of its unit) finds the value
    tokens = ["jest", "HS256", "2024.06", "30 s", "250ms", "5 min", "kafka", "Ktor", "is", "süß", "1.2.3", ""]
    pieces = ["Jest", "JEST", "hs256", "2024.06.00", "30 seconds", "30s", "250 milliseconds", "5 minutes",
              "\u212aafka", "\u212ator", "\u0130S", "\u0131s", "\u017fü\u00df", "SÜSS", "1.2.3", "v1.2.3-rc",
              "jest-dom", "busted-style", " ", ".", "-", "\n", "`", "x"]
    rng = random.Random(11)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(2000)]
    for token in tokens:
        pattern = re.compile(value_pattern(token), re.I)
        for text in texts:
            assert mentions(text, token) == (pattern.search(text) is not None), (text, token)


def test_a_keyword_argument_the_query_names_is_a_setting() -> None:
    # `workers = 2` inside a call is the setting "workers" when it is asked for, not otherwise
    call = "tar_option_set(\n  controller = crew::crew_controller_local(workers = 2)\n)"
    assert slot_values(*_edit("_targets.R", "x", call), runtimes=False, keys={"workers", "worker"}) \
        == {"setting:workers": "2"}
    assert slot_values(*_edit("app/pool.py", "x", "pool = Pool(max_workers=4, name='io')"), runtimes=False,
                       keys={"workers"}) == {"setting:max_workers": "4"}
    assert slot_values(*_edit("_targets.R", "x", call), runtimes=False, keys={"pipeline"}) == {}
    assert slot_values(*_edit("_targets.R", "x", call), runtimes=False) == {}
    # a comparison is no argument
    assert slot_values(*_edit("src/run.py", "x", "if check(workers == 2):\n    go()"), runtimes=False,
                       keys={"workers"}) == {}


def test_a_setting_the_query_names_changed_in_a_call_ranks_the_newest_above_the_old(conn: sqlite3.Connection) -> None:
    # both values only in diffs; the talk around them says "parallel" and "pipeline" more often
    # (the newest was put first, above that talk, by SETTING_FIRST until stop 30: it moved no
    # question on dev-7 or dev-8 and was removed)
    old = _memory(conn, _edit("_targets.R", "tar_option_set(packages = pkgs)",
                              "tar_option_set(packages = pkgs,\n  controller = crew::crew_controller_local(workers = 2))"),
                  "s1", T0)
    for i in range(6):
        _memory(conn, ("response", f"pipeline run {i}", f"The pipeline ran in parallel again, run {i}; the pipeline "
                       "builds the maps in parallel with the report."), f"s{i + 2}", T0 + (i + 1) * DAY)
    new = _memory(conn, _edit("_targets.R", "crew::crew_controller_local(workers = 2)",
                              "crew::crew_controller_local(workers = 6)"), "s9", T0 + 30 * DAY)
    hits = [h.id for h in search(conn, SearchQuery(q="How many parallel workers does the pipeline run with?",
                                                   project=P))]
    assert new in hits
    assert old not in hits or hits.index(new) < hits.index(old)

"""A value the best answers state, followed into a later edit that replaced it at a key they
name (aletheia.followed), and through search: the edit outranks the older answer."""

from __future__ import annotations

import json
import sqlite3

import pytest

from aletheia import followed, recall, store
from aletheia import search as S
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn

P = "/repo/sono"
DAY = 86_400_000
T0 = 1_700_000_000_000


def _edit(path: str, old: str, new: str) -> str:
    data = {"file_path": path, "old_string": old, "new_string": new}
    return f"input: {json.dumps(data)}\n\noutput:\n{json.dumps({'filePath': path})}"


def test_values_worth_following_are_versions_and_long_numbers() -> None:
    text = "the 2024.06 Compose BOM, a 4096-sample window, 50 % overlap, 2 tests, Kotlin 2.0.21"
    assert followed.stated_values(text) == ["2024.06", "4096", "2.0.21"]


def test_a_diff_replacing_a_value_at_a_typed_key() -> None:
    narrative = _edit("/r/src/core/Spectrum.hpp", "    std::size_t windowSize = 4096;\n    double overlap = 0.5;",
                      "    std::size_t windowSize = 8192;\n    double overlap = 0.75;")
    assert followed.replaced_at_keys(narrative) == [("windowSize", "4096", "8192"), ("overlap", "0.5", "0.75")]


def test_a_version_in_a_catalog_and_a_multi_edit() -> None:
    one = _edit("/r/gradle/libs.versions.toml", 'composeBom = "2024.06.00"\nhilt = "2.51.1"',
                'composeBom = "2024.10.01"\nhilt = "2.52"')
    assert ("composeBom", "2024.06.00", "2024.10.01") in followed.replaced_at_keys(one)
    multi = "input: " + json.dumps({"file_path": "/r/config.yaml", "edits": [
        {"old_string": "port: 8080", "new_string": "port: 9090"}]})
    assert followed.replaced_at_keys(multi) == [("port", "8080", "9090")]


def test_what_is_not_a_replaced_value() -> None:
    # a value kept, a key removed, a test's fixture, a lockfile, a cut-off input: nothing
    assert followed.replaced_at_keys(_edit("/r/a.toml", "size = 4096\nname = 1", "size = 4096\nname = 2")) \
        == [("name", "1", "2")]
    assert followed.replaced_at_keys(_edit("/r/a.toml", "size = 4096", "# gone")) == []
    assert followed.replaced_at_keys(_edit("/r/tests/test_spectrum.cpp", "size = 4096", "size = 8192")) == []
    assert followed.replaced_at_keys(_edit("/r/Cargo.lock", 'version = "1.2.3"', 'version = "1.3.0"')) == []
    assert followed.replaced_at_keys('input: {"file_path": "/r/a.toml", "old_string": "size = 40') == []


def test_a_shorter_version_names_the_diffs_value() -> None:
    assert followed.same_value("2024.06", "2024.06.00")
    assert followed.same_value("4096", "4096")
    assert not followed.same_value("2024.0", "2024.06.00")
    assert not followed.same_value("409", "4096")


def test_the_answer_must_name_the_key_beside_the_value() -> None:
    assert followed.names_key("the default analysis window is 4096 samples", "4096", "windowSize", set())
    assert followed.names_key("AGP 8.5, the 2024.06 Compose BOM", "2024.06", "composeBom", set())
    # 4096 named, but as something else far from any word of the key
    assert not followed.names_key("the cache holds 4096 entries, cleared at startup by the nightly job; the "
                                  "window of the app is resizable", "4096", "windowSize", set())
    assert followed.names_key("the cache holds 4096 entries", "4096", "windowSize", {"window"})


# --- through search ---------------------------------------------------------------------------


def _said(conn: sqlite3.Connection, title: str, kind: str, at: int, narrative: str | None = None,
          session: str = "s1") -> str:
    return store.write_memory(conn, MemoryIn(project=P, kind=kind, title=title, narrative=narrative or title,
                                             created_at=at, session_id=session)).id


def _story(conn: sqlite3.Connection, *, edit_path: str = "/r/src/core/Spectrum.hpp", edit_at: int = T0 + 30 * DAY,
           answer: str = "Release preset is plain Release now, and the default analysis window is 4096 samples.",
           ) -> dict[str, str]:
    out = {"answer": _said(conn, answer, "response", T0)}
    for i in range(8):
        _said(conn, f"unrelated work {i} on the waveform peaks cache", "note", T0 + 10 + i, session="s9")
    out["edit"] = _said(conn, f"Edit {edit_path}", "tool_event", edit_at,
                        _edit(edit_path, "    std::size_t windowSize = 4096;", "    std::size_t windowSize = 8192;"),
                        session="s2")
    return out


QUESTION = "How many samples long is a default analysis frame?"


def test_a_later_edit_of_the_stated_value_outranks_the_answer(conn: sqlite3.Connection) -> None:
    m = _story(conn)
    hits = search(conn, SearchQuery(q=QUESTION, project=P))
    ids = [h.id for h in hits]
    assert ids[:2] == [m["edit"], m["answer"]]
    assert hits[0].via == ["change"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_VALUES", False)
        assert m["edit"] not in [h.id for h in search(conn, SearchQuery(q=QUESTION, project=P))]



def test_the_per_prompt_block_shows_the_later_edit_though_it_holds_no_word_of_the_prompt(
    conn: sqlite3.Connection,
) -> None:
    m = _story(conn)
    text, listed = recall.prompt_block(conn, P, QUESTION)
    assert m["edit"] in listed and "windowSize = 8192" in text
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_VALUES", False)
        text, listed = recall.prompt_block(conn, P, QUESTION)
        assert m["edit"] not in listed and "8192" not in text

@pytest.mark.parametrize("case", ["in tests only", "edited before", "another project"])
def test_what_does_not_retire_the_answer(conn: sqlite3.Connection, case: str) -> None:
    if case == "in tests only":
        m = _story(conn, edit_path="/r/tests/test_spectrum.cpp")
    elif case == "edited before":
        m = _story(conn, edit_at=T0 - DAY)
    else:
        m = _story(conn)
        conn.execute("UPDATE memory SET project = '/repo/other' WHERE id = ?", (m["edit"],))
    ids = [h.id for h in search(conn, SearchQuery(q=QUESTION, project=P))]
    assert ids[0] == m["answer"]
    assert m["edit"] not in ids


def test_a_question_or_a_proposal_retires_nothing(conn: sqlite3.Connection) -> None:
    # No edit made the change: a later prompt asking whether to, or proposing it, is not one.
    answer = _said(conn, "The default analysis window is 4096 samples.", "response", T0)
    _said(conn, "should the default analysis window go from 4096 to 8192 samples? maybe not.", "prompt",
          T0 + DAY, session="s2")
    _said(conn, "Edit /r/notes.md", "tool_event", T0 + 2 * DAY,
          _edit("/r/notes.md", "idea: windowSize could be 4096", "idea: windowSize could be 8192?"), session="s2")
    hits = search(conn, SearchQuery(q="What is the default analysis window in samples?", project=P))
    assert hits[0].id == answer
    assert all(h.via != ["change"] for h in hits)


def test_only_a_value_stated_beside_a_query_word_is_followed() -> None:
    text = "created: Next.js 14.2, TypeScript strict, ESLint, Tailwind. `npm run dev` serves on http://localhost:3000."
    assert not followed.asked_near(text, "3000", {"strict", "typescript", "config"})
    assert followed.asked_near(text, "3000", {"port", "dev", "server"})


def test_an_answer_about_many_things_keeps_its_place_for_another_question(conn: sqlite3.Connection) -> None:
    created = _said(conn, "created: Next.js 14.2, TypeScript strict mode on, ESLint, Tailwind. `npm run dev` "
                          "serves on http://localhost:3000.", "response", T0)
    for i in range(8):
        _said(conn, f"unrelated work {i} on the latency chart", "note", T0 + 10 + i, session="s9")
    edit = _said(conn, "Edit /r/web/server.mjs", "tool_event", T0 + DAY,
                 _edit("/r/web/server.mjs", '    url: "http://localhost:3000",', '    url: "http://localhost:3001",'),
                 session="s2")
    # (before the query-word test, the edit took first place here)
    assert [h.id for h in search(conn, SearchQuery(q="How strict is the TypeScript config?", project=P))][0] == created
    assert [h.id for h in search(conn, SearchQuery(q="Which port does the dev server serve on?", project=P))][:2] \
        == [edit, created]


def test_the_query_is_about_the_value_by_its_key_or_two_words_beside_it() -> None:
    created = "ESLint, npm, Node 20. `npm run dev` serves on http://localhost:3000."
    assert not followed.about(created, "3000", "localhost", {"run", "eslint"})
    assert followed.about(created, "3000", "localhost", {"localhost", "port"})
    assert followed.about(created, "3000", "localhost", {"dev", "serves"})
    bom = "AGP 8.5, the 2024.06 Compose BOM; minSdk 26."
    assert followed.about(bom, "2024.06", "composeBom", {"compose", "bill", "materials", "pinned"})


# --- settings written otherwise than `key = value` at the end of a line --------------------------


def test_a_setting_said_in_backticks_is_followed_however_short() -> None:
    text = "Reminders now go out three days ahead (`@lead_hours 72`); the cut-off is `truncate_m <- 175`, " \
           "on update channel `preview`, 2 tests, 50 %, `src/app.ts`"
    assert followed.stated_values(text) == ["72", "175", "preview"]
    # (the key said with the value counts toward the words beside it: "now" and "out" before it)
    assert followed.asked_near(text, "72", {"reminder", "now", "out", "arrival"}) >= 2


@pytest.mark.parametrize(("path", "old", "new", "replaced"), [
    ("/r/lib/workers/arrival_reminder.ex", "  @lead_hours 48", "  @lead_hours 72", ("lead_hours", "48", "72")),
    ("/r/R/clean.R", "truncate_m <- 150", "truncate_m <- 175", ("truncate_m", "150", "175")),
    ("/r/modules/nix.nix", '    options = "--delete-older-than 30d";', '    options = "--delete-older-than 21d";',
     ("delete-older-than", "30d", "21d")),
    ("/r/eas.json", '    "preview": { "distribution": "internal", "channel": "preview" },',
     '    "preview": { "distribution": "internal", "channel": "beta" },', ("channel", "preview", "beta")),
])
def test_a_diff_changing_one_word_of_a_line_replaces_it_at_the_word_before(
    path: str, old: str, new: str, replaced: tuple[str, str, str],
) -> None:
    assert followed.replaced_at_keys(_edit(path, old, new)) == [replaced]


def test_what_one_changed_word_does_not_replace() -> None:
    # two words changed, a word added, the first word changed, a runtime's own version (a slot
    # ``aletheia.claims`` reads for a version question): nothing
    assert followed.replaced_at_keys(_edit("/r/a.ex", "  @lead_hours 48 # two days", "  @lead_hours 72 # three days")) == []
    assert followed.replaced_at_keys(_edit("/r/a.R", "truncate_m <- 150", "truncate_m <- 150 + 25")) == []
    assert followed.replaced_at_keys(_edit("/r/a.R", "truncate_m <- 150", "cutoff_m <- 150")) == []
    assert followed.replaced_at_keys(_edit("/r/composer.json", '        "php": "^8.2",', '        "php": "^8.3",')) == []


def test_a_word_value_is_followed_only_when_the_query_names_its_key() -> None:
    text = "`preview` (an installable build for the crew, update channel `preview`)"
    assert followed.about(text, "preview", "channel", {"update", "channel", "crew", "builds"})
    assert not followed.about(text, "preview", "channel", {"installable", "build", "crew", "phones"})


def test_a_later_edit_of_an_attribute_outranks_the_answer_that_said_it(conn: sqlite3.Connection) -> None:
    answer = _said(conn, "Reminders now go out three days ahead (`@lead_hours 72`); bookings made later get "
                         "the mail right away.", "response", T0)
    for i in range(8):
        _said(conn, f"unrelated work {i} on the berth overview grid", "note", T0 + 10 + i, session="s9")
    path = "/r/lib/berthwise/workers/arrival_reminder.ex"
    edit = _said(conn, f"Edit {path}", "tool_event", T0 + 30 * DAY,
                 _edit(path, "  @lead_hours 72", "  @lead_hours 24"), session="s2")
    question = "How long before arrival does the reminder go out now?"
    assert [h.id for h in search(conn, SearchQuery(q=question, project=P))][:2] == [edit, answer]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_VALUES", False)
        # (``EDITED_MEASURES`` finds it too: "three days" is 72 at a key naming hours)
        mp.setattr(S, "EDITED_MEASURES", False)
        # (the edit's path holds two of the query's words: found, but below the answer)
        assert [h.id for h in search(conn, SearchQuery(q=question, project=P))][0] == answer
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_VALUES", False)
        assert [h.id for h in search(conn, SearchQuery(q=question, project=P))][:2] == [edit, answer]


# --- a dependency swapped for another in a manifest ---------------------------------------------


@pytest.mark.parametrize(("path", "old", "new", "swapped"), [
    ("/r/mix.exs", '      {:bandit, "~> 1.5"},\n      {:timex, "~> 3.7"}', '      {:bandit, "~> 1.5"},\n      {:tz, "~> 0.28"}',
     [("timex", "tz")]),
    ("/r/app/build.gradle.kts", "    implementation(libs.glide.compose)", "    implementation(libs.coil.compose)",
     [("glide", "coil")]),
    ("/r/gradle/libs.versions.toml", 'glide = "1.0.0-beta01"', 'coil = "2.7.0"', [("glide", "coil")]),
    ("/r/vcpkg.json", '    "catch2",\n    "fftw3"', '    "catch2",\n    "pocketfft"', [("fftw3", "pocketfft")]),
    ("/r/package.json", '"@sveltejs/adapter-auto": "^3.0.0",', '"@sveltejs/adapter-node": "^5.2.0",',
     [("adapter-auto", "adapter-node")]),
    # a line added beside a kept one (its comma changed), a version bumped, a script's command,
    # a file that is no manifest, a test's fixture: no swap
    ("/r/mix.exs", '      {:bandit, "~> 1.5"}', '      {:bandit, "~> 1.5"},\n      {:timex, "~> 3.7"}', []),
    ("/r/mix.exs", '      {:tz, "~> 0.26"}', '      {:tz, "~> 0.28"}', []),
    ("/r/package.json", '"test": "jest"', '"test": "vitest run",', []),
    ("/r/src/app.ts", 'import glide from "glide"', 'import coil from "glide"', []),
    ("/r/tests/fixtures/package.json", '"jest": "^29.0.0"', '"vitest": "^2.1.0"', []),
])
def test_a_dependency_swapped_for_another_in_one_line_of_a_manifest(
    path: str, old: str, new: str, swapped: list[tuple[str, str]],
) -> None:
    assert followed.swapped_names(_edit(path, old, new)) == swapped


def _glide_story(conn: sqlite3.Connection, *, namers: int) -> dict[str, str]:
    out = {"ask": _said(conn, "the plant photos grid stutters; I added Glide in the spike, the photos load slowly",
                        "prompt", T0)}
    if namers > 1:
        out["grep"] = _said(conn, "Bash: $ grep -rn glide app/build.gradle.kts", "tool_event", T0 + 1,
                            'input: {"command": "grep -rn glide app/build.gradle.kts"}\n\noutput:\n'
                            "app/build.gradle.kts:58:    implementation(libs.glide.compose)  // photos loader")
    for i in range(8):
        _said(conn, f"unrelated work {i} on the watering reminders", "note", T0 + 10 + i, session="s9")
    path = "/r/app/build.gradle.kts"
    out["edit"] = _said(conn, f"Edit {path}", "tool_event", T0 + 60_000,
                        _edit(path, "    implementation(libs.glide.compose)", "    implementation(libs.coil.compose)"),
                        session="s2")
    return out


def test_a_later_manifest_swap_goes_above_the_best_answers_naming_the_old_dependency(conn: sqlite3.Connection) -> None:
    m = _glide_story(conn, namers=2)
    question = "Which image loading library shows the plant photos?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == m["edit"]
    assert m["ask"] in hits and m["grep"] in hits  # (a lift only: they stay, below)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "SWAPPED_NAMES", False)
        assert [h.id for h in search(conn, SearchQuery(q=question, project=P))][0] != m["edit"]


def test_one_answer_naming_the_dependency_in_passing_brings_no_swap(conn: sqlite3.Connection) -> None:
    m = _glide_story(conn, namers=1)
    question = "Which image loading library shows the plant photos?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == m["ask"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "SWAPPED_NAMES", False)
        assert [h.id for h in search(conn, SearchQuery(q=question, project=P))] == hits


def test_a_word_start_is_found_as_the_pattern_finds_it() -> None:
    import random
    import re

    # (``_word_starting`` stands for ``re.search(r"\b" + re.escape(start), text)``: the same
    # answer whatever is around the start — letters of other scripts, digits, ², _, marks)
    alphabet = ["a", "b", "ab", "ba", "_", " ", ".", "-", "2", "²", "é", "e\u0301", "ß", "д", "中", "`", "\n"]
    starts = ["a", "ab", "ba", "b", "_a", "2", "²", "é", "д", ".", "-a", " a", "ab_"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        start = rng.choice(starts)
        assert followed._word_starting(text, start) == bool(re.search(r"\b" + re.escape(start), text)), (text, start)


def test_a_stated_place_is_found_as_the_pattern_finds_it() -> None:
    import random

    # (``_stated_spans`` stands for ``_stated_at(value).finditer``: the same spans whatever is
    # around the value — a backtick near or far, a newline between, the value inside a word)
    alphabet = ["4096", "1.2", "dev", "a", "x_y", "-3", "`", "`", " ", ".", "\n", "_", "é", "b", "0", "x" * 20, "`@k "]
    values = ["4096", "1.2", "dev", "a", "x_y", "-3", "2.0.21", "0"]
    rng = random.Random(11)
    for _ in range(3000):
        low = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        value = rng.choice(values)
        assert followed._stated_spans(low, value) == [m.span() for m in followed._stated_at(value).finditer(low)], (
            low, value)


def test_a_key_at_the_end_of_a_line_is_read_as_the_plain_pattern_reads_it() -> None:
    import random
    import re

    # (``_AT_KEY`` starts a key where no letter is before it and reads words whole: the same
    # matches as the pattern tried at every place with backtracking)
    plain = re.compile(r"""(?P<key>[A-Za-z_][\w-]*)["']?\s*(?:=|:)\s*["']?(?P<value>[\w.+-]{1,40})["']?\s*[,;]?\s*"""
                       r"""(?:#.*|//.*)?$""")
    alphabet = ["a", "Z", "_", "9", "-", ".", "+", "=", ":", '"', "'", " ", ",", ";", "#", "/", "é", "ab", "x1", "= ",
                "//", "# ", "v" * 41]
    rng = random.Random(13)
    for _ in range(5000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16)))
        mine, theirs = followed._at_key(line), plain.search(line)
        assert (mine and (mine.span(), mine.group("key"), mine.group("value"))) == \
            (theirs and (theirs.span(), theirs.group("key"), theirs.group("value"))), line


def test_a_later_multi_edit_of_the_stated_value_outranks_the_answer(conn: sqlite3.Connection) -> None:
    answer = _said(conn, "Release preset is plain Release now, and the default analysis window is 4096 samples.",
                   "response", T0)
    path = "/r/src/core/Spectrum.hpp"
    data = {"file_path": path, "edits": [{"old_string": "    std::size_t windowSize = 4096;",
                                          "new_string": "    std::size_t windowSize = 8192;"}]}
    edit = _said(conn, f"MultiEdit {path}", "tool_event", T0 + 30 * DAY,
                 f"input: {json.dumps(data)}\n\noutput:\n{json.dumps({'filePath': path})}", session="s2")
    _said(conn, f"Read {path}", "tool_event", T0 + 31 * DAY, f"input: {json.dumps({'file_path': path})}\n\n"
          "output:\n    std::size_t windowSize = 4096;", session="s3")  # (holds the value: not an edit)
    assert [h.id for h in search(conn, SearchQuery(q=QUESTION, project=P))][:2] == [edit, answer]

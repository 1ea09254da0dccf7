"""The search service: query shaping, filters, fusion, neighbours, dates, and one ranking through
every interface."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia import search as S
from aletheia import store
from aletheia.errors import InvalidInput
from aletheia.facts import FactIn, add_facts
from aletheia.schema import MIGRATIONS
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn

P = "/repo/app"
DAY = 86_400_000
T0 = 1_700_000_000_000


_conn: list[sqlite3.Connection] = []


@pytest.fixture(autouse=True)
def _bind(conn: sqlite3.Connection) -> None:
    _conn[:] = [conn]  # lets ``note`` write to this test's store


def note(title: str, *, project: str = P, when: int = T0, kind: str = "note",
         narrative: str | None = None, session_id: str | None = None, tool: str | None = None,
         scope: str = "project", pinned: bool = False) -> str:
    item = MemoryIn(project=project, kind=kind, title=title, narrative=narrative or title,
                    created_at=when, session_id=session_id, tool=tool, scope=scope, pinned=pinned)
    return store.write_memory(_conn[0], item).id


def ids_of(conn: sqlite3.Connection, q: str, **kw: object) -> list[str]:
    return [h.id for h in search(conn, SearchQuery(q=q, **kw))]  # type: ignore[arg-type]


def filler(n: int, word: str = "service") -> None:
    for i in range(n):
        note(f"{word} restarted after deploy {i}", when=T0 + i)


# --- query shaping -------------------------------------------------------------------------


def test_content_words_drop_stop_words_and_possessives() -> None:
    assert S.content_words("What did Caroline's team do about the flaky tests?") == [
        "caroline", "team", "flaky", "tests"]


def test_a_word_over_the_posting_budget_is_set_aside_while_a_cheaper_one_fits(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "POSTING_BUDGET", 5)
    monkeypatch.setattr(S, "CUT_DEPTH", 4)
    filler(9)
    target = note("service crashed with a segfault in the parser", when=T0 + 100)
    shaped = S.shape_query(conn, SearchQuery(q="service segfault", project=P))
    assert shaped.terms == ["segfault"] and shaped.common == ["servic"]
    assert ids_of(conn, "service segfault", project=P)[0] == target
    # Alone, the word is all there is: it is kept, and only its newest postings are ranked.
    alone = S.shape_query(conn, SearchQuery(q="service", project=P))
    assert alone.terms == ["servic"] and alone.cut
    assert len(ids_of(conn, "service", project=P, limit=20)) == 4
    # With more words, the newest memories holding them together come first.
    crashed = {note(f"service crashed again {i}", when=T0 + 200 + i) for i in range(6)}
    shaped = S.shape_query(conn, SearchQuery(q="service restarted", project=P))
    assert shaped.cut and set(shaped.terms) == {"servic", "restart"}
    assert not crashed & set(ids_of(conn, "service restarted", project=P, limit=4))


def test_a_common_word_still_counts_when_it_fits(conn: sqlite3.Connection) -> None:
    # IDF weighs it down; dropping it lost recall on both halves of LoCoMo.
    filler(9)
    note("service crashed with a segfault in the parser", when=T0 + 100)
    shaped = S.shape_query(conn, SearchQuery(q="service segfault", project=P))
    assert shaped.terms == ["segfault", "servic"] and shaped.common == []


def test_postings_are_counted_in_the_project(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "service" is in 3 memories of P but in 40 of another project.
    monkeypatch.setattr(S, "POSTING_BUDGET", 10)
    filler(2)
    for i in range(40):
        note(f"service unrelated topic number {i}", project="/other", when=T0 + i)
    note("service crashed with a segfault", when=T0 + 50)
    scoped = S.shape_query(conn, SearchQuery(q="service segfault", project=P))
    everywhere = S.shape_query(conn, SearchQuery(q="service segfault"))
    assert scoped.terms == ["segfault", "servic"] and scoped.doc_freq["servic"] == 3
    assert everywhere.terms == ["segfault"] and everywhere.common == ["servic"]


def test_a_scoped_ranking_does_not_depend_on_other_projects(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "POSTING_BUDGET", 20)
    texts = ["deploy failed: the token expired", "rotate the deploy token weekly",
             "token refresh runs in the worker", "deploy script lives in scripts/deploy.sh",
             "the worker retries a failed deploy", "unrelated note about lunch"]
    for i, t in enumerate(texts):
        note(t, when=T0 + i, session_id="s1")
    before = [(h.id, h.score) for h in search(conn, SearchQuery(q="deploy token failed",
                                                                project=P))]
    # Many more memories with the same words in other projects, far over the budget.
    for k in range(6):
        for i, t in enumerate(texts * 2):
            note(f"{t} #{k}-{i}", project=f"/other{k}", when=T0 + 1000 + i)
    after = [(h.id, h.score) for h in search(conn, SearchQuery(q="deploy token failed",
                                                               project=P))]
    assert after == before and len(before) >= 5


def test_at_most_the_twelve_rarest_words(conn: sqlite3.Connection) -> None:
    words = [f"q{i:02d}x" for i in range(16)]
    for i, w in enumerate(words):
        for j in range(i + 1):  # q00x is in 1 memory, q15x in 16
            note(f"{w} entry {j}", when=T0 + i * 100 + j)
    shaped = S.shape_query(conn, SearchQuery(q=" ".join(reversed(words)), project=P))
    assert len(shaped.terms) == S.MAX_TERMS
    assert shaped.terms == [w for w in words[: S.MAX_TERMS]]


def test_stemming_matches_the_index(conn: sqlite3.Connection) -> None:
    target = note("Running the migrations twice corrupts the index")
    assert ids_of(conn, "runs migration", project=P) == [target]
    assert S.stems(conn, ["running", "Café"]) == [["run"], ["cafe"]]


def test_a_stem_the_stemmer_would_change_again_is_asked_as_its_word(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "database" → "databas", which FTS5's porter stemmer turns into "databa" when it reads a
    # MATCH string: the index must be asked for the token it holds, not for that one (nor
    # fall back to the prefix "databas*", which names no concept).
    filler(3)
    for i in range(2):
        note(f"the database is Postgres {i}", when=T0 + 10 + i)
    shaped = S.shape_query(conn, SearchQuery(q="which database", project=P))
    assert shaped.terms == ["databas"] and shaped.doc_freq["databas"] == 2
    monkeypatch.setattr(S, "MATCH_TYPED", False)
    assert S.shape_query(conn, SearchQuery(q="which database", project=P)).terms == ["databas*"]


def test_a_name_a_concept_adds_is_asked_as_its_word_too(conn: sqlite3.Connection) -> None:
    # "supabase", a name the database concept adds, is the token "supabas", which FTS5 would
    # stem again to "supaba": the memory that names it is found through the concept.
    filler(3)
    target = note("we keep the orders in Supabase now", when=T0 + 10)
    shaped = S.shape_query(conn, SearchQuery(q="which database", project=P))
    assert shaped.postings.get("~databas") == [conn.execute(
        "SELECT rowid FROM memory WHERE id = ?", (target,)).fetchone()[0]]


def test_query_syntax_is_never_fts_syntax(conn: sqlite3.Connection) -> None:
    note('a "quoted" NEAR(b c) title with * and ^ and - signs')
    for q in ('"quoted', "NEAR(b c)", "title*", "^title", "-signs", "AND OR NOT", "col:title"):
        search(conn, SearchQuery(q=q, project=P))  # no sqlite3.OperationalError


def test_validation(conn: sqlite3.Connection) -> None:
    for bad in (SearchQuery(q=""), SearchQuery(q="   "), SearchQuery(q="x" * 2001),
                SearchQuery(q="x", limit=0), SearchQuery(q="x", limit=201),
                SearchQuery(q="x", scope="team"), SearchQuery(q="x", since=5, until=5)):
        with pytest.raises(InvalidInput):
            search(conn, bad)
    assert search(conn, SearchQuery(q="the and of")) == []


# --- filters -------------------------------------------------------------------------------


def test_filters_apply_before_ranking(conn: sqlite3.Connection) -> None:
    a = note("deploy pipeline broke", kind="prompt", tool="codex", session_id="s1", when=T0)
    b = note("deploy pipeline fixed", kind="note", tool="claude-code", session_id="s2",
             when=T0 + 5 * DAY, pinned=True)
    other = note("deploy pipeline elsewhere", project="/other")
    assert set(ids_of(conn, "deploy pipeline", project=P)) == {a, b}
    assert set(ids_of(conn, "deploy pipeline")) == {a, b, other}
    assert ids_of(conn, "deploy pipeline", project=P, kind="prompt") == [a]
    assert ids_of(conn, "deploy pipeline", project=P, tool="claude-code") == [b]
    assert ids_of(conn, "deploy pipeline", project=P, session_id="s1") == [a]
    assert ids_of(conn, "deploy pipeline", project=P, since=T0 + DAY) == [b]
    assert ids_of(conn, "deploy pipeline", project=P, until=T0 + DAY) == [a]
    assert ids_of(conn, "deploy pipeline", project=P, pinned=True) == [b]
    assert ids_of(conn, "deploy pipeline", project=P, pinned=False) == [a]


def test_global_memories_reach_every_project(conn: sqlite3.Connection) -> None:
    g = note("prefer ruff over flake8", project="/somewhere", scope="global")
    assert ids_of(conn, "ruff flake8", project=P) == [g]
    assert ids_of(conn, "ruff flake8", project=P, scope="project") == []


def test_dismissed_rows_never_come_back_unless_asked(conn: sqlite3.Connection) -> None:
    keep = note("cache invalidation bug")
    gone = note("cache invalidation fixed")
    conn.execute("UPDATE memory SET dismissed_at = ? WHERE id = ?", (T0, gone))
    assert ids_of(conn, "cache invalidation", project=P) == [keep]
    assert set(ids_of(conn, "cache invalidation", project=P, include_dismissed=True)) == {
        keep, gone}


def test_memory_count_follows_inserts_dismissals_and_deletes(conn: sqlite3.Connection) -> None:
    a = note("one")
    note("two")
    note("three", project="/other")
    size = S._scope_size
    assert size(conn, SearchQuery(q="x", project=P)) == 2
    assert size(conn, SearchQuery(q="x")) == 3
    conn.execute("UPDATE memory SET dismissed_at = 1 WHERE id = ?", (a,))
    assert size(conn, SearchQuery(q="x", project=P)) == 1
    conn.execute("UPDATE memory SET dismissed_at = NULL WHERE id = ?", (a,))
    conn.execute("UPDATE memory SET scope = 'global' WHERE id = ?", (a,))
    assert size(conn, SearchQuery(q="x", project="/other")) == 2
    conn.execute("DELETE FROM memory WHERE id = ?", (a,))
    assert size(conn, SearchQuery(q="x")) == 2


# --- ranking -------------------------------------------------------------------------------


def test_facts_and_memories_are_one_ranking_by_score(conn: sqlite3.Connection) -> None:
    m = note("parametrize the table of cases")
    added = add_facts(conn, [FactIn(project=P, text="Use pytest parametrize for table tests.",
                                    source_ids=[m], confidence=0.8, extractor="model")])
    hits = search(conn, SearchQuery(q="parametrize table tests", project=P))
    # The fact holding every word comes first, then the memory it came from (two of three).
    assert [h.type for h in hits] == ["fact", "memory"]
    assert hits[0].id == added.added[0] and hits[0].source_ids == [m]
    assert hits[0].score == pytest.approx(S.MEMORY_WEIGHT / (S.RRF_K + 1), abs=1e-6)
    assert [h.type for h in search(conn, SearchQuery(q="parametrize", project=P,
                                                     include_facts=False))] == ["memory"]


def test_a_fact_holding_one_query_word_does_not_outrank_memories_holding_all(
    conn: sqlite3.Connection,
) -> None:
    # Fused by rank, facts took the first places whatever they held (a fact naming a
    # dependency came before the memory that answers a question about retried deliveries).
    answers = [note(f"stripe retried delivery applied twice: dedupe by event id {i}",
                    when=T0 + i) for i in range(3)]
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i)
    add_facts(conn, [FactIn(project=P, text=f"Dependency: stripe {v}.") for v in ("7", "8")])
    hits = search(conn, SearchQuery(q="retried stripe delivery applied twice", project=P))
    assert {h.id for h in hits[:3]} == set(answers)
    assert [h.type for h in hits[3:5]] == ["fact", "fact"]


def test_a_summary_gets_no_bonus_for_holding_many_query_words(
    conn: sqlite3.Connection,
) -> None:
    # A session summary holds the words of a whole session: several words of many questions.
    summary = note("Session summary", kind="summary", narrative=(
        "Raised the export pool; the nightly cron moved to 02:00; the webhook timeout is "
        "30 s; " + "reviewed the dashboards and the alert rules with the team " * 2))
    answer = note("export timeout: raised the pool size to 20")
    for i in range(10):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i)
    assert ids_of(conn, "why did the nightly export time out", project=P)[:2] == [answer, summary]


def test_the_evidence_of_a_superseded_fact_ranks_below_the_current_one(
    conn: sqlite3.Connection,
) -> None:
    # The old memory is the better keyword match (shorter); a later session changed the
    # choice and the worker's facts record it (the old fact superseded by the new one).
    old = note("poetry manages the dependencies", session_id="s1", when=T0)
    new = note("uv manages the dependencies from this week on", session_id="s2",
               when=T0 + 86_400_000)
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i)
    question = "which tool manages the dependencies, poetry or uv"
    assert ids_of(conn, question, project=P, include_facts=False)[:2] == [old, new]
    add_facts(conn, [FactIn(project=P, text="Package manager: poetry.", source_ids=[old],
                            subject="tool:package-manager", value="poetry", observed_at=T0)])
    added = add_facts(conn, [FactIn(project=P, text="Package manager: uv.", source_ids=[new],
                                    subject="tool:package-manager", value="uv",
                                    observed_at=T0 + 86_400_000)])
    assert added.superseded  # (the slot's old value is kept, superseded)
    memories = [i for i in ids_of(conn, question, project=P) if i in (old, new)]
    assert memories == [new, old]  # the old answer stays findable, below the new one


def test_the_evidence_of_the_fact_that_superseded_a_match_ranks_above_it(
    conn: sqlite3.Connection,
) -> None:
    # The new memory holds fewer of the question's words than the old one (at 0.4 of its
    # score): demoting the old evidence alone leaves it above; the successor takes its standing.
    # (Far below — a quarter of the old one's score — the change would not count: see
    # test_a_question_about_the_old_state_keeps_its_answer.)
    old = note("poetry manages the python dependencies", session_id="s1", when=T0)
    new = note("python dependencies: uv from today, the lock file too",
               session_id="s2", when=T0 + 86_400_000)
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i)
    add_facts(conn, [FactIn(project=P, text="Package manager: poetry (python dependencies).",
                            source_ids=[old], subject="tool:package-manager", value="poetry",
                            observed_at=T0)])
    add_facts(conn, [FactIn(project=P, text="Package manager: uv.", source_ids=[new],
                            subject="tool:package-manager", value="uv",
                            observed_at=T0 + 86_400_000)])
    question = "what manages the python dependencies"
    memories = [i for i in ids_of(conn, question, project=P) if i in (old, new)]
    assert memories == [new, old]


def _jwt_sessions(conn: sqlite3.Connection, *, compress: bool = True) -> dict[str, str]:
    """Two sessions a month apart, compressed by the real worker (offline) unless told not to:
    the first chose HS256 (a prompt, the settings edit, the answer), the second moved the tokens
    to RS256."""
    from aletheia.tasks.compress import JobRunner, drain

    def said(title: str, kind: str, session: str, at: int, narrative: str | None = None) -> str:
        return store.write_memory(conn, MemoryIn(
            project=P, kind=kind, title=title, narrative=narrative or title, created_at=at,
            session_id=session)).id

    later = T0 + 30 * DAY
    out = {
        "asked": said("Auth next: users log in and get a JWT access token. Sign the tokens with "
                      "HS256 and a secret from JWT_SECRET; they expire after 15 minutes.",
                      "prompt", "s1", T0),
        "edit": said("Edit src/app/settings.py", "tool", "s1", T0 + 1000,
                     'jwt_algorithm: str = "HS256"\njwt_secret: str\naccess_token_minutes: int = 15'),
        "done": said("Done: access tokens are signed with HS256 and expire after 15 minutes.",
                     "response", "s1", T0 + 2000),
        "change": said("The mobile app must verify our access tokens itself. Switch the JWT "
                       "algorithm from HS256 to RS256 and publish the public key.",
                       "prompt", "s2", later),
    }
    for i in range(8):
        said(f"unrelated work {i} on the invoice list", "note", "s9", T0 + 10 + i)
    if compress:
        for session in ("s1", "s2"):
            store.queue_stop(conn, session, P, "claude-code")
        assert drain(conn, JobRunner(use_provider=False)).done == 2
    return out


def test_a_later_change_outranks_the_older_sessions_statement_of_the_old_value(
    conn: sqlite3.Connection,
) -> None:
    # Before the worker runs, the first session's memories hold more of the question's words.
    m = _jwt_sessions(conn)
    before = search(conn, SearchQuery(q="Which JWT algorithm do our access tokens use?",
                                      project=P, include_facts=False))
    assert [h.id for h in before].index(m["change"]) > [h.id for h in before].index(m["edit"])
    # The worker recorded the change (`HS256` was replaced, by the second session's prompt):
    # every memory older than it that names HS256 is the old answer, the change ranks above
    # them all, and the old answer stays findable below it.
    assert conn.execute("SELECT count(*) FROM fact WHERE subject = 'replaced:hs256'").fetchone()[0] == 1
    hits = [h.id for h in search(conn, SearchQuery(
        q="Which JWT algorithm do our access tokens use?", project=P))]
    assert hits[0] == m["change"]
    assert {m["asked"], m["edit"], m["done"]} <= set(hits[1:])


def test_before_the_worker_runs_a_change_the_newer_session_states_outranks_the_old_value(
    conn: sqlite3.Connection,
) -> None:
    # No facts yet: the second session's prompt says what it changed ("from HS256 to RS256"),
    # read at query time the way the worker reads it, and the first session's memories naming
    # HS256 rank below it.
    m = _jwt_sessions(conn, compress=False)
    assert conn.execute("SELECT count(*) FROM fact").fetchone()[0] == 0
    question = "Which JWT algorithm do our access tokens use?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == m["change"]
    assert {m["asked"], m["edit"], m["done"]} <= set(hits[1:])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "STATED_CHANGES", False)
        plain = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert plain.index(m["change"]) > plain.index(m["edit"])


def test_a_question_about_the_old_state_keeps_its_answer(conn: sqlite3.Connection) -> None:
    # The change scores far below the old answer for a question about the settings of that
    # time: it is not lifted over it, nor is the old answer demoted.
    m = _jwt_sessions(conn)
    hits = [h.id for h in search(conn, SearchQuery(
        q="where are jwt_secret and access_token_minutes set", project=P))]
    assert hits[0] == m["edit"]


def _retry_answers() -> dict[str, str]:
    """Two sessions' answers on one subject: the first says it in full, the later says it
    anew with a change's words and no old value a change statement could name."""
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i, session_id="s9")
    return {
        "older": note("Uploads retry three times and wait a fixed pause between attempts: an upload "
                      "attempt that fails waits, then retries.", kind="response", session_id="s1"),
        "later": note("Upload retries now wait with exponential backoff between attempts, with "
                      "jitter; the progress bar shows the time left, and the user can "
                      "cancel from the tray menu at any point.", kind="response", session_id="s2",
                      when=T0 + 30 * DAY),
    }


def test_a_later_answer_saying_the_subject_anew_outranks_the_older_one(conn: sqlite3.Connection) -> None:
    # The older answer holds the question's words more often, so it scores higher; the later
    # one holds every word the older holds and says them with "now": it is the current answer.
    m = _retry_answers()
    question = "How do upload retries wait between attempts?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "SAID_SINCE", False)
        plain = ids_of(conn, question, project=P)
    assert plain.index(m["older"]) < plain.index(m["later"])
    hits = ids_of(conn, question, project=P)
    assert hits.index(m["later"]) < hits.index(m["older"])  # (and the older stays findable)


def test_the_older_answers_subject_is_its_sentence_naming_the_most_query_words(conn: sqlite3.Connection) -> None:
    # The older answer names the subject in one sentence and another query word ("library") in
    # a sentence about something else; the later one says the subject anew with "now" but not
    # that word: it is still the current answer.
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i, session_id="s9")
    older = note("Passes are now written to the phone when fetched (`src/storage/passCache.ts`, on the "
                 "async key-value store) and cached passes are read from there. The QR test failed first "
                 "because the QR library ships untranspiled modules; the passes cache test passes.",
                 kind="response", session_id="s1")
    later = note("The pass cache is now on a synchronous native store (`src/storage/passCache.ts`): "
                 "reading the passes went from 600 ms to 3 ms.", kind="response", session_id="s2",
                 when=T0 + 30 * DAY)
    question = "Which storage library keeps the cached passes?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "SAID_SINCE_SENTENCE", False)
        plain = ids_of(conn, question, project=P)
    assert plain.index(older) < plain.index(later)
    hits = ids_of(conn, question, project=P)
    assert hits.index(later) < hits.index(older)


def _revert_answers(back: str = "Back to") -> dict[str, str]:
    """A → B → A: the first answer moved off a single static binary (B), the later one says the
    project went back to it, in fewer of the question's words."""
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i, session_id="s9")
    return {
        "older": note("The rain gauge's reed switch is read through libgpiod (edge events on line 17). It "
                      "isn't a single static binary any more: it links libgpiod dynamically.",
                      kind="response", session_id="s1"),
        "later": note(f"{back} one static binary: the rain gauge is read from the GPIO character device with "
                      "ioctls, and the build cross-compiles for musl.", kind="response", session_id="s2",
                      when=T0 + 30 * DAY),
    }


@pytest.mark.parametrize("back", ["Back to", "We REVERTED TO"])
def test_a_later_answer_going_back_to_a_state_the_older_left_outranks_it(conn: sqlite3.Connection, back: str) -> None:
    m = _revert_answers(back)
    question = "How is the rain gauge's reed switch read?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "REVERTED", False)
        plain = ids_of(conn, question, project=P)
    assert plain.index(m["older"]) < plain.index(m["later"])
    hits = ids_of(conn, question, project=P)
    assert hits.index(m["later"]) < hits.index(m["older"])  # (and the older stays findable)
    # a question about the earlier time keeps its ranking
    past = "How was the rain gauge's reed switch read at first?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "REVERTED", False)
        plain = ids_of(conn, past, project=P)
    assert ids_of(conn, past, project=P) == plain


def test_going_back_to_a_state_no_older_answer_left_lifts_nothing(conn: sqlite3.Connection) -> None:
    for i in range(8):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i, session_id="s9")
    older = note("The rain gauge is read through libgpiod: the reed switch of the rain gauge fires edge "
                 "events on line 17, and the binary links libgpiod dynamically.", kind="response", session_id="s1")
    later = note("Back to the dashboard: the gauge now shows on the bar's screen.", kind="response",
                 session_id="s2", when=T0 + 30 * DAY)
    hits = ids_of(conn, "How is the rain gauge's reed switch read?", project=P)
    assert hits.index(older) < hits.index(later)


def test_a_question_why_keeps_the_ranking_of_its_time(conn: sqlite3.Connection) -> None:
    _retry_answers()
    question = "Why do upload retries wait between attempts?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "SAID_SINCE", False)
        plain = ids_of(conn, question, project=P)
    assert ids_of(conn, question, project=P) == plain


def test_a_later_answer_holding_fewer_of_the_subject_words_is_not_lifted(conn: sqlite3.Connection) -> None:
    m = _retry_answers()
    bucket = note("Uploads now go to the new bucket, and attempts are counted.", kind="response",
                  session_id="s3", when=T0 + 40 * DAY)
    hits = ids_of(conn, "How do upload retries wait between attempts?", project=P)
    assert hits.index(m["older"]) < hits.index(bucket)


def test_a_neighbour_in_the_session_comes_along(conn: sqlite3.Connection) -> None:
    ask = note("why does the nightly export time out?", session_id="s", when=T0)
    answer = note("raised the pool size to 20; it finishes now", session_id="s", when=T0 + 1)
    note("unrelated chatter", session_id="s", when=T0 + 2)
    hits = search(conn, SearchQuery(q="nightly export timeout", project=P))
    assert [h.id for h in hits][:2] == [ask, answer]
    assert hits[1].via == ["neighbour"]


def test_the_answer_is_a_neighbour_of_its_prompt_across_the_tool_calls_between(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    ask = note("why does the nightly export time out?", kind="prompt", session_id="s", when=T0)
    for i in range(3):
        note(f"Bash: $ tail -n 50 logs/worker-{i}.log", kind="tool_event", session_id="s",
             when=T0 + 1 + i)
    answer = note("raised the pool size to 20; it finishes now", kind="response",
                  session_id="s", when=T0 + 10)
    hits = search(conn, SearchQuery(q="nightly export timeout", project=P))
    assert [h.id for h in hits][:2] == [ask, answer]
    assert hits[1].via == ["neighbour"]
    # Counted over every kind, the prompt's neighbours were its own tool calls.
    monkeypatch.setattr(S, "NEIGHBOURS_AMONG_TALK", False)
    assert answer not in ids_of(conn, "nightly export timeout", project=P)


def test_a_question_for_an_observed_value_lifts_the_tool_output_beside_its_prompt(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "TOOL_NEIGHBOURS_GAIN", True)  # (off by default; the switch's reading)
    note("check how big the release bundle is", kind="prompt", session_id="s", when=T0)
    out = note("Bash: $ du -h dist/app.aab\n41M dist/app.aab", kind="tool_event",
               session_id="s", when=T0 + 1)
    assert out in ids_of(conn, "How big is the release bundle?", project=P)
    # Not for other questions: a tool event there is nobody's neighbour.
    assert out not in ids_of(conn, "Why do we check the bundle?", project=P)
    monkeypatch.setattr(S, "TOOL_NEIGHBOURS_GAIN", False)
    assert out not in ids_of(conn, "How big is the release bundle?", project=P)


def test_a_question_for_a_measured_value_is_answered_by_the_run_not_the_talk_around_it(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    ask = note("the numbered migration files keep colliding, switch the schema tool to atlas",
               kind="prompt", session_id="s", when=T0)
    run = note("Bash: $ atlas migrate import --from file://db/migrations", kind="tool_event",
               session_id="s", when=T0 + 1,
               narrative='input: {"command": "atlas migrate import --from file://db/migrations"}'
                         "\n\noutput:\nImporting 7 migration files\nDone")
    answer = note("Done: atlas owns the schema now", kind="response", session_id="s", when=T0 + 2)
    for i in range(8):
        note(f"unrelated work {i} on the locker api", when=T0 + 10 + i)
    how_many = "How many migration files were there when we switched schema tools?"
    assert ids_of(conn, how_many, project=P) == [ask, run, answer]
    # A count or a total asked for is such a value; in a question asking why, it names a topic.
    count = "What was the migration file count when we switched schema tools?"
    assert ids_of(conn, count, project=P) == [ask, run, answer]
    why = "Why did the migration file count make us switch schema tools?"
    assert ids_of(conn, why, project=P) == [ask, answer, run]
    # Other questions: the answer gains from its prompt as before.
    assert ids_of(conn, "Why did we switch schema tools?", project=P) == [ask, answer, run]
    monkeypatch.setattr(S, "OBSERVED_NEIGHBOURS", 1.0)
    assert ids_of(conn, how_many, project=P) == [ask, answer, run]
    monkeypatch.setattr(S, "OBSERVED_NEIGHBOURS", 0.0)  # (the default)
    # Where no tool output is kept, the talk is all there is to answer from: the gain stays.
    talk = "/repo/talk"
    note("the numbered migration files keep colliding, switch the schema tool to atlas",
         kind="prompt", session_id="t", when=T0, project=talk)
    reply = note("Done, all in one place now", kind="response", session_id="t", when=T0 + 2,
                 project=talk)
    hits = search(conn, SearchQuery(q=how_many, project=talk))
    assert [(h.id, h.via) for h in hits][1:] == [(reply, ["neighbour"])]


def test_neighbours_never_displace_a_matching_memory(conn: sqlite3.Connection) -> None:
    # One strong match whose session neighbours hold no query word, and more weak matches
    # (long memories, the word once) than the page holds: every slot goes to a match.
    strong = note("nightly export timeout", session_id="s", when=T0 + 10)
    for i in range(4):
        note(f"chatter {i} about lunch", session_id="s", when=T0 + 10 + (i + 1) * (-1) ** i)
    weak = [note(f"the nightly job {i} " + "with a great deal of other words in it " * 8,
                 session_id=f"w{i}", when=T0 + 100 + i) for i in range(6)]
    full = search(conn, SearchQuery(q="nightly export timeout", project=P, limit=20))
    assert any(h.via == ["neighbour"] for h in full)  # they do come along…
    for limit in (1, 3, 5, 7):
        page = search(conn, SearchQuery(q="nightly export timeout", project=P, limit=limit))
        assert page[0].id == strong
        assert all(h.via != ["neighbour"] for h in page)  # …but never in a match's place
        assert {h.id for h in page} <= {strong, *weak}
    # With room left, they fill it after every match, and every interface says why.
    assert [h.via == ["neighbour"] for h in full] == sorted(h.via == ["neighbour"] for h in full)


def test_interfaces_mark_a_neighbour(conn: sqlite3.Connection) -> None:
    from aletheia.cli import cli
    from aletheia.web.mcp_server import search_index

    note("why does the nightly export time out?", session_id="s", when=T0)
    answer = note("raised the pool size to 20; it finishes now", session_id="s", when=T0 + 1)
    hits = search(conn, SearchQuery(q="nightly export timeout", project=P))
    assert hits[1].id == answer and hits[1].via == ["neighbour"]
    out = CliRunner().invoke(cli, ["search", "nightly", "export", "timeout", "--project", P],
                             catch_exceptions=False).output
    line = next(x for x in out.splitlines() if x.startswith(answer))
    assert S.NEIGHBOUR_NOTE in line
    assert all(S.NEIGHBOUR_NOTE not in x for x in out.splitlines() if not x.startswith(answer))
    text = search_index("nightly export timeout", P, hits)
    assert S.NEIGHBOUR_NOTE in next(x for x in text.splitlines() if x.startswith(answer))


def test_dates_in_the_query_prefer_memories_of_that_time(conn: sqlite3.Connection) -> None:
    may = 1_683_000_000_000  # 2023-05-02
    old = note("went to the climbing gym", when=may - 400 * DAY)
    new = note("went to the climbing gym again", when=may)
    assert ids_of(conn, "climbing gym in May 2023", project=P)[0] == new
    assert ids_of(conn, "climbing gym in 2022", project=P)[0] == old
    windows = S.date_windows("on 31 October, 2022 and 2023-05-07 and June 2021")
    assert len(windows) == 3 and all(a < b for a, b in windows)


def test_results_are_deterministic_and_carry_snippets(conn: sqlite3.Connection) -> None:
    for i in range(6):
        note(f"retry budget exhausted in worker {i}", narrative=f"log line {i}: retry budget "
             "exhausted while the worker drained the queue", when=T0)
    first = search(conn, SearchQuery(q="retry budget worker", project=P))
    assert [h.id for h in first] == [h.id for h in search(conn, SearchQuery(
        q="retry budget worker", project=P))]
    for h in first:  # marked by position: the snippet is the stored text as it is
        assert "[" not in h.snippet and h.marks
        assert {"retry", "budget", "worker"} <= set(h.matched())
    assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)


def test_marks_are_positions_so_brackets_in_stored_text_stay_text(conn: sqlite3.Connection) -> None:
    text = ("🚀 pyproject: [tool.ruff] line-length = 100, [redacted:github-token] in CI; "
            "Ruff's formatter replaced black")
    mid = note("Linting setup", narrative=text)
    add_facts(conn, [FactIn(project=P, text="Lint with ruff check [tool.ruff] holds the rules")])
    hits = {h.type: h for h in search(conn, SearchQuery(q="ruff formatter", project=P))}
    memory, fact = hits["memory"], hits["fact"]
    assert memory.id == mid and memory.snippet.startswith("🚀 pyproject: [tool.ruff]")
    marked = [memory.snippet[s:e] for s, e in memory.marks]
    assert marked == ["ruff", "Ruff", "formatter"]  # code points: the emoji counts one
    assert memory.matched() == ["ruff", "formatter"]
    assert "[redacted:github-token]" in memory.snippet and "redacted" not in marked
    assert [fact.snippet[s:e] for s, e in fact.marks] == ["ruff", "ruff"]
    assert memory.to_dict()["marks"] == memory.marks
    # A long narrative: the snippet starts with "…", and the marks still land on the words.
    long = note("Deploy notes", narrative="filler " * 60 + "the [staging] deploy failed at night")
    hit = next(h for h in search(conn, SearchQuery(q="staging deploy", project=P)) if h.id == long)
    assert hit.snippet.startswith("…") and "[staging]" in hit.snippet
    assert [hit.snippet[s:e] for s, e in hit.marks] == ["staging", "deploy"]


def test_a_snippets_marks_are_those_its_tokens_hold_one_by_one() -> None:
    import random

    # (``_snippet`` finds the marks of the tokens it shows in one pass: the same marks, moved to
    # the snippet's positions, as reading each token alone)
    shaped = S.Shaped(["retri", "budget", "work"], ["the"], {}, 1,
                      {"retri": "retry", "budget": "budget", "work": "worker", "the": "the"})
    matcher = S._Matcher(shaped)
    assert matcher.pattern is not None
    vocabulary = ["retry", "Retries", "budget", "worker", "workers", "the", "then", "x", "é", "🚀", "[retry]",
                  "re-try", "budget-worker", "\n", "filler"]
    rng = random.Random(19)
    for _ in range(400):
        text = "".join(rng.choice(vocabulary) + rng.choice([" ", "  ", "\n", "\t"]) for _ in range(rng.randint(0, 140)))
        low = text.lower()
        first = matcher.pattern.search(low)
        if first is None or len(low) != len(text):
            continue
        toks = list(S._TOKEN.finditer(text, max(0, first.start() - 80), first.start() + 400))
        at = next((i for i, t in enumerate(toks) if t.end() > first.start()), 0)
        start = max(0, at - 3)
        pos = 1 if toks and toks[start].start() > 0 else 0
        expected: list[list[int]] = []
        for t in toks[start:start + S.SNIPPET_WORDS]:
            expected += S._marks(low, matcher.pattern, t.start(), t.end(), pos - t.start())
            pos += len(t.group()) + 1
        snippet, marks = S._snippet(text, matcher)
        assert marks == expected, text
        assert all(snippet[a:b].lower().startswith(("retr", "budget", "work", "the")) for a, b in marks)


# --- one ranking through every interface -----------------------------------------------------


def test_cli_json_gives_the_service_ranking(conn: sqlite3.Connection) -> None:
    from aletheia.cli import cli

    for i in range(12):
        note(f"timeout in the payment webhook handler {i}", session_id=f"s{i % 3}",
             when=T0 + i, narrative=f"webhook {i} retried {i} times before the timeout")
    add_facts(conn, [FactIn(project=P, text="Payment webhooks time out after 30 s.",
                            confidence=0.7, extractor="model")])
    runner = CliRunner()
    for args, query in (
        (["webhook", "timeout"], SearchQuery(q="webhook timeout", project=P)),
        (["payment", "handler", "--session", "s1", "-n", "3"],
         SearchQuery(q="payment handler", project=P, session_id="s1", limit=3)),
        (["webhook", "--no-facts", "--kind", "note"],
         SearchQuery(q="webhook", project=P, include_facts=False, kind="note")),
    ):
        result = runner.invoke(cli, ["search", *args, "--project", P, "--json"],
                               catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert [h["id"] for h in json.loads(result.output)] == [
            h.id for h in search(conn, query)]


def test_cli_rejects_a_bad_time_in_one_line() -> None:
    from aletheia.cli import cli

    result = CliRunner().invoke(cli, ["search", "x", "-p", P, "--since", "soon"])
    assert result.exit_code == 1 and "is not a time" in result.output


def test_every_interface_gives_the_same_ranked_ids(conn: sqlite3.Connection) -> None:
    """The service, the CLI (--json), REST /v1/search and the MCP `search` tool, side by side."""
    import asyncio

    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from aletheia.cli import cli
    from aletheia.web.app import create_app
    from aletheia.web.mcp_server import build_server

    for i in range(15):
        note(f"flaky upload test {i} fails on slow disks", session_id=f"s{i % 4}", when=T0 + i,
             narrative=f"upload retry {i}: the disk was slow, the test timed out after {i} s")
    add_facts(conn, [FactIn(project=P, text="The upload test needs a fast disk.",
                            confidence=0.7, extractor="model")])
    cases: list[tuple[str, dict[str, Any]]] = [
        ("upload test slow disk", {}), ("timed out", {"kind": "note"}),
        ("upload", {"session_id": "s2"}), ("slow disk", {"semantic": False}),
        ("slow disk", {"semantic": True}),  # without the extra: the keyword ranking, everywhere
    ]
    import threading

    from aletheia import db

    local = threading.local()  # MCP runs sync tools on worker threads: a connection each

    def thread_conn() -> sqlite3.Connection:
        if not hasattr(local, "conn"):
            local.conn = db.connect()
        c: sqlite3.Connection = local.conn
        return c

    server = build_server(thread_conn, default_project=None)
    app = create_app(token=None, mcp=False, dashboard=False)
    with TestClient(app, base_url="http://127.0.0.1:8377") as client:
        for text, extra in cases:
            service = ids_of(conn, text, project=P, **extra)
            assert service
            flags = [("--semantic" if v else "--keyword") if k == "semantic"
                     else f"--{k.replace('_id', '').replace('_', '-')}={v}" for k, v in extra.items()]
            cli_out = CliRunner().invoke(cli, ["search", text, "-p", P, "--json", *flags],
                                         catch_exceptions=False)
            params = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in extra.items()}
            rest = client.get("/v1/search", params={"q": text, "project": P, **params})
            assert rest.status_code == 200, rest.text
            result = asyncio.run(server.call_tool("search", {"query": text, "project": P,
                                                             **extra}))
            mcp = result.structured_content["result"]  # type: ignore[union-attr]
            assert [h["id"] for h in json.loads(cli_out.output)] == service
            assert [h["id"] for h in rest.json()["items"]] == service
            assert [h["id"] for h in mcp] == service


def test_timeline_by_anchor_or_time_and_get_observations(conn: sqlite3.Connection) -> None:
    from aletheia.cli import cli
    from aletheia.memories import get_observations, timeline

    made = [note(f"step {i}", session_id="s1" if i % 2 == 0 else "s2", when=T0 + i * 1000)
            for i in range(10)]
    s1 = made[0::2]
    around = timeline(conn, s1[2], before=1, after=1)
    assert [r["id"] for r in around] == s1[1:4]  # its own session only
    by_time = timeline(conn, None, at=T0 + 4500, project=P, before=2, after=2)
    assert [r["id"] for r in by_time] == made[3:7]  # the whole project around that time
    full = get_observations(conn, [made[5], made[1]])
    assert [r["id"] for r in full] == [made[5], made[1]] and full[0]["narrative"] == "step 5"
    runner = CliRunner()
    out = runner.invoke(cli, ["timeline", s1[2], "--before", "1", "--after", "1", "--json"],
                        catch_exceptions=False)
    assert [r["id"] for r in json.loads(out.output)] == s1[1:4]
    out = runner.invoke(cli, ["timeline", "--at", str(T0 + 4500), "-p", P, "--before", "2",
                              "--after", "2", "--json"], catch_exceptions=False)
    assert [r["id"] for r in json.loads(out.output)] == made[3:7]
    missing = runner.invoke(cli, ["get", "01NOPE"])
    assert missing.exit_code == 1 and "no memory" in missing.output
    assert runner.invoke(cli, ["timeline"]).exit_code == 1


def test_migration_3_counts_the_memories_already_stored(tmp_path: object) -> None:
    from pathlib import Path

    from aletheia import db
    from tests.oldstore import make_store_at

    path = Path(str(tmp_path)) / "old.db"
    raw = make_store_at(path, 2)
    for i, project in enumerate(["/a", "/a", "/b"]):
        raw.execute("INSERT INTO memory (id, project, kind, title, created_at, source, "
                    "content_hash) VALUES (?, ?, 'note', 'old note', 1, 'cli', ?)",
                    (f"id{i}", project, f"h{i}"))
    raw.execute("UPDATE memory SET dismissed_at = 5 WHERE id = 'id1'")
    raw.close()
    conn = db.connect(path)
    try:
        counts = dict(conn.execute("SELECT project, n FROM memory_count").fetchall())
        assert counts == {"/a": 1, "/b": 1}
        assert [h.id for h in search(conn, SearchQuery(q="old note", project="/a"))] == ["id0"]
    finally:
        conn.close()


def test_migration_4_reindexes_old_memories_with_their_scope(tmp_path: object) -> None:
    from pathlib import Path

    from aletheia import db
    from tests.oldstore import make_store_at

    path = Path(str(tmp_path)) / "v3.db"
    raw = make_store_at(path, 3)
    for i, project in enumerate(["/a", "/b", "/b"]):
        raw.execute("INSERT INTO memory (id, project, kind, title, created_at, source, "
                    "content_hash) VALUES (?, ?, 'note', 'flaky deploy', 1, 'cli', ?)",
                    (f"id{i}", project, f"h{i}"))
    raw.execute("UPDATE memory SET scope = 'global' WHERE id = 'id2'")
    raw.close()
    conn = db.connect(path)
    try:
        assert db.schema_version(conn) == max(MIGRATIONS)
        conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
        assert ids_of(conn, "flaky deploy", project="/a") == ["id0", "id2"]
        assert ids_of(conn, "flaky deploy", project="/b", scope="project") == ["id1"]
        assert sorted(ids_of(conn, "flaky deploy")) == ["id0", "id1", "id2"]
    finally:
        conn.close()


def test_moving_or_promoting_a_memory_moves_it_in_the_index(conn: sqlite3.Connection) -> None:
    # The project filter runs inside FTS5 (a scope token per memory): it must follow updates.
    a = note("rotate the signing keys", project="/one")
    assert ids_of(conn, "signing keys", project="/two") == []
    conn.execute("UPDATE memory SET project = '/two' WHERE id = ?", (a,))
    assert ids_of(conn, "signing keys", project="/two") == [a]
    assert ids_of(conn, "signing keys", project="/one") == []
    conn.execute("UPDATE memory SET scope = 'global' WHERE id = ?", (a,))
    assert ids_of(conn, "signing keys", project="/one") == [a]
    conn.execute("UPDATE memory SET scope = 'project' WHERE id = ?", (a,))
    assert ids_of(conn, "signing keys", project="/one") == []
    conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")


@pytest.mark.parametrize("project", ["/home/ana/código", "/tmp/a b/\"quoted\"", "C:\\work\\x", "p" * 300])
def test_any_project_name_scopes_exactly(conn: sqlite3.Connection, project: str) -> None:
    mine = note("refresh the token cache", project=project)
    note("refresh the token cache", project=project + "-other")
    assert ids_of(conn, "token cache", project=project) == [mine]


# --- prefixes and identifiers ----------------------------------------------------------------


def test_prefix_queries_and_search_as_you_type(conn: sqlite3.Connection) -> None:
    forms = [note("we deploy on fridays"), note("deployed the hotfix"),
             note("the deployment pipeline is green")]
    note("nothing to see here")
    for q in ("deplo*", "deplo", "deploy*", "DEPLO*", "depl"):
        assert set(ids_of(conn, q, project=P)) == set(forms), q
    # A word that is found as typed is not widened: "deploy" finds its own forms.
    assert set(ids_of(conn, "deploy", project=P)) == set(forms[:2])
    # A token's start finds the token (build ids, key ids, hashes).
    build = note("artifact BLD7QX93ZK uploaded to the bucket")
    assert ids_of(conn, "BLD7", project=P) == [build]
    assert ids_of(conn, "bld7qx*", project=P) == [build]
    # Too short to mean anything as a prefix: no error, no flood.
    assert ids_of(conn, "x*", project=P) == []
    assert S._fts_term("deplo*") == '"deplo"*'


def test_code_identifiers_are_found_by_their_parts_and_whole(conn: sqlite3.Connection) -> None:
    err = note("aws s3 ls failed", narrative="botocore.exceptions.ClientError: An error "
               "occurred (InvalidAccessKeyId) when calling the ListBuckets operation")
    other = note("rotated the access token for the key vault")
    for q in ("InvalidAccessKeyId", "invalid access key", "invalid access key id"):
        assert ids_of(conn, q, project=P)[0] == err, q
    assert set(ids_of(conn, "access key", project=P)) == {err, other}
    snake = note("def shape_query(conn, query): keeps the rarest words")
    for q in ("shape_query", "shapequery", "shape query", "search.shape_query"):
        assert ids_of(conn, q, project=P)[0] == snake, q
    camel = note("HTTPServerError raised by parseJSON in api/client.ts")
    for q in ("server error", "parse json", "parseJSON", "client.ts"):
        assert ids_of(conn, q, project=P)[0] == camel, q
    no_verify = note("git commit --no-verify skips the pre-commit hooks")
    note("git verify-pack checks the verify step of the pack")
    assert ids_of(conn, "--no-verify", project=P)[0] == no_verify
    assert ids_of(conn, "commit no-verify", project=P)[0] == no_verify


def test_an_address_is_found_as_an_ip_and_a_numbered_host_by_its_name(
        conn: sqlite3.Connection) -> None:
    # An Edit of an inventory as the hook records it: the old and new lines in JSON strings.
    inv = note("Edit inventory/hosts.yml", narrative=json.dumps(
        {"old_string": "        nas1: { ansible_host: 192.168.1.20 }",
         "new_string": "        nas1: { ansible_host: 10.0.20.20 }"}))
    hosts = note("cat /etc/hosts", narrative="127.0.0.1 localhost\n10.0.0.5 web02 web02.lan")
    note("moved the photos share to a bigger volume")
    assert ids_of(conn, "NAS's IP address", project=P)[0] == inv
    assert ids_of(conn, "web server ip", project=P)[0] == hosts
    # A command naming a numbered host is not its key; a version is not an address.
    from aletheia.idents import identifier_words
    assert identifier_words("$ ansible-playbook --limit dns1 && dig @192.168.1.53")[:1] == ["ip"]
    assert "dns" not in identifier_words("$ ansible-playbook --limit dns1 && dig @192.168.1.53")
    assert "ip" not in identifier_words("pinned 1.2.3.4.5 and catch2 3.7.1")
    # A key far from its address, or a name the text says bare, adds nothing.
    assert identifier_words("nas1: " + "x" * 300 + " 10.0.0.1") == ["ip"]
    assert identifier_words("backup1: 10.0.0.1 the Backup host") == ["ip"]


def test_identifier_words_stay_in_step_with_edits(conn: sqlite3.Connection) -> None:
    mid = note("ImportError in the worker")
    assert ids_of(conn, "import error", project=P) == [mid]
    store.update_memory(conn, mid, {"title": "TimeoutError in the worker",
                                    "narrative": "TimeoutError in the worker"})
    assert ids_of(conn, "import", project=P) == []
    assert ids_of(conn, "timeout error", project=P) == [mid]
    conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")


def test_migration_7_adds_identifier_words_to_what_is_stored(tmp_path: object) -> None:
    from pathlib import Path

    from aletheia import db
    from tests.oldstore import make_store_at

    path = Path(str(tmp_path)) / "v6.db"
    raw = make_store_at(path, 6)
    raw.execute("INSERT INTO memory (id, project, kind, title, narrative, created_at, source, "
                "content_hash) VALUES ('old1', '/a', 'note', 'boto failed', "
                "'ClientError (InvalidAccessKeyId)', 1, 'cli', 'h1')")
    raw.execute("INSERT INTO memory (id, project, kind, title, created_at, source, content_hash) "
                "VALUES ('old2', '/a', 'note', 'plain words only', 2, 'cli', 'h2')")
    raw.close()
    conn = db.connect(path)
    try:
        assert db.schema_version(conn) == max(MIGRATIONS)
        conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
        assert dict(conn.execute("SELECT id, idents FROM memory").fetchall()) == {
            "old1": "client error invalid access key id", "old2": ""}
        assert ids_of(conn, "invalid access key", project="/a") == ["old1"]
        assert ids_of(conn, "plain words", project="/a") == ["old2"]
    finally:
        conn.close()


# --- query expansion (aletheia.concepts) ---------------------------------------------------


def test_a_concept_the_query_names_finds_the_tool_the_memory_names(
    conn: sqlite3.Connection,
) -> None:
    runner = note("ran pytest -q -x: 41 passed", session_id="s1", kind="tool_event")
    note("lunch at noon with the design team", session_id="s1", when=T0 + 1)
    assert ids_of(conn, "how do I run the tests?", project=P, semantic=False)[:1] == [runner]
    # Only where this service ranks (a project-scoped query), and only when switched on.
    assert S.shape_query(conn, SearchQuery(q="tests", project=P)).expansions
    assert not S.shape_query(conn, SearchQuery(q="tests")).expansions


@pytest.mark.parametrize(("memory", "question"), [
    ("ran busted --output=TAP: 57 successes", "how do I run the tests?"),  # Lua
    ("Rscript -e 'lintr::lint_dir(\"R\")' printed 0 lints", "which linter do we use?"),  # R
    ("alejandra . reformatted 3 files", "what formats the code?"),  # Nix
    ("quarto render report.qmd --to pdf", "how are the docs built?"),
])
def test_a_concept_finds_the_tools_of_stacks_without_a_package_json(
    conn: sqlite3.Connection, memory: str, question: str,
) -> None:
    found = note(memory, session_id="s1", kind="tool_event")
    note("lunch at noon with the design team", session_id="s1", when=T0 + 1)
    assert ids_of(conn, question, project=P, semantic=False)[:1] == [found]


def test_an_added_word_weighs_less_than_the_querys_own(conn: sqlite3.Connection) -> None:
    tool = note("uv add httpx", when=T0)
    said = note("the package manager question is settled", when=T0 + 1)
    note("a note about something else entirely", when=T0 + 2)
    found = search(conn, SearchQuery(q="which package manager", project=P, semantic=False))
    assert [h.id for h in found][:2] == [said, tool]
    assert found[0].score > found[1].score


def test_expansion_off_adds_nothing(conn: sqlite3.Connection,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "EXPAND_WEIGHT", 0.0)
    note("ran pytest -q -x: 41 passed")
    assert ids_of(conn, "how do I run the tests?", project=P, semantic=False) == []


def test_an_old_answer_reporting_another_change_is_not_lifted_over_the_new_choice(
    conn: sqlite3.Connection,
) -> None:
    # The first session's answer reports one change (passlib is gone) and says the tokens are
    # signed HS256; the second session replaces HS256.  For a question the first prompt answers
    # best, that answer is an old answer too: it is no current end of the passlib change to
    # lift over the rest (scores as the ranking gave them, the question about the tokens).
    asked = note("JWT access tokens signed with HS256; hash passwords with passlib.",
                 kind="prompt", session_id="s1", when=T0)
    done = note("Done: passwords are hashed with `pwdlib`; `passlib` is gone. The access tokens are "
                "signed HS256.", kind="response", session_id="s1", when=T0 + 1000)
    change = note("Switch the JWT access tokens from HS256 to RS256.", kind="prompt", session_id="s2",
                  when=T0 + 30 * DAY)

    # the worker's record of the passlib change (the HS256 change is stated, not yet read)
    add_facts(conn, [FactIn(project=P, kind="decision", text="`passlib` was replaced.",
                            subject="replaced:passlib", value="(replaced)", replaces=["passlib"],
                            ends=True, source_ids=[done], observed_at=T0 + 1000)])

    def hit(memory_id: str, kind: str, session: str, at: int) -> S.Hit:
        return S.Hit(memory_id, "memory", 0.0, "", kind, P, at, session_id=session)

    memories = [(10.0, hit(asked, "prompt", "s1", T0)), (6.0, hit(change, "prompt", "s2", T0 + 30 * DAY)),
                (4.0, hit(done, "response", "s1", T0 + 1000))]
    pairs = S._replaced_answers(conn, SearchQuery(q="jwt access tokens", project=P), memories)
    assert ({asked}, [change]) in pairs
    assert not any(done in successors for _, successors in pairs)


def test_a_summary_of_a_session_before_a_change_is_as_old_as_its_session(
    conn: sqlite3.Connection,
) -> None:
    # The worker summarised the first session only after the second changed the build tool (it
    # ran late): the summary still tells the old state, as old as its session, not as the
    # time it was written.
    from aletheia.tasks.compress import JobRunner, drain

    note("Set up the build with Maven and the Maven wrapper.", kind="prompt", session_id="s1", when=T0)
    change = note("Move the build from Maven to Gradle with the Kotlin DSL.", kind="prompt",
                  session_id="s2", when=T0 + 30 * DAY)
    store.queue_stop(conn, "s1", P, "claude-code")
    assert drain(conn, JobRunner(use_provider=False)).done == 1
    summary, written = conn.execute("SELECT id, created_at FROM memory WHERE kind = 'summary'").fetchone()
    assert written > T0 + 30 * DAY  # (the worker ran now)
    memories = [(10.0, S.Hit(summary, "memory", 0.0, "", "summary", P, written, session_id="s1")),
                (6.0, S.Hit(change, "memory", 0.0, "", "prompt", P, T0 + 30 * DAY, session_id="s2"))]
    pairs = S._replaced_answers(conn, SearchQuery(q="build tool", project=P), memories)
    assert ({summary}, [change]) in pairs


def test_before_the_worker_runs_an_edit_that_changes_a_value_outranks_the_old_value(
    conn: sqlite3.Connection,
) -> None:
    # Only the diff says it: the second session's edit sets jwt_algorithm from HS256 to RS256.
    asked = note("Sign the JWT access tokens with HS256; the algorithm lives in settings.",
                 kind="prompt", session_id="s1", when=T0)
    edit_input = {"file_path": "/repo/app/src/app/settings.py",
                  "old_string": '    jwt_algorithm: str = "HS256"', "new_string": '    jwt_algorithm: str = "RS256"'}
    edit = note("Edit /repo/app/src/app/settings.py", kind="tool_event", session_id="s2", when=T0 + 30 * DAY,
                narrative=f"input: {json.dumps(edit_input)}\n\noutput:\n{{}}")

    def hit(memory_id: str, kind: str, title: str, session: str, at: int) -> S.Hit:
        return S.Hit(memory_id, "memory", 0.0, title, kind, P, at, session_id=session)

    memories = [(10.0, hit(asked, "prompt", "Sign the JWT", "s1", T0)),
                (6.0, hit(edit, "tool_event", "Edit /repo/app/src/app/settings.py", "s2", T0 + 30 * DAY))]
    pairs = S._replaced_answers(conn, SearchQuery(q="jwt algorithm", project=P), memories)
    assert pairs == [({asked}, [edit])]
    # a test's value is no change of the project's
    edit_input["file_path"] = "/repo/app/tests/test_settings.py"
    conn.execute("UPDATE memory SET narrative = ? WHERE id = ?",
                 (f"input: {json.dumps(edit_input)}\n\noutput:\n{{}}", edit))
    assert S._replaced_answers(conn, SearchQuery(q="jwt algorithm", project=P), memories) == []


def test_a_phrasal_verb_names_its_joined_form_not_its_first_word(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "log in" is signing in (the map's "login"), not logging (its "log"): the stop word "in"
    # is no search word, but the phrase decides which concept is read.
    auth = note("sessions are signed cookies; passwords hashed with argon2", when=T0)
    logs = note("structlog writes JSON lines to stdout", when=T0 + 1)
    note("a note about something else entirely", when=T0 + 2)
    assert ids_of(conn, "how does a user log in?", project=P, semantic=False)[:1] == [auth]
    assert ids_of(conn, "where do the logs go?", project=P, semantic=False)[:1] == [logs]
    added = {t for _, ts in S._expansions(conn, {"log"}, {"login": "log"}) for t in ts}
    assert "argon2" in added and "structlog" not in added
    # Off, the one-word key reads the phrase as logging.
    monkeypatch.setattr(S, "EXPAND_PHRASES", False)
    assert ids_of(conn, "how does a user log in?", project=P, semantic=False)[:1] == [logs]


def test_a_prompt_of_the_changing_session_that_names_the_old_value_is_an_old_answer(
    conn: sqlite3.Connection,
) -> None:
    # The prompt asked for passlib; the answer of the same session reports passlib gone: the
    # prompt says no change, so it is the old answer.  A prompt that asks for the change itself
    # ("Switch from passlib to pwdlib") is the change, not an old answer.
    asked = note("Hash the user passwords with `passlib` and bcrypt.", kind="prompt", session_id="s1", when=T0)
    done = note("Passwords are hashed with `pwdlib` (Argon2id); `passlib` is gone.", kind="response",
                session_id="s1", when=T0 + 1000)

    def hit(memory_id: str, kind: str, at: int) -> S.Hit:
        return S.Hit(memory_id, "memory", 0.0, "", kind, P, at, session_id="s1")

    memories = [(10.0, hit(asked, "prompt", T0)), (6.0, hit(done, "response", T0 + 1000))]
    assert S._replaced_answers(conn, SearchQuery(q="passwords", project=P), memories) == [({asked}, [done])]
    # a question naming the old value asks about that time: its memories answer it; why it
    # went, the change answers
    assert S._replaced_answers(conn, SearchQuery(q="how was passlib set up", project=P), memories) == []
    assert S._replaced_answers(conn, SearchQuery(q="why did we drop passlib", project=P), memories) == [
        ({asked}, [done])]
    conn.execute("UPDATE memory SET narrative = ?, title = ? WHERE id = ?",
                 ("Switch the password hashing from `passlib` to `pwdlib`.",) * 2 + (asked,))
    assert S._replaced_answers(conn, SearchQuery(q="passwords", project=P), memories) == []


def test_each_run_of_a_repeated_command_is_found(conn: sqlite3.Connection) -> None:
    # (Repeated runs were put at half their score until stop 30; that demotion moved no
    # question on dev-7 or dev-8 and was removed.)
    def run(command: str, output: str, when: int) -> str:
        return note(f"Bash: $ {command}", kind="tool_event", when=when,
                    narrative=f'input: {{"command": "{command}"}}\n\noutput:\n{output}')

    runs = [run("make test", f"ran 12 tests in 0.{4 + i} s, all passed", T0 + i) for i in range(3)]
    note("the browser tests need make 4.4, a running chromium and the fixtures of the "
         "e2e suite loaded first", when=T0 + 5)
    for i in range(10):
        note(f"unrelated work {i} on the invoice list", when=T0 + 10 + i)
    assert set(ids_of(conn, "make test", project=P, semantic=False)[:3]) == set(runs)
    # Two edits of one file (their inputs differ) both come first for the file's name.
    edits = [note("Edit /repo/app/Makefile", kind="tool_event", when=T0 + 30 + i, narrative=(
        f'input: {{"file_path": "/repo/app/Makefile", "new_string": "test: {target}"}}'))
        for i, target in enumerate(("unit", "e2e"))]
    assert set(ids_of(conn, "makefile", project=P, semantic=False)[:2]) == set(edits)


def test_the_replaced_values_kept_between_queries_follow_every_change_to_the_facts(
    conn: sqlite3.Connection,
) -> None:
    # A scoped query reuses the project's replaced values while its facts are unchanged: a new
    # record, a dismissal and another project's record must each show (or not) on the next read.
    done = note("Done: `passlib` is gone.", kind="response", session_id="s1", when=T0)

    def record(value: str, project: str = P) -> None:
        add_facts(conn, [FactIn(project=project, kind="decision", text=f"`{value}` was replaced.",
                                subject=f"replaced:{value}", value="(replaced)", replaces=[value],
                                ends=True, source_ids=[done], observed_at=T0)])

    assert S._replaced_values(conn, P) == []
    record("passlib")
    assert [v for v, _, _ in S._replaced_values(conn, P)] == ["passlib"]
    record("hs256")
    record("mysql", project="/repo/other")
    assert sorted(v for v, _, _ in S._replaced_values(conn, P)) == ["hs256", "passlib"]
    assert [v for v, _, _ in S._replaced_values(conn, "/repo/other")] == ["mysql"]
    conn.execute("UPDATE fact SET status = 'dismissed' WHERE subject = 'replaced:passlib'")
    assert [v for v, _, _ in S._replaced_values(conn, P)] == ["hs256"]
    assert S._replaced_values(conn, P)[0][2] == [done]


def test_a_question_for_an_observed_value_ranks_the_command_that_printed_it_first(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "How many …?" is answered by what a command printed, not by the talk that shares the
    # question's words; a question of another form ranks as before.  (The bonus alone: the
    # neighbour gain of tool events lifts ``run`` too.)
    monkeypatch.setattr(S, "TOOL_NEIGHBOURS_GAIN", False)
    monkeypatch.setattr(S, "OBSERVED_BONUS", 0.5)
    talk = note("the seed should add vendors with a few sample products each",
                kind="prompt", session_id="s1", when=T0)
    run = note("Bash: $ npx prisma db seed", kind="tool_event", session_id="s1", when=T0 + 1,
               narrative='input: {"command": "npx prisma db seed"}\n\noutput:\n'
                         "Running seed command `tsx prisma/seed.ts` ...\n"
                         "Inserted 14 vendors, 96 products\nThe seed command has been executed.")
    for i in range(12):
        note(f"unrelated work {i} on the order form", when=T0 + 10 + i)
    asked = "How many vendors does the seed create?"
    assert ids_of(conn, asked, project=P, semantic=False)[0] == run
    monkeypatch.setattr(S, "OBSERVED_BONUS", 0.0)
    assert ids_of(conn, asked, project=P, semantic=False)[0] == talk
    plain = ids_of(conn, "what does the seed create for vendors", project=P, semantic=False)
    monkeypatch.setattr(S, "OBSERVED_BONUS", 0.5)
    assert ids_of(conn, "what does the seed create for vendors", project=P,
                  semantic=False) == plain


def test_query_words_are_found_where_a_word_boundary_pattern_finds_them() -> None:
    # The matcher checks the word start after an alternative's first letter (a faster pattern):
    # it must find exactly what ``\b(a|b|…)`` finds, at the same places, from any start position.
    import re

    alts = ["deploy", "dont", "don't", "obrien", "café", "naïve", "x", "xy", "key_id", "3", "311"]
    alts.sort(key=len, reverse=True)
    boundary = re.compile(r"\b(" + "|".join(map(re.escape, alts)) + ")")
    fast = S._word_starts(alts)
    text = ("don't deploy redeploy o'brien obrien x_y _x xy xx café décafé naïve naive 3.11 311 "
            "key_id keyid deployment\ndeploy’s Xy x-y ñx xñ")
    for lo, hi in ((0, len(text)), (1, len(text)), (8, 30), (14, 15), (len(text) - 3, len(text))):
        assert [(m.span(), m.group(1)) for m in fast.finditer(text, lo, hi)] == \
            [(m.span(), m.group(1)) for m in boundary.finditer(text, lo, hi)]
    assert fast.findall(text) == boundary.findall(text)
    assert fast.findall(text) != []
    # An alternative that does not start with a word character keeps the boundary pattern.
    assert S._word_starts(["-x", "y"]).pattern == boundary.pattern.replace(
        "|".join(map(re.escape, alts)), "\\-x|y")


def test_lengths_are_read_only_until_the_kept_best_are_exact(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``_bm25(keep=…)`` stops reading lengths once nothing left can beat the kept best: its best
    # ``keep`` are those of reading every length, over several steps of reading.
    rows = [MemoryIn(project=P, kind="note", title=f"attempt {i}",
                     narrative="retry " + " ".join(f"w{i}x{j}" for j in range(i % 37)) +
                     (" budget" if i % 7 == 0 else ""), created_at=T0 + i) for i in range(700)]
    store.write_memories(conn, rows)
    query = SearchQuery(q="retry budget", project=P)
    shaped = S.shape_query(conn, query)
    matcher = S._Matcher(shaped)
    full = S._bm25(conn, query, shaped, matcher)
    read: list[int] = []
    sizes = S._doc_sizes

    def counted(c: sqlite3.Connection, rowids: list[int]) -> dict[int, int]:
        read.extend(rowids)
        return sizes(c, rowids)

    monkeypatch.setattr(S, "_doc_sizes", counted)
    for keep in (5, 60, 300):
        read.clear()
        assert S._bm25(conn, query, shaped, matcher, keep)[:keep] == full[:keep]
        if keep == 5:
            assert len(read) < len(full)  # (it did stop early)


def test_what_a_facts_text_alone_decides_is_kept_within_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(S, "FACT_TEXTS_KEPT", 3)
    monkeypatch.setattr(S, "_FACT_TEXTS", {})
    assert S._fact_text("Use `InvalidAccessKeyId` handling") == ("invalid access key id", 3)
    for i in range(10):
        S._fact_text(f"fact number {i}")
        assert len(S._FACT_TEXTS) <= 3
    assert S._fact_text("fact number 9") == ("", 3)


def test_kept_token_counts_follow_every_edit_of_a_memorys_indexed_text(
    conn: sqlite3.Connection,
) -> None:
    # A search process keeps each memory's token count while ``memory_edits`` stays put: an
    # edit, a move to another project and a delete must each make it read them again.
    def index_sizes(rowids: list[int]) -> dict[int, int]:
        return {int(r[0]): S._varint_sum(r[1]) for r in conn.execute(
            "SELECT id, sz FROM memory_fts_docsize WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),))}

    ids_ = [note(f"retry budget {i}", narrative="retry " * (i + 1)) for i in range(3)]
    rowids = [int(conn.execute("SELECT rowid FROM memory WHERE id = ?", (i,)).fetchone()[0])
              for i in ids_]
    assert S._doc_sizes(conn, rowids) == index_sizes(rowids)
    assert S._SIZES[S._db_path(conn)][1].keys() >= set(rowids)  # (kept)
    store.update_memory(conn, ids_[0], {"narrative": "a much longer text " * 20})
    assert S._doc_sizes(conn, rowids) == index_sizes(rowids)
    conn.execute("UPDATE memory SET project = '/repo/elsewhere-with-a-longer-name' WHERE id = ?",
                 (ids_[1],))
    assert S._doc_sizes(conn, rowids) == index_sizes(rowids)
    conn.execute("DELETE FROM memory WHERE id = ?", (ids_[2],))
    again = note("reuses the rowid with other words entirely, many more of them")
    assert int(conn.execute("SELECT rowid FROM memory WHERE id = ?", (again,)).fetchone()[0]) \
        == rowids[2]
    assert S._doc_sizes(conn, rowids) == index_sizes(rowids)
    # A new memory is a new rowid: no edit counted, what was kept stays.
    before = conn.execute("SELECT n FROM memory_edits").fetchone()[0]
    note("one more")
    assert conn.execute("SELECT n FROM memory_edits").fetchone()[0] == before


def _edit(path: str, old: str, new: str, session: str, when: int) -> str:
    narrative = f"input: {json.dumps({'file_path': path, 'old_string': old, 'new_string': new})}\n\noutput:\n{{}}"
    return note(f"Edit {path}", kind="tool_event", session_id=session, when=when, narrative=narrative)


def test_a_setting_a_later_edit_changed_again_is_the_old_answer_and_the_newest_edit_the_change(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 3 → 2 for the winter, said in the answer; then 2 → 3, said only by the edit ("undo it").
    path = "/repo/app/src/rota.clj"
    first = _edit(path, "(def max-shifts-per-week 4)", "(def max-shifts-per-week 3)", "s1", T0)
    lowered = _edit(path, "(def max-shifts-per-week 3)", "(def max-shifts-per-week 2)", "s2", T0 + 30 * DAY)
    said = note("The weekly cap is now 2 (`max-shifts-per-week` in `rota.clj`); volunteers can take "
                "two shifts a week.", kind="response", session_id="s2", when=T0 + 30 * DAY + 1)
    other = note("Volunteers sign up for shifts on the rota page.", kind="response", session_id="s2",
                 when=T0 + 30 * DAY + 2)
    undone = _edit(path, "(def max-shifts-per-week 2)", "(def max-shifts-per-week 3)", "s3", T0 + 60 * DAY)
    note("undo the winter rule", kind="prompt", session_id="s3", when=T0 + 60 * DAY - 1)

    def hit(memory_id: str, kind: str, title: str, session: str, at: int) -> S.Hit:
        return S.Hit(memory_id, "memory", 0.0, title, kind, P, at, session_id=session)

    memories = [(14.0, hit(said, "response", "The weekly cap", "s2", T0 + 30 * DAY + 1)),
                (12.0, hit(other, "response", "Volunteers sign up", "s2", T0 + 30 * DAY + 2)),
                (11.0, hit(undone, "tool_event", f"Edit {path}", "s3", T0 + 60 * DAY)),
                (10.5, hit(lowered, "tool_event", f"Edit {path}", "s2", T0 + 30 * DAY)),
                (9.0, hit(first, "tool_event", f"Edit {path}", "s1", T0))]

    def pairs(q: str) -> list[tuple[set[str], list[str]]]:
        query = SearchQuery(q=q, project=P)
        return S._set_again(conn, query, memories, S._HeadTexts(conn))

    # each write followed to the newest value; the session's answer naming the key is old too
    assert pairs("How many shifts a week may one volunteer take?") == [
        ({lowered, said}, [undone]), ({first}, [undone])]
    # a query that does not name the setting: no change of it (the file is only where it matched)
    assert pairs("How do volunteers sign up on the rota page?") == []
    ranked = ids_of(conn, "How many shifts a week may one volunteer take?", project=P, semantic=False)
    assert ranked.index(undone) < min(ranked.index(said), ranked.index(lowered))
    monkeypatch.setattr(S, "SET_AGAIN", False)
    ranked = ids_of(conn, "How many shifts a week may one volunteer take?", project=P, semantic=False)
    assert ranked.index(undone) > ranked.index(said)


def test_a_period_setting_changed_again_answers_a_how_long_question_that_does_not_name_its_key(
    conn: sqlite3.Connection,
) -> None:
    path = "/repo/app/Public/Disable-Leaver.ps1"
    script = "function Disable-Leaver {\n    begin { $graceDays = 30 }\n    process { Disable-Account $_ }\n}\n"
    write = note(f"Write {path}", kind="tool_event", session_id="s1", when=T0,
                 narrative=f"input: {script}\n{json.dumps({'file_path': path})}\n\noutput:\n")
    later = _edit(path, "    begin { $graceDays = 30 }", "    begin { $graceDays = 14 }", "s2", T0 + DAY)
    memories = [(10.0, S.Hit(write, "memory", 0.0, f"Write {path}", "tool_event", P, T0, session_id="s1")),
                (4.0, S.Hit(later, "memory", 0.0, f"Edit {path}", "tool_event", P, T0 + DAY, session_id="s2"))]

    def pairs(q: str) -> list[tuple[set[str], list[str]]]:
        return S._set_again(conn, SearchQuery(q=q, project=P), memories, S._HeadTexts(conn))

    assert pairs("How long after leaving is an account disabled?") == [({write}, [later])]
    # not a question for a period: the key's unit says nothing of it
    assert pairs("Which accounts does the leaver script disable?") == []


def test_a_value_a_session_states_and_edits_that_a_later_edit_changed_again_is_the_old_answer(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The prose names no key (`kd`): only the session ties "0.8" to its edit; the later session's
    # edit puts it back ("go back to what Ewan had") and holds no query word.
    path = "/repo/app/namelists/loch.nml"
    asked = note("the model uses one light extinction coefficient, 0.5 per metre. Morven measured it "
                 "with the sensor at 0.8 so use that", kind="prompt", session_id="s1", when=T0)
    first = _edit(path, "  kd = 0.5", "  kd = 0.8", "s1", T0 + 1)
    back = _edit(path, "  kd = 0.8", "  kd = 0.5", "s2", T0 + 30 * DAY)
    note("go back to what Ewan had", kind="prompt", session_id="s2", when=T0 + 30 * DAY - 1)
    memories = [(10.0, S.Hit(asked, "memory", 0.0, "the model uses", "prompt", P, T0, session_id="s1"))]

    def pairs(q: str) -> tuple[list[tuple[set[str], list[str]]], list[str]]:
        found, brought = S._session_set(conn, SearchQuery(q=q, project=P), memories, S._HeadTexts(conn))
        return found, [h.id for h in brought]

    assert pairs("What light extinction coefficient does the model use?") == ([({asked, first}, [back])], [back])
    # the query's words are not beside the value where the session says it: not about it
    assert pairs("Who is Morven?") == ([], [])
    q = "What light extinction coefficient does the model use?"
    ranked = ids_of(conn, q, project=P, semantic=False)
    assert ranked[0] == back and ranked.index(back) < ranked.index(asked)
    monkeypatch.setattr(S, "SESSION_SET", False)
    assert back not in ids_of(conn, q, project=P, semantic=False)[:1]

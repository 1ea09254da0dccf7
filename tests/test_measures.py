"""Measures said in prose (``aletheia.measures``) and the newest one ranking first for a question
that asks for one (``search.MEASURES``): a change of a time, a period or a share stated only in
the talk, with no value named the way a change statement names it."""

from __future__ import annotations

import sqlite3

import pytest

from aletheia import measures, store
from aletheia import search as S
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn

P = "/repo/homelab"
DAY = 86_400_000
T0 = 1_700_000_000_000
ALL = frozenset({"period", "clock", "share"})


def _said(conn: sqlite3.Connection, text: str, *, when: int, session: str, kind: str = "prompt") -> str:
    item = MemoryIn(project=P, kind=kind, title=text[:80], narrative=text, created_at=when, session_id=session)
    return store.write_memory(conn, item).id


def _values(text: str) -> list[tuple[str, float]]:
    return [(kind, value) for _, kind, value in measures.found(text, ALL)]


def test_one_measure_said_two_ways_reads_as_one_value() -> None:
    assert _values("the job runs once a day") == _values("the job runs every 24 hours") == [("period", 86400.0)]
    assert _values("make the check twice a day") == [("period", 43200.0)]
    assert _values("move them to quarter past two") == _values("it fires at 02:15") == [("clock", 135.0)]
    assert _values("a 10 second timeout") == _values("a 10 s timeout") == [("period", 10.0)]
    assert _values("raised the overlap to 75 %") == [("share", 75.0)]
    # ("and" is no "an d", "2 to 3 minutes" no time of day)
    assert _values("cache it and retry") == []
    assert _values("took 2 to 3 minutes") == [("period", 180.0)]
    assert _values("retry at 3 attempts") == [] and _values("the scrub starts at 3 on sundays") == [("clock", 180.0)]


def test_a_question_asks_for_a_measure_by_its_form() -> None:
    assert measures.asked("How long do we wait on the FX service?") == {"period"}
    assert measures.asked("How often does the job look for work?") == {"period"}
    assert "clock" in measures.asked("What time does the nightly backup start?")
    assert measures.asked("How much do consecutive frames overlap?") == {"share"}
    assert measures.asked("Which library hashes the passwords?") == frozenset()


def _backup_sessions(conn: sqlite3.Connection) -> dict[str, str]:
    # The first session says the schedule with most of the question's words; a later session's
    # prompt moves it ("quarter past two") without naming the old time in a change statement's
    # form, and its answer reports it with fewer of them.
    return {
        "old": _said(conn, "backups: restic pulls the NAS shares every night at 3, the nightly backup "
                     "timer starts the backup job on backup1.", when=T0, session="s1"),
        "old_done": _said(conn, "The nightly backup timer is in place: the backup starts at 03:00 on backup1.",
                          when=T0 + 60_000, session="s1", kind="response"),
        "move": _said(conn, "the NAS scrub fights the backups. move the backup to quarter past two.",
                      when=T0 + 30 * DAY, session="s2"),
        "moved": _said(conn, "Moved: the backup timer now fires at 02:15.", when=T0 + 30 * DAY + 60_000,
                       session="s2", kind="response"),
    }


def test_a_time_changed_only_in_the_talk_ranks_the_newer_first(conn: sqlite3.Connection) -> None:
    m = _backup_sessions(conn)
    question = "What time does the nightly backup start?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "MEASURES", False)
        plain = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert plain[0] in (m["old"], m["old_done"])  # (without it, the old schedule is first)
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] in (m["move"], m["moved"])
    assert hits.index(m["moved"]) < hits.index(m["old"]) and hits.index(m["moved"]) < hits.index(m["old_done"])
    assert {m["old"], m["old_done"]} <= set(hits)  # (the old answer stays findable)


def test_a_question_that_asks_for_no_measure_keeps_its_ranking(conn: sqlite3.Connection) -> None:
    _backup_sessions(conn)
    question = "Which tool pulls the NAS shares for the nightly backup?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "MEASURES", False)
        plain = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert [h.id for h in search(conn, SearchQuery(q=question, project=P))] == plain


def test_a_later_measure_said_without_a_change_is_no_change(conn: sqlite3.Connection) -> None:
    # A later answer says a period beside the question's words (a soak test "of 7 days"), with no
    # word of a change: the session length the older answers give stays first.
    old = _said(conn, "vendors log in with email; vendor sessions last 30 days and vendors stay logged in.",
                when=T0, session="s1")
    _said(conn, "Vendor login works: vendors stay logged in for 30 days.", when=T0 + 60_000, session="s1",
          kind="response")
    load = _said(conn, "It holds: 50 vendor clients stay logged in through a soak test of 7 days.", when=T0 + 40 * DAY,
                 session="s3", kind="response")
    hits = [h.id for h in search(conn, SearchQuery(q="How long does a vendor stay logged in?", project=P))]
    assert hits.index(old) < hits.index(load)


def test_a_change_naming_the_old_measure_and_none_of_the_query_is_brought_in(conn: sqlite3.Connection) -> None:
    # The later prompt holds no word of the question: it names the old period ("once a day") and
    # the new one with a change's words, and is found by the old answer's words for its measure.
    old = _said(conn, "reminders: a periodic background job, once a day, looks for thirsty plants and posts "
                "a notification.", when=T0, session="s1")
    change = _said(conn, "also once a day is too coarse, if it runs at 11pm you hear about it the next night. "
                   "make the check twice a day.", when=T0 + DAY, session="s2")
    question = "How often does the background job look for thirsty plants?"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "MEASURES", False)
        assert change not in [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == change and old in hits


# --- the worker's superseding: a newer fact about the same thing replaces the older measure -----


def _fact(conn: sqlite3.Connection, text: str, when: int, kind: str = "decision") -> str:
    from aletheia.facts import FactIn, add_facts

    return add_facts(conn, [FactIn(project=P, text=text, kind=kind, observed_at=when)], now=when).added[0]


def _active(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT text FROM fact WHERE project = ? AND status = 'active'", (P,))]


def test_a_time_changed_in_the_talk_supersedes_the_older_fact(conn: sqlite3.Connection) -> None:
    old = _fact(conn, "Decision: backups. restic on backup1 pulls the NAS shares every night at 3, "
                "keeps 7 daily and 4 weekly.", T0)
    new = _fact(conn, "Decision: backups: move them to quarter past two, the NAS scrub starts at 3 on sundays.",
                T0 + 30 * DAY)
    row = conn.execute("SELECT status, superseded_by FROM fact WHERE id = ?", (old,)).fetchone()
    assert row[0] == "superseded" and row[1]
    active = "\n".join(_active(conn))
    assert "every night at 3" not in active and "quarter past two" in active
    # (what else the old decision said is still current, in its own words)
    assert "keeps 7 daily and 4 weekly" in active
    assert conn.execute("SELECT status FROM fact WHERE id = ?", (new,)).fetchone()[0] == "active"


def test_a_period_said_two_ways_is_one_value_and_an_older_one_goes(conn: sqlite3.Connection) -> None:
    _fact(conn, "Convention: vendor sessions last 30 days; make the login page remember the email.", T0,
          kind="convention")
    _fact(conn, "Decision: vendor sessions are good for two weeks now.", T0 + 10 * DAY)
    active = "\n".join(_active(conn))
    assert "30 days" not in active and "two weeks" in active
    assert "remember the email" in active


def test_a_measure_without_a_change_or_of_another_thing_supersedes_nothing(conn: sqlite3.Connection) -> None:
    old = _fact(conn, "Decision: the nightly backup starts at 03:00.", T0)
    # said again later without a change's words; a change of another thing's time
    _fact(conn, "Decision: a restore drill of the backup takes about 40 minutes.", T0 + DAY)
    _fact(conn, "Decision: the NAS scrub moved to 04:30 on sundays.", T0 + 2 * DAY)
    assert conn.execute("SELECT status FROM fact WHERE id = ?", (old,)).fetchone()[0] == "active"


def test_a_setting_whose_key_names_its_unit_is_a_period() -> None:
    assert measures.keyed_period("fx_timeout_seconds", "10") == 10.0
    assert measures.keyed_period("poll_interval_ms", "1500") == 1.5
    assert measures.keyed_period("cache_ttl_minutes", "5") == 300.0
    assert measures.keyed_period("max_retries", "3") is None  # (no unit in the key)
    assert measures.keyed_period("seconds", "10") is None  # (the unit alone names no setting)
    assert measures.keyed_period("fx_timeout_seconds", "fast") is None


def test_the_code_that_set_an_old_period_and_the_change_are_both_found(conn: sqlite3.Connection) -> None:
    # The file written when the client was added holds most of the question's words and the old
    # timeout as a bare number; a later session makes it fail fast and says so in the talk.  (The
    # old code was marked stale by MEASURED_SETTINGS until stop 30: it moved no question on any
    # tunable part, dev-7 and dev-8 included, and was removed.)
    code = '''"""Exchange rates from the internal FX service, cached for an hour: wait on the rate service,
give up after the timeout."""

import httpx

# how long we wait on the exchange-rate service before we give up on it
FX_TIMEOUT_SECONDS = 10.0
CACHE_SECONDS = 3600


async def rates(base: str = "EUR") -> dict[str, str]:
    async with httpx.AsyncClient(timeout=FX_TIMEOUT_SECONDS) as client:
        return (await client.get("/rates", params={"base": base})).json()
'''
    write = store.write_memory(conn, MemoryIn(
        project=P, kind="tool_event", title="Write /repo/ledger/src/ledger/fx.py",
        narrative=f"input: {code}", created_at=T0, session_id="s1")).id
    _said(conn, "Add a client for the exchange-rate service with a 10 s timeout, cache the rates for an hour.",
          when=T0 - 60_000, session="s1")
    _said(conn, "the rate service hung and every request sat for the full 10 s timeout. make it fail fast: "
          "3 second timeout.", when=T0 + 30 * DAY, session="s2")
    done = _said(conn, "The FX client now fails fast: `FX_TIMEOUT_SECONDS = 3.0` (was 10); a request waits "
                 "3 s on the rate service before it gives up.", when=T0 + 30 * DAY + 60_000, session="s2",
                 kind="response")
    question = "How long do we wait on the exchange-rate service before giving up?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert done in hits
    assert write in hits  # (the old answer stays findable)


def _edit(path: str, old: str, new: str) -> str:
    import json

    data = {"file_path": path, "old_string": old, "new_string": new}
    return f"input: {json.dumps(data)}\n\noutput:\n{json.dumps({'filePath': path})}"


def _edited(conn: sqlite3.Connection, path: str, old: str, new: str, *, when: int, session: str) -> str:
    item = MemoryIn(project=P, kind="tool_event", title=f"Edit {path}", narrative=_edit(path, old, new),
                    created_at=when, session_id=session)
    return store.write_memory(conn, item).id


def test_a_period_changed_since_only_in_an_edit_ranks_the_edit_first(conn: sqlite3.Connection) -> None:
    # The answer says the period in words; the later edit says it in code with its unit, and a
    # third edit changes it again: the last edit is the answer, though it holds no query word.
    path = "/r/modules/nix.nix"
    _edited(conn, path, '    options = "--delete-older-than 14d";', '    options = "--delete-older-than 30d";',
            when=T0, session="s1")
    answer = _said(conn, "Garbage collection now keeps old generations for a month on every machine.",
                   when=T0 + 60_000, session="s1", kind="response")
    for i in range(8):
        _said(conn, f"unrelated work {i} on the photo library", when=T0 + 10 + i, session="s9")
    other = _edited(conn, "/r/modules/cache.nix", '  ttl = "7d";', '  ttl = "1d";', when=T0 + 20 * DAY, session="s2")
    last = _edited(conn, path, '    options = "--delete-older-than 30d";', '    options = "--delete-older-than 21d";',
                   when=T0 + 30 * DAY, session="s3")
    question = "How long are old generations kept before they're collected?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == last
    assert hits.index(last) < hits.index(answer)
    assert other not in hits or hits.index(other) > hits.index(answer)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_MEASURES", False)
        plain = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
        assert last not in plain or plain.index(answer) < plain.index(last)


def test_an_edit_of_another_period_or_before_the_answer_is_not_its_change(conn: sqlite3.Connection) -> None:
    path = "/r/modules/nix.nix"
    before = _edited(conn, path, '    options = "--delete-older-than 30d";', '    options = "--delete-older-than 21d";',
                     when=T0 - DAY, session="s0")
    answer = _said(conn, "Garbage collection now keeps old generations for a month on every machine.",
                   when=T0, session="s1", kind="response")
    another = _edited(conn, path, '    options = "--delete-older-than 14d";', '    options = "--delete-older-than 7d";',
                      when=T0 + DAY, session="s2")
    hits = [h.id for h in search(conn, SearchQuery(q="How long are old generations kept?", project=P))]
    # (both are found by "older": below the answer, not brought in as its change)
    assert hits[0] == answer
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "EDITED_MEASURES", False)
        assert [h.id for h in search(conn, SearchQuery(q="How long are old generations kept?", project=P))] == hits
    assert {before, another} <= set(hits)


def test_a_period_changed_since_at_a_key_naming_its_unit_ranks_the_edit_first(conn: sqlite3.Connection) -> None:
    # The answer says "every ten seconds"; the later edit writes a bare number at a key whose
    # name carries the unit (`sample_interval_s`), the only place the new period is said.
    answer = _said(conn, "The relay now takes a wind reading every ten seconds for the race officer.",
                   when=T0, session="s1", kind="response")
    for i in range(8):
        _said(conn, f"unrelated work {i} on the photo library", when=T0 + 10 + i, session="s9")
    unitless = _edited(conn, "/r/src/main.zig", "const retries = 10;", "const retries = 3;",
                       when=T0 + 10 * DAY, session="s2")
    last = _edited(conn, "/r/src/main.zig", "const sample_interval_s = 10;", "const sample_interval_s = 20;",
                   when=T0 + 30 * DAY, session="s3")
    question = "How often does the relay take a wind reading?"
    hits = [h.id for h in search(conn, SearchQuery(q=question, project=P))]
    assert hits[0] == last
    assert hits.index(last) < hits.index(answer)
    assert unitless not in hits or hits.index(unitless) > hits.index(answer)
    from aletheia.search import _KEY_UNIT

    assert [bool(_KEY_UNIT.search(k)) for k in ("pollSeconds", "TTL_MINUTES", "lead_hours", "retries", "status")] \
        == [True, True, True, False, False]

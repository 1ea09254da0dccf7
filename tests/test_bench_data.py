"""The coding-session evaluation set (bench/data/coding/) stays sound: every gold event exists,
every question has a category and a part, knowledge updates name their newest and superseded
events, and the counts meet the minima issues 11 and 12 are judged by."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import coding_data as cd  # noqa: E402


@pytest.fixture(scope="module")
def data() -> cd.DataSet:
    return cd.load()


def test_the_set_validates(data: cd.DataSet) -> None:
    assert cd.validate(data) == []


def test_parts_and_counts(data: cd.DataSet) -> None:
    counts = cd.counts(data)
    assert set(counts) == {"dev", "heldout"}
    assert len(data.projects) >= 4
    for part, c in counts.items():
        assert len(c["projects"]) >= 2, part
        assert c["questions"] >= 150, part
        assert c["by_category"]["no-answer"] >= 10, part
        assert c["block"] >= 40, part
        assert c["knowledge_updates"] >= 6, part
        assert all(n > 0 for n in c["by_category"].values()), part
    for p in data.projects.values():
        assert len(p.sessions) >= 12, p.name
        assert all(10 <= len(s.events) <= 60 for s in p.sessions), p.name


def test_every_question_has_a_category_a_part_and_existing_gold(data: cd.DataSet) -> None:
    events = data.events()
    for q in data.questions:
        assert q.category in cd.CATEGORIES
        assert q.part in cd.PARTS and q.part == data.projects[q.project].part
        for key in (*q.gold, *q.superseded):
            assert key in events and events[key].stored, (q.id, key)
        if q.category == "knowledge-update":
            newest = max(q.gold, key=lambda k: events[k].at)
            assert all(events[newest].at > events[k].at for k in q.superseded), q.id


def test_payloads_are_claude_code_hook_payloads(data: cd.DataSet) -> None:
    project = data.projects["ledgerline"]
    secrets = cd.secrets_for(list(project.events()))
    seen: set[str] = set()
    for s in project.sessions:
        for e in s.events:
            p = cd.payload(e, s, "/tmp/repo", secrets)
            seen.add(e.hook)
            assert p["session_id"] == s.uuid and p["hook_event_name"] == e.hook
            assert p["cwd"].startswith("/tmp/repo")
            if e.hook in ("PostToolUse", "PostToolUseFailure"):
                assert p["tool_use_id"].startswith("toolu_01") and isinstance(p["tool_input"], dict)
                assert ("tool_response" in p) != ("error" in p)
            assert "{ROOT}" not in json.dumps(p) and "{{secret" not in json.dumps(p)
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
            "SessionEnd"} <= seen


def test_fake_secrets_are_generated_the_same_way_every_time(data: cd.DataSet) -> None:
    events = [e for p in data.projects.values() for e in p.events()]
    first, again = cd.secrets_for(events), cd.secrets_for(events)
    assert first == again and len(first) >= 5
    assert any(re.fullmatch(r"ghp_[A-Za-z0-9]{36}", v) for v in first.values())


def test_the_validator_catches_a_broken_label(data: cd.DataSet) -> None:
    project = data.projects["ledgerline"]
    broken = '[[q]]\nid = "x"\ncategory = "stack"\nq = "?"\ngold = ["ll-01:nope"]\n'
    with pytest.raises(cd.DataError, match="does not exist"):
        cd.parse_questions(broken, project, data.events())
    stale = ('[[q]]\nid = "y"\ncategory = "knowledge-update"\nq = "Which tool?"\n'
             'gold = ["ll-01:p1"]\nsuperseded = ["ll-06:p1"]\nanswer = ["Poetry"]\n'
             'old_answer = ["uv"]\n')
    questions = cd.parse_questions(stale, project, data.events())
    problems = cd.validate(cd.DataSet({"ledgerline": project}, questions), minimums=False)
    assert any("not newer" in p for p in problems)


def _replay(data: cd.DataSet, root: Path) -> Any:
    """``data`` captured through the hook's pipeline (in-process), as the benches do."""
    import coding_replay as cr

    with pytest.MonkeyPatch.context() as mp:  # prepare() points ALETHEIA_HOME at root/home
        mp.setenv("ALETHEIA_HOME", str(root / "home"))
        replay = cr.prepare(data, root)
        cr.capture(replay, "inprocess")
        cr.map_events(replay)
    return replay


def _captured_whole(data: cd.DataSet, replay: Any) -> None:
    import coding_replay as cr

    stored = [e.key for p in data.projects.values() for e in p.events() if e.stored]
    assert [k for k in stored if k not in replay.memory_of] == []
    cr.check_gold(replay, data.questions)  # raises when a gold event is missing


@pytest.fixture(scope="module")
def replayed(data: cd.DataSet, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _replay(data, tmp_path_factory.mktemp("coding-replay"))


def test_every_stored_event_is_found_in_the_store(data: cd.DataSet, replayed: Any) -> None:
    _captured_whole(data, replayed)


def _store_text(replayed: Any) -> str:
    import sqlite3

    conn = sqlite3.connect(replayed.home / "hub.db")
    try:
        rows = conn.execute("SELECT title, subtitle, narrative, facts, concepts FROM memory")
        return "\n".join(" ".join(r) for r in rows)
    finally:
        conn.close()


def test_the_fake_secrets_are_redacted_on_capture(replayed: Any) -> None:
    # Includes a DRF token printed by `manage.py drf_create_token` ("Generated token <40 hex> for
    # user …"): the shape of a git SHA, caught by the word before it.
    text = _store_text(replayed)
    leaked = sorted(k for k, v in replayed.secrets.items() if v in text)
    assert leaked == []


# --- heldout-2, heldout-3, heldout-4, dev-3 to dev-9 and dev-10: parts with minimums, each in a
# folder of its own (dev-3 to dev-9 are tuned on, the held-out ones never, dev-10 not in stop 31;
# all are held to the same checks here)


@pytest.fixture(scope="module",
                params=(*cd.HELDOUT_FOLDER_PARTS, cd.DEV3_PART, cd.DEV4_PART, cd.DEV5_PART,
                        cd.DEV6_PART, cd.DEV7_PART, cd.DEV8_PART, cd.DEV9_PART, cd.DEV10_PART))
def heldout_part(request: pytest.FixtureRequest) -> tuple[str, cd.DataSet]:
    return request.param, cd.load(cd.folder(request.param))


def test_the_heldout_folder_parts_validate(heldout_part: tuple[str, cd.DataSet]) -> None:
    part, data = heldout_part
    assert cd.validate(data) == []
    least = cd.PART_MINIMUMS[part]
    c = cd.counts(data)[part]
    assert len(c["projects"]) >= least["projects_per_part"]
    assert c["questions"] >= least["questions_per_part"]
    assert c["by_category"]["no-answer"] >= least["no_answer_per_part"]
    assert c["block"] >= least["block_per_part"]
    assert c["knowledge_updates"] >= least["knowledge_updates_per_part"]
    for p in data.projects.values():
        asked = [q for q in data.questions if q.project == p.name]
        assert len(p.sessions) >= least["sessions_per_project"], p.name
        assert all(10 <= len(s.events) <= 60 for s in p.sessions), p.name
        assert len(asked) >= least["questions_per_project"], p.name
        assert {q.category for q in asked} == set(cd.CATEGORIES), p.name
        updates = [q for q in asked if q.category == "knowledge-update"]
        assert len(updates) >= least.get("knowledge_updates_per_project", 0), p.name


def test_the_heldout_folder_parts_stay_out_of_the_main_set(
        data: cd.DataSet, heldout_part: tuple[str, cd.DataSet], tmp_path: Path) -> None:
    part, held = heldout_part
    assert {p.part for p in held.projects.values()} == {part}
    assert {q.part for q in held.questions} == {part}
    assert not set(held.projects) & set(data.projects)
    others = [cd.load(cd.folder(o)) for o in cd.FOLDERS if o != part]
    assert all(not set(held.projects) & set(o.projects) for o in others)
    assert cd.folder(part) == cd.FOLDERS[part] and cd.folder("heldout") == cd.DATA
    # Its projects listed anywhere but in its own folder are refused (no silent mixing).
    for f in cd.folder(part).iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    with pytest.raises(cd.DataError, match="is not one of"):
        cd.load(tmp_path)


@pytest.fixture(scope="module")
def replayed_heldout(heldout_part: tuple[str, cd.DataSet],
                     tmp_path_factory: pytest.TempPathFactory) -> Any:
    part, held = heldout_part
    return _replay(held, tmp_path_factory.mktemp(f"coding-replay-{part}"))


def test_the_heldout_folder_parts_are_captured_whole(
        heldout_part: tuple[str, cd.DataSet], replayed_heldout: Any) -> None:
    _captured_whole(heldout_part[1], replayed_heldout)


# Redaction gaps these parts exposed, left in on purpose so that a fix shows; one is left, dev-10's
# (below).
# heldout-2's rw-04:t3 producer token printed bare, "rw_<40 hex>", is caught by the
# prefixed-token shape; heldout-3's W&B key given bare to `wandb login` (sl-03:t0) by the login
# rule and its password pasted after "DB password for linking:" (gl-07:p1) by the qualified-name
# prose form.  heldout-4's five (in four events) and dev-3's two: a password given bare on a
# command line with no cue word before it, `xcrun altool … -u USER -p '…'` (bl-07:t2) and
# `steamcmd +login USER '…'` (kw-12:t1), by altool's -p and steamcmd's +login; credentials listed
# in a prompt after a lower-case name and a space, "…, secret <value>, refresh token <value>."
# (rd-05:p1) and "issuer user:…, secret <40 hex>." (rd-12:p1), by the prose credential form (a
# random-looking value only); `ansible-vault encrypt_string --name NAME '<value>'` (dev-3's
# rh-03:t1), by the encrypt_string rule.  dev-8's (stop 29, found by its writer's replay, not
# fixed by the writer: data only): a name and its value handed to a CLI as a JSON array of two
# strings, `clasp run setScriptProperty -p '["PLAYCRICKET_API_TOKEN", "<40 hex>"]'` (cb-08:t1),
# since fixed.  dev-10's (stop 31, found by its writer's replay, not fixed by the writer: data
# only): an assignment written through printf right after a literal `\n` escape, so the name is
# glued to the escape's `n`, `printf 'WIFI_SSID = "apiary"\nWIFI_PASSWORD = "<value>"\n' >
# /tmp/secrets.py` (bb-03:t2), since fixed (a name after a spelled-out escape).
# Any other fake secret found in the store fails the test.
HELDOUT_KNOWN_LEAKS: dict[str, set[str]] = {
    cd.HELDOUT2_PART: set(), cd.HELDOUT3_PART: set(), cd.HELDOUT4_PART: set(), cd.DEV3_PART: set(),
    cd.DEV4_PART: set(), cd.DEV5_PART: set(), cd.DEV6_PART: set(), cd.DEV7_PART: set(),
    cd.DEV8_PART: set(), cd.DEV9_PART: set(), cd.DEV10_PART: set(),
}


def test_the_heldout_folder_parts_fake_secrets_are_redacted(
        heldout_part: tuple[str, cd.DataSet], replayed_heldout: Any) -> None:
    part = heldout_part[0]
    assert len(replayed_heldout.secrets) >= 5
    text = _store_text(replayed_heldout)
    leaked = {k for k, v in replayed_heldout.secrets.items() if v in text}
    assert leaked <= HELDOUT_KNOWN_LEAKS[part], sorted(leaked - HELDOUT_KNOWN_LEAKS[part])


def test_options_written_in_brackets_as_the_readme_shows_them_count() -> None:
    """``[fail] [exit=2]`` (the README's form, which dev-3, dev-4, dev-5 and the held-out parts
    write) is a failed command as ``fail exit=2`` is; a path's ``[id]`` segment stays a path."""
    text = ("@@ session s1 2026-09-06T10:05:00Z [source=resume]\n"
            "@@ bash:t1 [fail] [exit=2] | Run the tests\n$ mix test\n1 test, 1 failure\n"
            "@@ bash:t2 fail exit=3 | Again\n$ mix test\n1 test, 1 failure\n"
            "@@ read:r1 src/routes/order/[id]/+page.svelte [offset=3]\nline\n")
    [session] = cd.parse_sessions(text, "p")
    start, failed, bare, read = session.events
    assert start.payload["source"] == "resume"
    assert failed.hook == bare.hook == "PostToolUseFailure"
    assert failed.payload["error"].startswith("Exit code 2\n")
    assert bare.payload["error"].startswith("Exit code 3\n")
    assert read.payload["tool_input"]["file_path"].endswith("src/routes/order/[id]/+page.svelte")
    assert read.payload["tool_input"]["offset"] == 3


def test_the_tunable_group_holds_no_heldout_part() -> None:
    """What ``coding_ablate --part tunable`` runs: every part one may tune on, no held-out one."""
    assert set(cd.TUNABLE_PARTS) == {"dev", cd.EXTRA_PART, cd.DEV3_PART, cd.DEV4_PART, cd.DEV5_PART,
                                  cd.DEV6_PART, cd.DEV7_PART, cd.DEV8_PART, cd.DEV9_PART}
    assert not set(cd.TUNABLE_PARTS) & {"heldout", *cd.HELDOUT_FOLDER_PARTS}


def test_dev6_is_a_sound_part_in_the_tunable_group() -> None:
    """dev-6 (stop 27's second fresh yardstick, tuned on since stop 28) validates, every project
    asks every category, and it is in the tunable group."""
    data = cd.load(cd.folder(cd.DEV6_PART))
    assert cd.validate(data) == []
    assert {p.part for p in data.projects.values()} == {cd.DEV6_PART}
    assert {q.part for q in data.questions} == {cd.DEV6_PART}
    assert cd.DEV6_PART in cd.TUNABLE_PARTS
    for p in data.projects.values():
        asked = {q.category for q in data.questions if q.project == p.name}
        assert asked == set(cd.CATEGORIES), p.name
        assert all(10 <= len(s.events) <= 60 for s in p.sessions), p.name


# (part, in the tunable group, no-answer questions each project asks at least): dev-7 was stop
# 28's fresh yardstick (tuned on since stop 29), dev-8 stop 29's (since 30), dev-9 stop 30's
# (since 31); dev-10 is stop 31's, outside the group, so neither scale.py's corpus nor
# cold_search.py reads it.
_FOLDER_PARTS_SINCE_STOP_28 = [(cd.DEV7_PART, True, 0), (cd.DEV8_PART, True, 0), (cd.DEV9_PART, True, 4),
                               (cd.DEV10_PART, False, 4)]


@pytest.mark.parametrize(("part", "tunable", "no_answer"), _FOLDER_PARTS_SINCE_STOP_28)
def test_a_folder_part_validates_asks_every_category_and_is_tuned_on_only_once_read(
        part: str, tunable: bool, no_answer: int) -> None:
    """Every project asks every category, with at least four knowledge updates (and the part's
    no-answer minimum); a part is in the tunable group only after the stop that read it fresh."""
    data = cd.load(cd.folder(part))
    assert cd.validate(data) == []
    assert {p.part for p in data.projects.values()} == {part}
    assert {q.part for q in data.questions} == {part}
    assert (part in cd.TUNABLE_PARTS) is tunable
    assert part in cd.FOLDERS and cd.PART_MINIMUMS[part]
    for p in data.projects.values():
        asked = [q for q in data.questions if q.project == p.name]
        assert {q.category for q in asked} == set(cd.CATEGORIES), p.name
        assert sum(q.category == "knowledge-update" for q in asked) >= 4, p.name
        assert sum(q.category == "no-answer" for q in asked) >= no_answer, p.name
        assert all(10 <= len(s.events) <= 60 for s in p.sessions), p.name


def _first_prompt_line(part: str) -> str:
    events = cd.load(cd.folder(part)).part(part).events().values()
    return next(e.text.strip().splitlines()[0] for e in events
                if e.kind == "prompt" and "{" not in e.text)


def test_the_speed_benches_take_the_tunable_parts_from_coding_data(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """bench/scale.py's realistic corpus and bench/cold_search.py's ``--part`` follow
    ``cd.TUNABLE_PARTS`` (one list, no copies): a part joins or leaves both with it."""
    import cold_search
    import scale

    monkeypatch.setattr(cd, "TUNABLE_PARTS", (cd.DEV9_PART,))
    corpus = "\n".join(text for _, text in scale._coding_pieces())
    assert _first_prompt_line(cd.DEV9_PART) in corpus
    assert _first_prompt_line(cd.DEV8_PART) not in corpus
    with pytest.raises(SystemExit):
        cold_search.main(["--part", cd.DEV8_PART])
    assert "must be a tunable part: dev-9" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cold_search.main(["--part", cd.DEV9_PART])
    assert "--base is required" in capsys.readouterr().err

"""The talk-only view of the coding set (bench/coding_talk.py): prompts and answers, no tool
events, and only the questions the talk still settles."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import coding_data as cd  # noqa: E402
from coding_talk import KEPT_KINDS, talk_only  # noqa: E402


@pytest.fixture(scope="module")
def both() -> tuple[cd.DataSet, cd.DataSet]:
    data = cd.load()
    return data, talk_only(data)


def test_no_tool_event_is_left(both: tuple[cd.DataSet, cd.DataSet]) -> None:
    full, talk = both
    kinds = {e.kind for p in talk.projects.values() for e in p.events()}
    assert kinds <= KEPT_KINDS and "prompt" in kinds and "stop" in kinds
    assert any(e.kind == "tool" for p in full.projects.values() for e in p.events())
    # Every session is still there, with the same prompts and answers in the same order.
    for name, p in full.projects.items():
        for s, t in zip(p.sessions, talk.projects[name].sessions, strict=True):
            assert [e.key for e in s.events if e.kind in KEPT_KINDS] == [e.key for e in t.events]


def test_kept_questions_are_settled_by_the_talk(both: tuple[cd.DataSet, cd.DataSet]) -> None:
    full, talk = both
    events = talk.events()
    assert all(e.kind in KEPT_KINDS for e in events.values())
    assert not [q for q in talk.questions if q.category == "tool-output-only"]
    assert len([q for q in talk.questions if q.category == "no-answer"]) == \
        len([q for q in full.questions if q.category == "no-answer"])
    for q in talk.questions:
        if q.category == "no-answer":
            continue
        assert q.gold and all(k in events for k in q.gold), q.id
        if q.category == "knowledge-update":
            assert q.superseded and all(k in events for k in q.superseded), q.id
        if q.answer or q.answer_re:
            assert any(q.answered_by(events[k].text) for k in q.gold), q.id
    # The view drops questions; it never invents or rewrites one's words.
    by_id = {q.id: q for q in full.questions}
    assert len(talk.questions) < len(full.questions)
    assert all(q.text == by_id[q.id].text and set(q.gold) <= set(by_id[q.id].gold)
               for q in talk.questions)

"""The coding-session set as talk only: each session's prompts and the assistant's answers,
without its tool events.

An outside evaluation of this product replays sessions of that shape (user prompts and
assistant answers, no tool calls).  Our set is tool-rich, so a mechanism can lean on what tool
events carry (commands, file paths, output) and look better here than it will there.  This view
keeps every session's start, prompts, answers and end, and keeps a question only where the
talk still settles it:

- gold and superseded events are cut to the kept ones; a question with no gold left is dropped
  (``tool-output-only`` questions all go: their answer is only in tool output by construction);
- a knowledge update needs a superseded event left too, or it is dropped (newest-first cannot
  be read without the old answer);
- a question with a short answer keeps it only when a kept gold event holds it (else dropped);
- no-answer questions stay as they are.
"""

from __future__ import annotations

from dataclasses import replace

import coding_data as cd

KEPT_KINDS = frozenset({"start", "prompt", "stop", "end"})


def talk_only(data: cd.DataSet) -> cd.DataSet:
    projects = {
        name: replace(p, sessions=[replace(s, events=[e for e in s.events if e.kind in KEPT_KINDS])
                                   for s in p.sessions])
        for name, p in data.projects.items()
    }
    kept = {e.key: e for p in projects.values() for e in p.events()}
    questions: list[cd.Question] = []
    for q in data.questions:
        if q.category == "no-answer":
            questions.append(q)
            continue
        gold = [k for k in q.gold if k in kept]
        superseded = [k for k in q.superseded if k in kept]
        if not gold or (q.category == "knowledge-update" and not superseded):
            continue
        if (q.answer or q.answer_re) and not any(q.answered_by(kept[k].text) for k in gold):
            continue
        questions.append(replace(q, gold=gold, superseded=superseded))
    return cd.DataSet(projects, questions)

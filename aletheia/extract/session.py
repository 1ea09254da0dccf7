"""The session summary: what was asked, what was done and how it ended."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from aletheia import ids
from aletheia.changes import sentences
from aletheia.extract.errors import fix_text
from aletheia.extract.items import Item, cap
from aletheia.extract.rules import RuleExtractor


@dataclass
class SummaryDraft:
    title: str
    narrative: str
    files: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


def _first_sentences(text: str, limit: int = 400) -> str:
    parts = sentences(text)
    out = ""
    for part in parts:
        if len(out) + len(part) + 1 > limit:
            break
        out = f"{out} {part}".strip()
    return out or cap(text, limit)


# A parenthesis that names what was there before ("(was 30 s)") is history, not the outcome.
_WAS = re.compile(r"\s*\((?:was|were|previously|formerly|before|vs\.?|instead of|down from|up from)\b[^)]*\)", re.I)


def _ending(ex: RuleExtractor) -> str:
    """How the session ended, in a few words: the last run of each check, unresolved errors."""
    if ex.open_errors:
        err = next(iter(ex.open_errors.values()))
        return f"unresolved: `{cap(err.command, 50)}` fails with `{cap(err.signature, 70)}`"
    last: dict[str, tuple[str, str]] = {}
    for run in ex.commands:
        if run.category in ("test", "lint", "typecheck", "build", "image", "e2e"):
            last[run.category] = (run.command, run.result)
    if not last:
        return ""
    failed = [cmd for cmd, result in last.values() if result == "fail"]
    if failed:
        return f"ended with `{cap(failed[-1], 60)}` failing"
    names = {"test": "tests", "lint": "lint", "typecheck": "types", "build": "build", "image": "image",
             "e2e": "e2e"}
    return " and ".join(names[c] for c in last) + " passed"


_QUESTION = re.compile(r"\?\s*$")


def _working_answer(items: Sequence[Item], responses: Sequence[Item]) -> Item:
    """The answer that says what the session did: the last one, unless it only answered a
    question asked after the work with no work of its own ("did the seeds survive that?" →
    "Yes — …"); then the answer that reported the work before it."""
    last = responses[-1]
    work = 0
    asked = False
    reported: Item | None = None
    for item in items:
        if item.kind == "tool_event":
            work += 1
        elif item.kind == "prompt":
            asked = bool(_QUESTION.search((item.narrative or item.title).strip()))
        elif item.id == last.id:
            return reported if reported is not None and asked and work == 0 else last
        elif item.kind == "response":
            if work:
                reported = item
            work = 0
    return last


def _done(ex: RuleExtractor, model_summary: str, items: Sequence[Item] = ()) -> str:
    """What was done, in one sentence: the model's summary, the first sentence of the answer
    that reported the work, or the files changed."""
    if model_summary:
        return cap(_WAS.sub("", sentences(model_summary)[0] if sentences(model_summary) else model_summary), 140)
    if ex.responses:
        last = _working_answer(items, ex.responses)
        # "Done." says nothing: the first sentence with some substance.
        said = [s for s in sentences(last.narrative or last.title) if len(s) >= 20] or \
            sentences(last.narrative or last.title)
        if said:
            return cap(_WAS.sub("", said[0]).rstrip(":."), 140)
    if ex.changed:
        files = list(ex.changed)
        return "changed " + ", ".join(files[:3]) + (f" (+{len(files) - 3} more)" if len(files) > 3 else "")
    if ex.commands:
        return "ran " + ", ".join(f"`{cap(c.command, 40)}`" for c in ex.commands[-2:])
    return ""


def session_summary(
    project: str, items: Sequence[Item], *, facts: Sequence[str] = (), model_summary: str = "",
    seen: RuleExtractor | None = None,
) -> SummaryDraft:
    """What was done (the outcome, files changed, commands run, errors met and fixed) and how
    it ended, built from every memory of the session; the request comes last, as context.
    ``seen``: an extractor that has already walked exactly ``items`` (its state is reused
    instead of walking them again)."""
    ex = seen
    if ex is None:
        ex = RuleExtractor(project)
        ex.prime(items)
    request = cap(ex.prompts[0].narrative or ex.prompts[0].title, 300) if ex.prompts else ""
    done, ending = _done(ex, model_summary, items), _ending(ex)
    lines = []
    if ex.responses:
        lines.append("Outcome: " + _first_sentences(ex.responses[-1].narrative or ex.responses[-1].title))
    elif ex.commands:
        final = ex.commands[-1]
        verdict = "failed" if final.result == "fail" else "succeeded"
        lines.append(f"Outcome: last command `{final.command}` {verdict}")
    if model_summary:
        lines.append(f"Summary: {cap(model_summary, 600)}")
    if ex.changed:
        lines.append("Files changed: " + ", ".join(list(ex.changed)[:20]))
    read_only = [p for p in ex.read if p not in ex.changed]
    if read_only:
        lines.append("Files read: " + ", ".join(read_only[:12]))
    runs: dict[str, list[str]] = {}
    for run in ex.commands:
        if run.category is None:
            continue
        runs.setdefault(run.command, []).append(run.result)
    if runs:
        shown = []
        for cmd, results in list(runs.items())[:12]:
            last = "failed" if results[-1] == "fail" else "passed" if results[-1] == "pass" else "ok"
            count = f" ×{len(results)}" if len(results) > 1 else ""
            shown.append(f"`{cmd}`{count} (last: {last})")
        lines.append("Commands: " + "; ".join(shown))
    for err in ex.fixed[:6]:
        lines.append("Fixed: " + fix_text(err).rstrip("."))
    for err in list(ex.open_errors.values())[:4]:
        lines.append(f"Unresolved: `{err.command}` fails with `{err.signature}`")
    lines.append(f"Request: {request or '(no prompt captured)'}")
    follow = [cap(p.narrative or p.title, 160) for p in ex.prompts[1:6]]
    if follow:
        lines.append("Follow-ups: " + " | ".join(follow))
    stamps = [i.created_at for i in items if i.created_at]
    tools = sum(1 for i in items if i.kind == "tool_event")
    span = f" between {ids.iso(min(stamps))} and {ids.iso(max(stamps))}" if stamps else ""
    lines.append(f"Events: {len(items)} ({len(ex.prompts)} prompts, {tools} tool events){span}")
    concepts = ["summary"] + sorted({r.category for r in ex.commands if r.category})
    if ex.fixed or ex.open_errors:
        concepts.append("error")
    narrative = "\n".join(lines)
    title = "; ".join(p for p in (done, ending) if p) or (f"asked: {request}" if request else "session")
    if ex.root:
        narrative = narrative.replace(ex.root.rstrip("/") + "/", "")
        title = title.replace(ex.root.rstrip("/") + "/", "")
    return SummaryDraft(
        title=cap(f"Session summary: {title}", 200),
        narrative=narrative,
        files=list(ex.changed)[:50],
        concepts=concepts,
        facts=list(facts)[:20],
    )

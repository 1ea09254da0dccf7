"""The session summary: what was asked, what was done and how it ended."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aletheia import ids
from aletheia.extract.errors import fix_text
from aletheia.extract.items import Item, cap
from aletheia.extract.rules import RuleExtractor
from aletheia.extract.statements import sentences


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


def session_summary(
    project: str, items: Sequence[Item], *, facts: Sequence[str] = (), model_summary: str = "",
    seen: RuleExtractor | None = None,
) -> SummaryDraft:
    """The request, what was done (files changed, commands run, errors met and fixed) and how
    it ended, built from every memory of the session.  ``seen``: an extractor that has
    already walked exactly ``items`` (its state is reused instead of walking them again)."""
    ex = seen
    if ex is None:
        ex = RuleExtractor(project)
        ex.prime(items)
    request = cap(ex.prompts[0].narrative or ex.prompts[0].title, 300) if ex.prompts else ""
    lines = [f"Request: {request or '(no prompt captured)'}"]
    follow = [cap(p.narrative or p.title, 160) for p in ex.prompts[1:6]]
    if follow:
        lines.append("Follow-ups: " + " | ".join(follow))
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
    if ex.responses:
        lines.append("Outcome: " + _first_sentences(ex.responses[-1].narrative or ex.responses[-1].title))
    elif ex.commands:
        final = ex.commands[-1]
        verdict = "failed" if final.result == "fail" else "succeeded"
        lines.append(f"Outcome: last command `{final.command}` {verdict}")
    stamps = [i.created_at for i in items if i.created_at]
    tools = sum(1 for i in items if i.kind == "tool_event")
    span = f" between {ids.iso(min(stamps))} and {ids.iso(max(stamps))}" if stamps else ""
    lines.append(f"Events: {len(items)} ({len(ex.prompts)} prompts, {tools} tool events){span}")
    concepts = ["summary"] + sorted({r.category for r in ex.commands if r.category})
    if ex.fixed or ex.open_errors:
        concepts.append("error")
    narrative = "\n".join(lines)
    if ex.root:
        narrative = narrative.replace(ex.root.rstrip("/") + "/", "")
    return SummaryDraft(
        title=cap(f"Session summary: {request or 'session'}", 200),
        narrative=narrative,
        files=list(ex.changed)[:50],
        concepts=concepts,
        facts=list(facts)[:20],
    )


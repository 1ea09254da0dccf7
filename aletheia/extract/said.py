"""Commands an assistant's answer names for a purpose: "`uv sync` to install, `uv run pytest
-q -x` for tests", "`bun run e2e` runs the suite", "`bun run test` = `vitest run`".

A session a host hands over without its tool calls (or a host whose tool events we never see)
still says in its answers how the project is run; without this, the project's commands were
known only from Bash events.  Only code spans are read (an answer writes commands that way), and
only those the command classifier gives a purpose (test, build, migrate, set up …); a span in a
proposal, a question, a negation or a report of a failure is not how the project runs.
"""

from __future__ import annotations

import re

from aletheia.extract.commands import category, normalize_command
from aletheia.extract.statements import sentences

_SPAN = re.compile(r"`([^`\n]{3,160})`")
# A command's first word: a program name or a relative path to one (``bin/dev``, ``./gradlew``).
_PROGRAM = re.compile(r"^(?:\./|bin/)?[a-z][\w.+-]*(?:/[\w.+-]+)*$")
# Right before the span: it is the old way, not to be used, or a failed attempt.
_NOT_BEFORE = re.compile(
    r"\b(?:instead of|rather than|no longer|not|never|don'?t|do not|doesn'?t|didn'?t|without|"
    r"was|were|used to|replac\w*|remov\w*|drop\w*|old|from)\W{0,3}"
    r"(?:(?:run|use|using|running|call|calling|the|plain)\W+)?$", re.I)
# Right after the span: it failed, or it is what was replaced.
_NOT_AFTER = re.compile(r"^\s*(?:→|->|=>)|^\W{0,3}(?:\w+\W+){0,2}(?:fail\w*|errors?|broke\w*|crash\w*|is gone|"
                        r"was replaced|no longer|hangs?|timed out)\b", re.I)
# The sentence only proposes, asks or conditions ("I'd run …", "want me to …", "if you …").
_PROPOSAL = re.compile(r"\b(?:could|might|would|should we|shall|consider|alternatively|if you|"
                       r"want me to|I'?d|suggest|recommend)\b", re.I)
MAX_COMMANDS = 8


def answer_commands(text: str) -> list[tuple[str, str]]:
    """(command, what it does) for each command the answer names for a purpose, in order, the
    first one for each purpose."""
    out: dict[str, str] = {}
    for sentence in sentences(text)[:60]:
        if sentence.rstrip().endswith("?") or _PROPOSAL.search(sentence):
            continue
        for m in _SPAN.finditer(sentence):
            span = m.group(1).strip()
            words = span.split()
            if len(words) < 2 or not _PROGRAM.match(words[0]) or span.endswith((".", ":")):
                continue
            if _NOT_BEFORE.search(sentence[:m.start()]) or _NOT_AFTER.search(sentence[m.end():]):
                continue
            command = normalize_command(span)
            cat = category(command) if command else None
            if cat is None or cat == "vcs" or command in out or cat in out.values():
                continue  # (the first named for a purpose: "`bun run test` = `vitest run`")
            out[command] = cat
            if len(out) >= MAX_COMMANDS:
                break
    return list(out.items())

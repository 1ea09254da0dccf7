"""The tools a session's talk names as the project's own: "add a Celery task", "the FastAPI
app", "`uv run pytest -q`" — what a store without tool events (a host that hands over prompts
and answers only) knows of its stack, where manifests and install commands are never seen.

A name counts when the general vocabulary of ``aletheia.concepts`` knows it as a tool that
answers a concept (a test runner, a database, an ORM, a queue …), and the sentence names it as
in use: not in a question, a proposal, a comparison or a list of options, not as the old side
of a change ("move from X to Y", "drop X"), nor right after words that set it aside ("instead of
X", "not X", "X or Y"), nor looked at and turned down ("I looked at X but …"); nor anywhere in a text that sets it aside
once.  A tool whose name is an ordinary word (Black, Express, Spring, Make …)
counts only where it is written as a name: in a code span, with a capital inside a sentence, or
with a version after it.  Each name is one fact per project (``uses:NAME``); its evidence is the
fact store's (the sessions that name it, whether the user did), so a tool named once in an answer
stays out of the block, and one the sessions keep naming reaches the stack line.
"""

from __future__ import annotations

import re

from aletheia.changes import PROPOSAL, change_olds, sentences
from aletheia.toolkinds import ORDINARY, TOOLS, phrases, tool_key

# A name as prose writes it: a word, a dotted or dashed name ("Next.js", "good_job").
_CANDIDATE = re.compile(r"(?<![\w@/.-])([A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*)")
_SPAN = re.compile(r"`[^`\n]+`")
# Right before a name: it is set aside (a word or two may come between: "not a hand-tuned
# rubocop config", "skip the default minitest"), the old way, one of several options, or a part
# of another tool ("ruff's isort").
_SET_ASIDE = re.compile(
    r"\b(?:(?:instead of|rather than|in place of|in lieu of|not|no|never|without|skip\w*|avoid\w*)"
    r"(?:\W+[\w-]+){0,2}|replac\w*|drop\w*|remov\w*|ditch\w*|uninstall\w*|from|off|away from|over|"
    r"vs\.?|versus|or|nor|than|like|unlike|either|alternatives? (?:to|like)|such as|e\.g\.|"
    r"considered|consider\w*|evaluat\w*|compar\w*|except)\W*(?:(?:the|a|an|our|plain|using|use)\W+)?$"
    r"|\w['’]s\s+$", re.I)
# Right after a name: the other option, or it went.
_AFTER = re.compile(r"^\W{0,3}(?:or|vs\.?|versus|nor)\b|^\s*(?:→|->|=>)|"
                    r"^\W{0,3}(?:\w+\W+){0,2}(?:is|was|were|are|has been|have been|got) (?:now )?(?:gone|removed|"
                    r"replaced|dropped|deprecated|retired|skipped|out|deleted|uninstalled|disabled|"
                    r"switched off|turned off|no longer used|superseded)\b|"
                    # the other tool's origin: "fourmolu, ormolu's configurable fork" (the fork is
                    # what is used), "Valkey, Redis's open-source successor"
                    r"^['’]s\s+(?:[\w-]+\s+){0,2}(?:fork|successor|replacement|rewrite|drop-in)\b", re.I)
# A sentence that weighs options or supposes: what it names is not (yet) the project's.
_WEIGHING = re.compile(r"\b(?:if we|whether|maybe|perhaps|options?|alternatives?|pros and cons|"
                       r"trade-?offs?|evaluat\w*|benchmark\w* against|vs\.?|versus)\b", re.I)
# Looked at, then turned down: "I looked at SQLDelight but the team knows Room", "we tried
# Zustand, but …".  Only with the "but" after it: "I tried pytest -x and it passed" is in use.
_TRIED = re.compile(r"\b(?:looked (?:at|into)|(?:had|took) a look at|tried|tried out|checked out|"
                    r"played with|toyed with|thought about|experimented with|prototyped with)"
                    r"\W*(?:(?:the|a|an)\W+)?$", re.I)
_BUT_AFTER = re.compile(r"^[^.;:!?]{0,40}?\bbut\b", re.I)
_VERSION_AFTER = re.compile(r"^`?\s?v?\d")
_LEAD = re.compile(r"^\W*")


def named_tools(text: str) -> list[tuple[str, str, str]]:
    """(key, the name as written, label) for each tool ``text`` names as in use, in order."""
    out: dict[str, tuple[str, str, str]] = {}
    aside: set[str] = set()  # set aside somewhere in the text: "Hilt (not Koin — we had Koin blow up …)"
    for sentence in sentences(text)[:80]:
        if sentence.rstrip().endswith("?") or PROPOSAL.search(sentence) or _WEIGHING.search(sentence):
            continue
        olds = {o.strip("`").lower() for o in change_olds(sentence)}
        spans = [m.span() for m in _SPAN.finditer(sentence)]
        start = len(_LEAD.match(sentence).group(0))  # type: ignore[union-attr]
        # (a two-word name is one tool: "Jetpack Compose" is no docker compose; written as a
        # name, with a capital, or in a code span)
        named = {a: (b, k) for a, b, k in phrases(sentence)}
        for m in _CANDIDATE.finditer(sentence):
            word, end = m.group(1), m.end()
            if any(a < m.start() < b for a, (b, _) in named.items()):
                continue
            key = tool_key(word)
            if m.start() in named:
                end, key = named[m.start()]
                word = sentence[m.start():end]
            if key is None or key in out:
                continue
            if word.lower() in olds or key in olds:
                aside.add(key)
                continue
            in_span = any(a < m.start() and end < b for a, b in spans)
            if m.start() in named and not in_span and word.islower():
                continue
            if key in ORDINARY and not in_span and m.start() not in named:
                written = (word[0].isupper() and m.start() > start) or any(c.isupper() for c in word[1:])
                if not written and not _VERSION_AFTER.match(sentence[end:end + 4]):
                    continue
            before = re.split(r"[;—–]", sentence[max(0, m.start() - 40):m.start()])[-1]  # this clause
            if _SET_ASIDE.search(before) or \
                    _AFTER.search(sentence[end:end + 40]) or \
                    (_TRIED.search(before) and _BUT_AFTER.search(sentence[end:end + 60])):
                aside.add(key)
                continue
            out[key] = (key, word.strip("`"), TOOLS[key])
    # A tool the text sets aside is not in use by its word, wherever else it names it (the
    # story of why it was dropped names it again, with no negation near).
    return [v for k, v in out.items() if k not in aside]

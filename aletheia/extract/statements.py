"""Durable statements in prose: conventions the user states, decisions and causes the
assistant states, caveats."""

from __future__ import annotations

import re

from aletheia.extract.items import Item

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#{1,6})\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
USER_CONVENTION = re.compile(
    r"\b(?:always|never|don'?t|do not|(?:must|should)(?:n'?t| not)? (?:always|never|use|go|live|stay|be run|pass)|"
    r"prefer|instead of|rather than|"
    r"make sure|avoid|we use|we're using|our convention|by convention|only use|keep (?:it|them|the|all|each)|"
    r"use \S+ (?:for|to|instead|when|rather))\b",
    re.I,
)
DECISION = re.compile(
    r"\b(?:I (?:chose|decided|opted|went with|picked|kept|switched|preferred|settled on)|decided to|"
    r"chose to|opted (?:to|for)|went with|in favou?r of|instead of|rather than|trade-?off)\b",
    re.I,
)
CAUSE = re.compile(
    r"\b(?:root cause|the (?:bug|issue|problem|failure|error|culprit|regression) (?:was|is|came from)|"
    r"caused by|was failing because|were failing because|failed because|fails because)\b",
    re.I,
)
CAVEAT = re.compile(
    r"^(?:note|heads[- ]up|caveat|gotcha|warning)\b[:,]?|\bonly works (?:after|when|if|with)\b|"
    r"\bmust be run\b|\bhas to be run\b|\bneeds to be run\b",
    re.I,
)
_LABEL = re.compile(r"^(?:note|heads[- ]up|caveat|gotcha|warning)\b[:,]?\s*", re.I)
_VAGUE_START = re.compile(r"^(?:this|that|it|these|those)\b", re.I)


def sentences(text: str) -> list[str]:
    text = _CODE_BLOCK.sub(" ", text)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).replace("**", "").strip()
        if not line:
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def sentence_facts(item: Item, user: bool) -> list[tuple[str, str]]:
    """(kind, text) for the sentences in a prompt, note or response that state something
    durable."""
    found: list[tuple[str, str]] = []
    parts = sentences(item.narrative or item.title)
    for i, sentence in enumerate(parts):
        if len(sentence) < 25 or len(sentence) > 320 or sentence.endswith("?"):
            continue
        text = sentence
        if _VAGUE_START.match(sentence) and i > 0 and len(parts[i - 1]) + len(sentence) < 360:
            text = f"{parts[i - 1]} {sentence}"  # "This …" needs the sentence it points at
        if user:
            if USER_CONVENTION.search(sentence):
                found.append(("convention", f"Convention: {text}"))
        elif CAUSE.search(sentence):
            found.append(("error_fix", f"Cause: {text}"))
        elif DECISION.search(sentence):
            found.append(("decision", f"Decision: {text}"))
        elif CAVEAT.search(sentence):
            found.append(("fact", f"Note: {_LABEL.sub('', text, count=1).strip()}"))
        elif USER_CONVENTION.search(sentence) and re.search(r"\b(?:project|repo|codebase|tests?)\b", sentence, re.I):
            found.append(("convention", f"Convention: {text}"))
        if len(found) >= 5:
            break
    return found

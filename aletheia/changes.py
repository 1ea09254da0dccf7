"""Change statements and what they leave: the old values a statement like "move from poetry to
uv" or "drop black" names, and a text said without them ("Switch the JWTs from HS256 to RS256"
→ "Switch the JWTs to RS256"; a clause that names a replaced value goes).  Stdlib only: the
context block says recent work in its current form with it, in the SessionStart hook."""

from __future__ import annotations

import re

_TOKEN = r"`[^`]{1,40}`|[\w@][\w.@/+#-]{0,40}"
_CHANGES = (
    re.compile(rf"\bfrom (?:the |our |using )?(?P<old>{_TOKEN}) (?:to|over to) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?P<old>{_TOKEN})(?:,? and (?:the )?(?P<old2>{_TOKEN}))? "
               rf"(?:with|by) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"(?P<new>{_TOKEN}) (?:instead of|in place of|rather than) (?P<old>{_TOKEN})", re.I),
    re.compile(rf"\b(?:drop|dropped|remove|ditch|get rid of|stop using|no more|move off|move away from) "
               rf"(?:the |our |using )?(?P<old>{_TOKEN})(?: and (?:the )?(?P<old2>{_TOKEN})(?=[.,;:]| and | to | for |$))?", re.I),
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped)\b", re.I),
)
# Words a change statement can name that are not a choice of the project ("drop it").
_NOT_A_VALUE = frozenset("""a an the it its this that these those them they all any every
    everything something nothing one ones some both either way support code file files test tests
    table tables column columns endpoint endpoints line lines thing things step steps stuff part
    parts need needs idea bit lot us me you we our your more less now here there then error errors
    old new default defaults manual hand time""".split())


def value_like(token: str) -> bool:
    """Could ``token`` name a choice of the project (a tool, a library, a value)?  Not a word of
    the sentence around it: "instead of *with* this error", "instead of *holding* a worker"."""
    from aletheia.search import STOP_WORDS

    word = token.strip("`.,;:()")
    low = word.lower()
    if len(word) < 2 or low in _NOT_A_VALUE or low in STOP_WORDS:
        return False
    return not (word.islower() and word.isalpha() and low.endswith("ing") and len(low) > 5)


def change_olds(sentence: str) -> list[str]:
    """The old values a change statement names: "from HS256 to RS256" → HS256, "drop black" →
    black, "Vitest instead of Jest" → Jest."""
    olds: list[str] = []
    for pattern in _CHANGES:
        for m in pattern.finditer(sentence):
            found = m.groupdict()
            for raw in (found.get("old"), found.get("old2")):
                old = (raw or "").strip("`.,;:()")
                if not old or not value_like(old) or old in olds:
                    continue
                new = found.get("new")
                if new and new.strip("`.,;:()").lower() == old.lower():
                    continue
                olds.append(old)
    return olds


_CURRENT = (
    (re.compile(rf"\bfrom (?:the |our |using )?(?:{_TOKEN}) ((?:to|over to) (?:{_TOKEN}))", re.I), r"\1"),
    (re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?:{_TOKEN})(?:,? and (?:the )?(?:{_TOKEN}))? (?:with|by) ", re.I), "use "),
    (re.compile(rf"(?<=\S) (?:instead of|in place of|rather than) (?:{_TOKEN})", re.I), ""),
    (re.compile(r"\s*\((?:was|were|previously|formerly|vs\.?|instead of)\b[^)]*\)", re.I), ""),
    (re.compile(rf"[;,]?\s*(?:{_TOKEN})(?: and (?:{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped)\b", re.I), ""),
)


# Where a sentence can be cut into clauses: a parenthesis, a colon, semicolon or dash, a comma,
# and the conjunctions that join two statements.
_CLAUSE_SEP = re.compile(r"(\s*\([^()]*\)|\s*[;:—–]\s+|,\s+|\s+(?:and|but|while|so that)\s+)")


def mentions(text: str, token: str) -> bool:
    """Does ``text`` name ``token`` as a word (``jest`` in "Jest is slow", not in "jestful")?"""
    return re.search(r"(?<![\w.-])" + re.escape(token) + r"(?![\w-])", text, re.I) is not None


def without(text: str, olds: list[str]) -> str:
    """``text`` without the clauses (and parentheses) that name one of ``olds``: "Use GoodJob so
    jobs live in Postgres and we can drop Redis" → "Use GoodJob so jobs live in Postgres"."""
    if not olds or not any(mentions(text, o) for o in olds):
        return text
    pieces = _CLAUSE_SEP.split(text)
    kept: list[str] = []
    for i in range(0, len(pieces), 2):
        clause = pieces[i]
        sep = pieces[i - 1] if i else ""
        if sep.strip().startswith("(") and any(mentions(sep, o) for o in olds):
            sep = " " if kept else ""
        if any(mentions(clause, o) for o in olds):
            continue
        kept.append((sep if kept else "") + clause)
    out = "".join(kept).strip().lstrip(";:,—– ")
    out = re.sub(r"\s*[;:,—–]\s*$", "", out)
    if out and text.rstrip()[-1:] in ".!" and out[-1:] not in ".!?":
        out += text.rstrip()[-1]
    return out[:1].upper() + out[1:] if out else ""


def current_form(text: str, olds: list[str] | None = None) -> str:
    """A change statement said as the choice it leaves: "Switch the JWTs from HS256 to RS256"
    → "Switch the JWTs to RS256"; "Let's drop black and use ruff" → "Let's use ruff"; what
    still names an old value after that goes clause by clause.  "" when nothing is left (the
    statement only retired something)."""
    prefix = re.match(r"^(?:Convention|Decision|Note|Cause): ", text)
    head = prefix.group(0) if prefix else ""
    out = text[len(head):]
    for pattern, repl in _CURRENT:
        out = pattern.sub(repl, out)
    out = re.sub(r"\s{2,}", " ", out).replace(" ,", ",").replace(" .", ".").strip()
    out = re.sub(r"[:,;]\s*([.!]|$)", r"\1", out).strip().lstrip(";:,. ")
    out = without(out, olds if olds is not None else change_olds(text))
    out = out[:1].upper() + out[1:]
    return head + out if len(re.sub(r"[^A-Za-z]", "", out)) >= 6 else ""



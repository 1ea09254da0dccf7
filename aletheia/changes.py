"""Change statements and what they leave: the old values a statement like "move from poetry to
uv" or "drop black" names, and a text said without them ("Switch the JWTs from HS256 to RS256"
→ "Switch the JWTs to RS256"; a clause that names a replaced value goes).  Stdlib only: the
context block says recent work in its current form with it, in the SessionStart hook."""

from __future__ import annotations

import re

_TOKEN = r"`[^`]{1,40}`|[\w@][\w.@/+#-]{0,40}(?<![.-])"
_BE = r"(?:was|is|were|are|has been|have been|got|gets|will be)"
RUNTIME_NAMES = r"Python|Node(?:\.js)?|Go|Ruby|Java|Rust|PHP|Deno|Elixir"
# A runtime's version said as a change: "Node 20 → 22", "from Python 3.11 to 3.12", "Ruby 3.2 to
# 3.3" (its slot takes the new one; the text says only that).
RUNTIME_CHANGE = re.compile(rf"\b(?:from )?({RUNTIME_NAMES}) v?\d+(?:\.\d+)* ?(?:→|->|=>|to) ?(?:\1 )?v?(?=\d)")
_CHANGES = (
    re.compile(rf"\bfrom (?:the |our |using )?(?P<old>{_TOKEN}) (?:to|over to) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?P<old>{_TOKEN})(?:,? and (?:the )?(?P<old2>{_TOKEN}))? "
               rf"(?:with|by) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"(?P<new>{_TOKEN}) (?:instead of|in place of|rather than|in lieu of) (?P<old>{_TOKEN})", re.I),
    re.compile(rf"\b(?:drop|dropped|remove|ditch|ditched|get rid of|got rid of|stop using|stopped using|no more|"
               rf"move off|moved off|migrate off|migrated off|move away from|moved away from|"
               rf"phase out|phased out|uninstall|uninstalled|retire|retired|no longer (?:use|uses|using|need|"
               rf"needs|run|runs|depend on|depends on)) "
               rf"(?:the |our |using )?(?P<old>{_TOKEN})(?: and (?:the )?(?P<old2>{_TOKEN})(?=[.,;:]| and | to | for |$))?", re.I),
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped|"
               rf"retired|deprecated|no longer used)\b", re.I),
)
# Forms that read as a change only when they name a tool, not a word of the sentence ("the user
# is replaced by a guest account", "timeouts -> retries"): the old or the new value must be
# named (a capital, a digit, a dot, a dash or backticks).
_NAMED_CHANGES = (
    # "Swap Jest for Vitest", "swapped out Moment for date-fns"
    re.compile(rf"\bswap(?:s|ped|ping)? (?:out )?(?:the |our )?(?P<old>{_TOKEN}) (?:out )?for (?P<new>{_TOKEN})", re.I),
    # "Celery was replaced by Dramatiq", "Dramatiq replaces Celery"
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? {_BE} (?:now )?replaced (?:with|by) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"(?P<new>{_TOKEN}) (?:now )?(?:replaces|supersedes|superseded|takes over from) "
               rf"(?:the |our )?(?P<old>{_TOKEN})", re.I),
    # "HS256 → RS256" (an old value with a letter in it: "Node 20 → 22" is a runtime's slot)
    re.compile(rf"(?P<old>{_TOKEN}) ?(?:→|->|=>) ?(?P<new>{_TOKEN})"),
    # "go with Postgres over MySQL", "prefer pnpm over yarn"
    re.compile(rf"\b(?:go with|going with|went with|prefer|prefers|preferred|chose|choose|pick|picked|"
               rf"use|using) (?P<new>{_TOKEN}) over (?P<old>{_TOKEN})", re.I),
    # "Move the queue to SQS (was RabbitMQ)"
    re.compile(rf"\((?:was|were|previously|formerly|replacing|replaces) (?P<old>{_TOKEN})\)", re.I),
)
# Words a change statement can name that are not a choice of the project ("drop it").
_NOT_A_VALUE = frozenset("""a an the it its this that these those them they all any every
    everything something nothing one ones some both either way support code file files test tests
    table tables column columns endpoint endpoints line lines thing things step steps stuff part
    parts need needs idea bit lot us me you we our your more less now here there then error errors
    old new default defaults manual hand time""".split())


# A call, an assignment, an attribute of an object: code a change rewrote, not a tool it left.
_CODE = re.compile(r"[()=\[\]{}<>]|\s|\.[a-z_]\w{2,}")


def value_like(token: str) -> bool:
    """Could ``token`` name a choice of the project (a tool, a library, a value)?  Not a word of
    the sentence around it: "instead of *with* this error", "instead of *holding* a worker"."""
    from aletheia.search import STOP_WORDS

    word = token.strip("`.,;:()")
    low = word.lower()
    if len(word) < 2 or low in _NOT_A_VALUE or low in STOP_WORDS:
        return False
    if not any(c.isalpha() for c in word) and not word.isdigit():
        return False  # "20 →": a bare number that is not a port or the like
    if _CODE.search(token):
        return False  # code, not a choice: `print()`, `datetime.utcnow`, `x = 1`
    return not (word.islower() and word.isalpha() and low.endswith("ing") and len(low) > 5)


_NAMED = re.compile(r"^`|[A-Z0-9.@/+#-]")
# A named thing in prose (a library, a tool, a version): a code span, a word with a capital
# inside or a digit ("FastAPI", "pgx5", "3.12"), a capitalised word.
NAMED_THING = re.compile(r"`[^`]+`|\b[\w.@/+-]*(?:[A-Z][a-z]*[A-Z0-9]|[a-z][A-Z]|\d)[\w.@/+-]*\b|"
                         r"\b[A-Z][\w.+-]{1,}\b")


# A word every change form above needs (a superset: a sentence without one names no change, and
# the patterns, ~50 µs a sentence, are not run; search reads the candidates' changes per query).
_CUE = re.compile(r"from|replac|instead of|in place of|rather than|in lieu of|drop|remov|ditch|rid of|"
                  r"stop|no more|move|migrat|phase|uninstall|retire|no longer|gone|deprecated|swap|"
                  r"supersed|takes over|over|\((?:was|were|previously|formerly|replac)|→|->|=>", re.I)


def change_olds(sentence: str) -> list[str]:
    """The old values a change statement names: "from HS256 to RS256" → HS256, "drop black" →
    black, "Vitest instead of Jest" → Jest, "Swap Jest for Vitest" → Jest."""
    olds: list[str] = []
    if not _CUE.search(sentence):
        return olds
    for pattern in (*_CHANGES, *_NAMED_CHANGES):
        for m in pattern.finditer(sentence):
            found = m.groupdict()
            new = (found.get("new") or "").strip(".,;:()")
            if pattern in _NAMED_CHANGES and not any(
                    _NAMED.search(v) for v in (found.get("old") or "", new) if v):
                continue
            for raw in (found.get("old"), found.get("old2")):
                old = (raw or "").strip("`.,;:()")
                if not old or not value_like(old) or _CODE.search((raw or "").strip("`.,;:")) or old in olds:
                    continue
                if pattern in _NAMED_CHANGES and not any(c.isalpha() for c in old):
                    continue  # "Node 20 → 22": the runtime's slot says it
                if new and new.strip("`").lower() == old.lower():
                    continue
                olds.append(old)
    return olds


_CURRENT = (
    (RUNTIME_CHANGE, lambda m: ("to " if m.group(0).lower().startswith("from ") else "") + m.group(1) + " "),
    (re.compile(rf"\bfrom (?:the |our |using )?(?:{_TOKEN}) ((?:to|over to) (?:{_TOKEN}))", re.I), r"\1"),
    (re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?:{_TOKEN})(?:,? and (?:the )?(?:{_TOKEN}))? (?:with|by) ", re.I), "use "),
    (re.compile(rf"(?<=\S) (?:instead of|in place of|rather than|in lieu of) (?:{_TOKEN})", re.I), ""),
    (re.compile(r"\s*\((?:was|were|previously|formerly|replacing|replaces|vs\.?|instead of)\b[^)]*\)", re.I), ""),
    (re.compile(rf"[;,]?\s*(?:{_TOKEN})(?: and (?:{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped|retired|"
                rf"deprecated|no longer used)\b", re.I), ""),
    (re.compile(rf"\b(move|moved|moving|migrate|migrated|migrating) (?:off|away from) (?:the |our )?(?:{_TOKEN})"
                rf"(?= to )", re.I), r"\1"),
    (re.compile(rf"\b(?:drop|dropped|ditch|ditched|phase out|phased out|retire|retired|remove|removed) "
                rf"(?:the |our )?(?:{_TOKEN}),? (?:in favou?r of|for) ", re.I), "use "),
    (re.compile(rf"\bswap(?:s|ped|ping)? (?:out )?(?:the |our )?(?:{_TOKEN}) (?:out )?for ", re.I), "use "),
    (re.compile(rf"(?:{_TOKEN})(?: and (?:{_TOKEN}))? {_BE} (?:now )?replaced (?:with|by) ", re.I), "use "),
    (re.compile(rf"(?<=\S) (?:now )?(?:replaces|supersedes|superseded|takes over from) (?:the |our )?(?:{_TOKEN})",
                re.I), ""),
    (re.compile(rf"(?:{_TOKEN}) ?(?:→|->|=>) ?(?=\S)"), ""),
    (re.compile(rf"(?<=\S) over (?:{_TOKEN})(?=[.,;:!]|\s*$)", re.I), ""),
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


# --- sentences, and the changes an answer reports (read by the extractor and, for what the
# worker has not read yet, by search) ----------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#{1,6})\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")


def sentences(text: str) -> list[str]:
    text = _CODE_BLOCK.sub(" ", text)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).replace("**", "").strip()
        if not line:
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


# A sentence that only proposes, asks or conditions ("I'd switch…", "we could drop…", "if you
# want…"); ``_PROPOSED`` also takes options and negations as no report of a change.
_PROPOSING = r"could|might|would|should we|shall|consider|alternatively|if you|want me to|I'?d|suggest|recommend"
PROPOSAL = re.compile(rf"\b(?:{_PROPOSING})\b", re.I)
_PROPOSED = re.compile(rf"\b(?:{_PROPOSING}|option|not|never|didn'?t|don'?t|won'?t)\b", re.I)
_NAMED_VALUE = re.compile(r"[A-Z0-9.@/+#-]")


def reported_olds(text: str) -> list[str]:
    """The values an assistant's answer reports as replaced, in a sentence that says it was done
    ("Jobs moved from Sidekiq to GoodJob", "`moment` is gone: dates use date-fns"): named values
    only (a capital, a digit, a dot, backticks), never in a proposal, a question or a negation."""
    olds: list[str] = []
    for sentence in sentences(text)[:40]:
        if sentence.endswith("?") or _PROPOSED.search(sentence):
            continue
        for old in change_olds(sentence):
            if (_NAMED_VALUE.search(old) or f"`{old}`" in sentence) and old not in olds:
                olds.append(old)
    return olds[:6]

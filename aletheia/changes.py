"""Change statements and what they leave: the old values a statement like "move from poetry to
uv" or "drop black" names, and a text said without them ("Switch the JWTs from HS256 to RS256"
→ "Switch the JWTs to RS256"; a clause that names a replaced value goes).  Stdlib only: the
context block says recent work in its current form with it, in the SessionStart hook."""

from __future__ import annotations

import functools
import re

# A measure is one value ("30 s", "10 seconds", "512 MB"): the interval, timeout or size a change
# replaces, said with its unit.
_QTY = (r"\d+(?:\.\d+)? ?(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|"
        r"[KMGT]i?B|%)(?![\w%])")
QUANTITY = re.compile(rf"^{_QTY}$", re.I)
_TOKEN = rf"{_QTY}|`[^`]{{1,40}}`|[\w@][\w.@/+#-]{{0,40}}(?<![.-])"
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
    re.compile(rf"\b(?:drop|dropped|dropping|remove|removing|ditch|ditched|ditching|get rid of|got rid of|"
               rf"stop using|stopped using|no more|rip out|ripped out|ripping out|tear out|tore out|"
               rf"scrap|scrapped|scrapping|abandon|abandoned|abandoning|"
               rf"move off|moved off|migrate off|migrated off|move away from|moved away from|"
               rf"phase out|phased out|uninstall|uninstalled|retire|retired|no longer (?:use|uses|using|need|"
               rf"needs|run|runs|depend on|depends on)) "
               rf"(?:the |our |using )?(?P<old>{_TOKEN})(?: and (?:the )?(?P<old2>{_TOKEN})(?=[.,;:]| and | to | for |$))?", re.I),
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped|"
               rf"retired|deprecated|no longer used)\b", re.I),
    # "Use pnpm, not npm", "jobs run on GoodJob now, not Sidekiq"
    re.compile(rf"\b(?:use|uses|using|with|on|via|to|prefer|choose|pick) (?:the |our )?(?P<new>{_TOKEN})"
               rf"(?: now| from now on| going forward| everywhere)?,? (?:and )?not (?:with |on |via )?"
               rf"(?:the |our )?(?P<old>{_TOKEN})(?=[.,;:!)]|\s*$| anymore| any ?more)", re.I),
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
    # "we're off the UP5K", "now off Heroku": what the project left, said as where it no longer is
    # (a person's "off": "we're off to lunch" names nothing)
    re.compile(rf"\b(?:we'?re|we are|we'?ve (?:moved|gone|got|gotten)|we (?:moved|got)|(?:is|are) now|now) off "
               rf"(?:of )?(?:the |our )?(?P<old>{_TOKEN})(?!\w)", re.I),
    # "Move the queue to SQS (was RabbitMQ)"
    re.compile(rf"\((?:was|were|previously|formerly|replacing|replaces) (?P<old>{_TOKEN})\)", re.I),
    # "Removed Redis from the compose file", "Celery has been removed" (a named thing: "removed
    # the retry" names no choice)
    re.compile(rf"\b(?:removed|deleted|uninstalled) (?:the |our )?(?P<old>{_TOKEN})", re.I),
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? (?:was|were|has been|have been) (?:now )?"
               rf"(?:removed|dropped|retired|ripped out|scrapped)\b", re.I),
    # "the SharedPreferences version is gone", "the Webpack setup has been removed": the thing
    # named before a word for its incarnation in the code
    re.compile(rf"\bthe (?P<old>{_TOKEN}) (?:version|implementation|setup|variant|backend|code|config|"
               rf"wrapper|integration|one) (?:is|are|was|has been) (?:now )?(?:gone|removed|dropped|retired|"
               rf"deleted|ripped out)\b", re.I),
)
# A named thing's version said as a change ("Bump Django from 4.2 to 5.0", "Postgres 15 → 16",
# "Next.js 14 to 15"): the old value is the name with its old version ("Django 4.2").  A runtime's
# is its slot's (``RUNTIME_CHANGE``).
_VERSION = r"v?\d+(?:\.\d+)*(?:\.x)?"
_VERSIONED = (
    re.compile(rf"(?<![\w.@/-])(?P<name>[A-Za-z][\w.+-]*[A-Za-z0-9+]) (?P<old>{_VERSION}) ?(?:→|->|=>|to) ?"
               rf"(?:(?P=name) )?(?P<new>{_VERSION})(?!\w|\.\d)"),
    re.compile(rf"(?<![\w.@/-])(?P<name>[A-Za-z][\w.+-]*[A-Za-z0-9+]) from (?P<old>{_VERSION}) (?:to|→|->) "
               rf"(?:(?P=name) )?(?P<new>{_VERSION})(?!\w|\.\d)", re.I),
)
_NOT_A_NAME = frozenset("""from to version versions v and or the a an bump bumped upgrade upgraded
    downgrade downgraded move moved pin pinned update updated go s ms""".split())
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
    if QUANTITY.match(word):
        return True  # "30 s": a measure a change replaced
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
                  r"supersed|takes over|over|e off|now off|ot off|\((?:was|were|previously|formerly|replac)|→|->|=>|not |rip|tear|"
                  r"tore|scrap|abandon|delet|\d ?to ?v?\d", re.I)


# What makes a change statement no change (yet): asked, proposed, planned, conditional or
# negated before its change words ("Should we…", "we could drop Redis later", "if we ever replace
# Celery…", "we are not moving from Postgres"), or limited to one part of the project ("Jest is
# replaced by Vitest in the e2e tests only"): the old value stays current.
_UNSETTLED = re.compile(
    r"\b(?:could|might|would|should (?:we|I)|shall|maybe|perhaps|consider(?:ing)?|thinking (?:about|of)|"
    r"what if|if|whether|unless|once|when|plan(?:s|ning)? to|eventually|someday|option|alternatively|"
    r"suggest(?:ed|ing)?|recommend(?:ed|ing)?|propos(?:e|ed|ing)|(?-i:I'?d)|want me to|not|never|don'?t|"
    r"do not|didn'?t|won'?t|isn'?t|aren'?t|wasn'?t|no need to|hold off(?: on)?|instead of keeping)\b", re.I)
_LATER = re.compile(r"\b(?:later|next (?:week|month|quarter|year|sprint|release)|at some point|some day)\b", re.I)
_PART_ONLY = re.compile(
    r"\b(?:only|just) (?:in|for|under|inside) (?:the |our )?[\w./-]+|\b(?:in|for|under|inside) (?:the |our )?"
    r"[\w./-]+(?: [\w./-]+)? only\b|\bexcept (?:in|for)\b|\bbut keep\b", re.I)
# Where the clause a change is said in starts (what came before it is another statement).
_CLAUSE_START = re.compile(r"[;:—–.!]\s+|,\s+(?:but|so|and)\s+|,\s+")


def settled(sentence: str, at: int | None = None) -> bool:
    """Does ``sentence`` say a change is made (not asked, proposed, planned, conditional, negated
    before the change words at ``at``, or limited to one part of the project)?"""
    text = sentence.strip()
    if text.endswith("?") or _PART_ONLY.search(text):
        return False
    head = text[:at] if at is not None else text
    starts = [m.end() for m in _CLAUSE_START.finditer(head)]
    clause = head[starts[-1]:] if starts else head
    # "later" defers the change only in the clause it is said in ("switch to X later"); a later
    # clause about something else ("Tests now run on X: … fails when it changes later") does not
    rest = text[len(head):] if at is not None else ""
    end = _CLAUSE_START.search(rest)
    if _LATER.search(clause + (rest[:end.start()] if end else rest)):
        return False
    return not _UNSETTLED.search(clause)


_BUMP = re.compile(r"\b(?:bump|bumped|bumping|upgrade|upgraded|upgrading|downgrade|downgraded|pin|pinned|"
                   r"update|updated)\s+(?:the\s+|our\s+)?$", re.I)


def _versioned_pairs(sentence: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for pattern in _VERSIONED:
        for m in pattern.finditer(sentence):
            name, old, new = m.group("name"), m.group("old"), m.group("new")
            if (name.lower() in _NOT_A_NAME or re.fullmatch(RUNTIME_NAMES + r"|Node\.js", name, re.I)
                    or old.lstrip("v") == new.lstrip("v") or not settled(sentence, m.start())):
                continue
            if not (_NAMED.search(name) or _BUMP.search(sentence[:m.start()])):
                continue  # "the port from 8080 to 9000", "took 2 to 3 minutes": no named thing
            token = f"{name} {old}"
            if token.lower() not in {o.lower() for o, _ in out}:
                out.append((token, f"{name} {new}"))
    return out


def version_successor(old: str, text: str) -> str | None:
    """The version a change names after ``old`` ("Django 4.2" in "Bump Django to 5.0" → "Django
    5.0"), so prose naming it in passing ("Django 4.2, DRF, Postgres") can be said again with it."""
    m = re.fullmatch(rf"(.+) ({_VERSION})", old)
    if m is None:
        return None
    name = re.escape(m.group(1))
    for found in re.finditer(rf"(?<![\w.-]){name} (?:(?:from )?{_VERSION} ?(?:→|->|=>|to) ?)?(?:to )?"
                             rf"(?:{name} )?({_VERSION})(?!\w|\.\d)", text, re.I):
        if found.group(1).lstrip("v") != m.group(2).lstrip("v"):
            return f"{m.group(1)} {found.group(1)}"
    return None


def change_olds(sentence: str) -> list[str]:
    """The old values a change statement names: "from HS256 to RS256" → HS256, "drop black" →
    black, "Vitest instead of Jest" → Jest, "Swap Jest for Vitest" → Jest, "Bump Django from 4.2
    to 5.0" → Django 4.2.  None when the change is not made (``settled``)."""
    return [old for old, _ in change_pairs(sentence)]


def change_pairs(sentence: str) -> list[tuple[str, str]]:
    """``change_olds`` with the value each old one is replaced by ("" when the statement names
    none: "drop black")."""
    olds: list[str] = []
    pairs: list[tuple[str, str]] = []
    if not _CUE.search(sentence):
        return pairs
    for pattern in (*_CHANGES, *_NAMED_CHANGES):
        for m in pattern.finditer(sentence):
            found = m.groupdict()
            new = (found.get("new") or "").strip(".,;:()")
            if pattern in _NAMED_CHANGES and not any(
                    _NAMED.search(v) for v in (found.get("old") or "", new) if v):
                continue
            if not settled(sentence, m.start()):
                continue
            for raw in (found.get("old"), found.get("old2")):
                old = (raw or "").strip("`.,;:()")
                if not old or not value_like(old) or (_CODE.search((raw or "").strip("`.,;:"))
                                                      and not QUANTITY.match(old)) or old in olds:
                    continue
                if pattern in _NAMED_CHANGES and not any(c.isalpha() for c in old) and not (
                        re.fullmatch(r"\d{4,5}", old) or QUANTITY.match(old)):
                    continue  # "Node 20 → 22": the runtime's slot says it (a port, a measure is a value)
                if pattern in _NAMED_CHANGES[-2:] and ("/" in old or re.search(r"\.[a-z]{1,4}$", old)):
                    continue  # a file removed is a removal (``extract.removals``), not a choice
                if new and new.strip("`").lower() == old.lower():
                    continue
                olds.append(old)
                pairs.append((old, new.strip("`") if value_like(new) else ""))
    for old, new in _versioned_pairs(sentence):
        if old.lower() not in {o.lower() for o in olds}:
            olds.append(old)
            pairs.append((old, new))
    return pairs


def change_news(text: str) -> dict[str, str]:
    """What each value a text's change statements replace is replaced by (its sentences')."""
    out: dict[str, str] = {}
    for sentence in sentences(text)[:40]:
        for old, new in change_pairs(sentence):
            if new:
                out.setdefault(old.lower(), new)
    return out


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
    (re.compile(rf"\b(?:drop|dropped|dropping|ditch|ditched|ditching|phase out|phased out|retire|retired|remove|"
                rf"removed|rip out|ripped out|tear out|tore out|scrap|scrapped|abandon|abandoned) "
                rf"(?:the |our )?(?:{_TOKEN}),? (?:in favou?r of|for) ", re.I), "use "),
    (re.compile(rf"\bswap(?:s|ped|ping)? (?:out )?(?:the |our )?(?:{_TOKEN}) (?:out )?for ", re.I), "use "),
    (re.compile(rf"(?:{_TOKEN})(?: and (?:{_TOKEN}))? {_BE} (?:now )?replaced (?:with|by) ", re.I), "use "),
    (re.compile(rf"(?<=\S) (?:now )?(?:replaces|supersedes|superseded|takes over from) (?:the |our )?(?:{_TOKEN})",
                re.I), ""),
    (re.compile(rf"(?:{_TOKEN}) ?(?:→|->|=>) ?(?=\S)"), ""),
    (re.compile(rf"(?<=\S) over (?:{_TOKEN})(?=[.,;:!]|\s*$)", re.I), ""),
    (re.compile(rf"(?<=\S)(?: now| from now on| going forward| everywhere)?,? (?:and )?not (?:with |on |via )?"
                rf"(?:the |our )?(?:{_TOKEN})(?=[.,;:!)]|\s*$| anymore| any ?more)(?: anymore| any ?more)?", re.I), ""),
)


# Where a sentence can be cut into clauses: a parenthesis, a colon, semicolon or dash, a comma,
# and the conjunctions that join two statements.
_CLAUSE_SEP = re.compile(r"(\s*\([^()]*\)|\s*[;:—–]\s+|,\s+|\s+(?:and|but|while|so that)\s+)")


_UNITS = (("ms", r"ms|milliseconds?"), ("s", r"s|secs?|seconds?"), ("min", r"mins?|minutes?"),
          ("h", r"h|hrs?|hours?"), ("d", r"days?"))


@functools.lru_cache(maxsize=4096)  # (pure; a block asks it ~1,000 times of a few dozen values)
def value_pattern(token: str) -> str:
    """A regex for ``token`` as prose names it: a word on its own (``jest`` in "Jest is slow", not
    in "jestful"); a measure in any spelling of its unit ("30 s": "30 seconds", "30s")."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?) ?([A-Za-z%]+)", token.strip())
    if m:
        unit = next((spelled for short, spelled in _UNITS if re.fullmatch(spelled, m.group(2), re.I)), None)
        if unit:
            return r"(?<![\w.-])" + re.escape(m.group(1)) + rf"[ -]?(?:{unit})(?![\w-])"
    # ("busted-style specs", "a Redux-like store" name it; "jest-dom" is another package)
    return r"(?<![\w.-])" + re.escape(token) + r"(?:(?![\w-])|(?=-(?:style|like|based|flavou?red)\b))"


def mentions(text: str, token: str) -> bool:
    """Does ``text`` name ``token`` (see ``value_pattern``)?"""
    held = _held(token)
    if held is not None and not _FOLDS_TO_ASCII.search(text) and held not in text.lower():
        return False  # (a plain substring test first: most texts asked about a value lack it)
    return _mention(token).search(text) is not None


# Characters that ``re.IGNORECASE`` matches to an ASCII letter though ``str.lower`` does not
# turn them into it (ı and İ to i, ſ to s); the Kelvin sign lowers to k.
_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f]")


@functools.lru_cache(maxsize=4096)
def _held(token: str) -> str | None:
    """What every text ``value_pattern(token)`` matches in holds as it is, lower-cased: the
    number of a measure, else the token itself (None: not ASCII, where case folding is wider)."""
    if not token.isascii():
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?) ?([A-Za-z%]+)", token.strip())
    if m and any(re.fullmatch(spelled, m.group(2), re.I) for _, spelled in _UNITS):
        return m.group(1)
    return token.lower()


@functools.lru_cache(maxsize=4096)
def _mention(token: str) -> re.Pattern[str]:
    # (compiled once: through ``re.search`` each call paid the pattern's build and re's cache
    # look-up, ~5 µs, and a block's recent-work check makes ~1,000 calls)
    return re.compile(value_pattern(token), re.I)


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


# --- values an edit changes ---------------------------------------------------------------------

# One setting on one line of a config or source file: `jwt_algorithm: str = "HS256"`,
# `image: postgres:15`, `PORT=8080`, `"test": "jest"`, `const API_PORT = 4000;`, and a typed
# declaration of the C family (`std::size_t windowSize = 4096;`, `private static final int PORT = 8080;`).
_ASSIGN = re.compile(
    r"""^\s*(?:export\s+|const\s+|let\s+|var\s+|val\s+|final\s+|ARG\s+|ENV\s+)?"""
    r"""(?:(?:public|private|protected|internal|static|final|const|constexpr|inline|readonly|unsigned)\s+)*"""
    r"""(?:[A-Za-z_](?:\w|::)*(?:<[\w:, ]{1,40}>)?[*&]?\s+(?=[A-Za-z_][\w.-]*\s*=[^=]))?"""
    r"""["']?(?P<key>[A-Za-z_][\w.-]{1,60})["']?"""
    r"""\s*(?::\s*[\w\[\]., |]{1,40}?\s*(?==))?(?:=|:=|\?=|:)\s*(?P<value>"[^"]{1,60}"|'[^']{1,60}'|[^\s"'#;,]{1,60})"""
    r"""\s*[,;]?\s*(?:#.*|//.*)?$""")
# Where a change is not the project's choice: tests and fixtures ("replaced in the tests only"),
# and lockfiles (every package's version under one key).
_NOT_THE_PROJECTS = re.compile(r"(?:^|/)(?:tests?|spec|specs|__tests__|e2e|fixtures?|testdata)/|(?:^|/)test_[^/]*$|"
                               r"[._-](?:test|spec)\.[a-z]+$|_test\.go$|\.lock$|(?:^|/)(?:package-lock\.json|"
                               r"pnpm-lock\.yaml|yarn\.lock|go\.sum|bun\.lockb?)$")


# A setting that holds a runtime's version (CI's `python-version`, `NODE_VERSION`, `go-version`).
_RUNTIME_KEY = re.compile(r"(?i)(?:^|[-_.])(python|node|go|golang|java|ruby|rust|php|elixir|otp|dart|flutter|"
                          r"dotnet|deno|bun)[-_.]?(?:version|ver)$")
_RUNTIME_LABEL = {"python": "Python", "node": "Node", "go": "Go", "golang": "Go", "java": "Java", "ruby": "Ruby",
                  "rust": "Rust", "php": "PHP", "elixir": "Elixir", "otp": "OTP", "dart": "Dart",
                  "flutter": "Flutter", "dotnet": ".NET", "deno": "Deno", "bun": "Bun"}


def _settings(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m:
            out.setdefault(m.group("key"), m.group("value").strip("\"'"))
    return out


# A test folder's own build file says how the project's tests are built and run (`SIM ?= icarus`
# in `tests/Makefile`): the project's choice, unlike what a test sets up for itself.
_TEST_BUILD_FILE = re.compile(r"(?:^|/)(?:tests?|spec)/(?:GNUmakefile|[Mm]akefile|[\w.-]+\.mk|"
                              r"CMakeLists\.txt|meson\.build)$")


def edited_values(path: str, old: str, new: str, said: str = "") -> list[tuple[str, str, str]]:
    """(setting, old value, new value) for each named value an edit of ``path`` replaces at the
    same key (`jwt_algorithm: str = "HS256"` → `"RS256"`: HS256 → RS256): a choice only a diff
    shows.  Not in tests or lockfiles, not code (a call, an expression), not a bare small number.
    A value in lower case (`SIM ?= icarus`) is a name when the session's talk, ``said``, writes
    it as one in the middle of a sentence ("most of that is Icarus interpreting…")."""
    if _NOT_THE_PROJECTS.search(path) and not _TEST_BUILD_FILE.search(path):
        return []
    before, after = _settings(old), _settings(new)
    out: list[tuple[str, str, str]] = []
    for key, was in before.items():
        now = after.get(key)
        runtime = _RUNTIME_KEY.search(key)
        if runtime and now and now != was and re.fullmatch(_VERSION, was) and re.fullmatch(_VERSION, now):
            # `python-version: "3.11"` → "3.12", `node-version: 20` → 22: the runtime's version
            name = _RUNTIME_LABEL.get(runtime.group(1).lower(), runtime.group(1).title())
            out.append((key, f"{name} {was.lstrip('v')}", f"{name} {now.lstrip('v')}"))
            continue
        if (now is None or now == was or not value_like(was) or not (_NAMED.search(was) or _named_in(said, was))
                or _CODE.search(was) or not (any(c.isalpha() for c in was) or re.fullmatch(r"\d{4,5}", was))):
            continue
        if not mentions(new, was):  # (still said elsewhere in the new text: not replaced)
            out.append((key, was, now))
    return out[:6]


def _named_in(said: str, value: str) -> bool:
    """Does ``said`` write ``value`` (a word in lower case) as a name, capitalised after a word
    in lower case ("is Icarus interpreting"), not only where a sentence starts?"""
    if not said or not value.isalpha() or not value.islower():
        return False
    return re.search(rf"\b[a-z]+[,:]? \(?{re.escape(value.capitalize())}\b", said) is not None


# A number as code or prose writes it ("kd = 0.8", "ofHours 48", "30 days", "20%"), not part of a
# word or a longer number ("v2", "x86", "1.2.3" as a whole).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.]?\w)")


def edited_numbers(path: str, old: str, new: str) -> list[tuple[str, str, list[str], list[str]]]:
    """(the line with its numbers masked, the new line, the old numbers, the new numbers) for each
    line of an edit of ``path`` that changes only numbers (`kd = 0.8` → `kd = 0.5`, `(def lead
    (Duration/ofHours 24))` → `48`): a value only the diff shows, in any language's syntax.
    Not in tests or lockfiles."""
    import difflib

    if _NOT_THE_PROJECTS.search(path):
        return []
    before, after = old.splitlines(), new.splitlines()
    out: list[tuple[str, str, list[str], list[str]]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for was_line, now_line in zip(before[i1:i2], after[j1:j2], strict=True):
            key = " ".join(_NUMBER.sub("#", was_line).split())
            if key != " ".join(_NUMBER.sub("#", now_line).split()) or len(key) > 160 \
                    or not re.search(r"[A-Za-z]", key):
                continue
            pairs = [(a, b) for a, b in zip(_NUMBER.findall(was_line), _NUMBER.findall(now_line), strict=True)
                     if a != b]
            if pairs:
                out.append((key, now_line.strip(), [a for a, _ in pairs], [b for _, b in pairs]))
    return out[:6]


def says_number(text: str, number: str) -> bool:
    """Does prose ``text`` state ``number`` ("48 hours" says 48, "at 0.8" 0.8, "two a week" 2)?
    Not 0 or 1, which prose says of anything."""
    try:
        value = float(number) if number.count(".") <= 1 else None
    except ValueError:
        return False
    if value in (0.0, 1.0):
        return False
    for token in _NUMBER.findall(text):
        if token == number or (value is not None and token.count(".") <= 1 and float(token) == value):
            return True
    if value is not None and value.is_integer():
        from aletheia.measures import number_words  # (the one table of spelled numbers)

        return any(re.search(rf"\b{re.escape(w)}\b", text, re.I) for w in number_words(int(value)))
    return False


def projects_own(path: str) -> bool:
    """Is a change to ``path`` the project's choice (not a test, a fixture or a lockfile)?"""
    return not _NOT_THE_PROJECTS.search(path)


def edit_input(text: str) -> dict[str, object] | None:
    """The input of a file tool's event from its stored text (``input: {…}``, as the hook stores
    it), or None: cut off, not JSON, not an object.  The one reader of it for the extractor,
    search (``aletheia.followed``) and per-prompt recall."""
    import json

    start = text.find("input: ")
    if start < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start + 7)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def edit_pairs(data: dict[str, object]) -> list[tuple[str, str]]:
    """(old text, new text) of each edit an Edit (one) or a MultiEdit (``edits``) input makes."""
    many = data.get("edits")
    out: list[tuple[str, str]] = []
    for edit in many if isinstance(many, list) else [data]:
        if isinstance(edit, dict):
            old, new = edit.get("old_string", edit.get("old_str")), edit.get("new_string", edit.get("new_str"))
            if isinstance(old, str) and isinstance(new, str):
                out.append((old, new))
    return out


def edit_olds(text: str) -> list[str]:
    """The values an edit's diff replaces, from the text of its tool event (``input: {…}``, as
    the hook stores it; a cut-off input names none)."""
    data = edit_input(text)
    if data is None:
        return []
    path = data.get("file_path") or data.get("path") or ""
    old = data.get("old_string", data.get("old_str"))
    new = data.get("new_string", data.get("new_str"))
    if not (isinstance(path, str) and isinstance(old, str) and isinstance(new, str)):
        return []
    return [was for _, was, _ in edited_values(path, old, new)]


def stated_olds(text: str) -> list[str]:
    """What a memory the worker has not read says it replaced: an edit's tool event in its diff
    (``edit_olds``), a prompt or an answer in its words (``reported_olds``)."""
    return edit_olds(text) if text.startswith("input: ") else reported_olds(text)


# --- sentences, and the changes an answer reports (read by the extractor and, for what the
# worker has not read yet, by search) ----------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#{1,6})\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")


def sentences(text: str) -> list[str]:
    """The sentences of a prompt or an answer (code blocks out, list items and lines apart)."""
    return list(_sentences(text))


# (the worker splits each answer for its statements, the files it describes, the changes it
# reports, its summary: once is enough)
@functools.lru_cache(maxsize=64)
def _sentences(text: str) -> tuple[str, ...]:
    text = _CODE_BLOCK.sub(" ", text)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).replace("**", "").strip()
        if not line:
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return tuple(out)


# A sentence that only proposes, asks or conditions ("I'd switch…", "we could drop…", "if you
# want…"); ``_PROPOSED`` also takes options and negations as no report of a change.
_PROPOSING = r"could|might|would|should we|shall|consider|alternatively|if you|want me to|(?-i:I'?d)|suggest|recommend"
PROPOSAL = re.compile(rf"\b(?:{_PROPOSING})\b", re.I)
_PROPOSED = re.compile(rf"\b(?:{_PROPOSING}|option|not|never|didn'?t|don'?t|won'?t)\b", re.I)
_NAMED_VALUE = re.compile(r"[A-Z0-9.@/+#-]")


# A prompt that turns down what the last answer proposed ("No, keep Jest for now", "Let's not",
# "Stay on Celery"): the proposal is no choice of the project.
REJECTION = re.compile(
    r"^\W*(?:(?:no|nope|nah)\b(?! (?:worries|problem|need to ask))|let'?s not\b|not (?:now|yet)\b|"
    r"(?:let'?s )?(?:keep|stay (?:on|with)|stick (?:with|to))\b[^.!?]{0,40}\b(?:for now|as (?:it|is)|instead)\b|"
    r"(?:let'?s )?(?:stay (?:on|with)|stick (?:with|to))\b|I'?d rather (?:keep|stay|not)\b|hold off\b|"
    r"skip (?:that|it|this)\b)", re.I)


def reported_olds(text: str) -> list[str]:
    """The values an assistant's answer reports as replaced, in a sentence that says it was done
    ("Jobs moved from Sidekiq to GoodJob", "`moment` is gone: dates use date-fns"): named values
    only (a capital, a digit, a dot, backticks), never in a proposal, a question or a negation."""
    olds: list[str] = []
    said = sentences(text)[:40]
    for i, sentence in enumerate(said):
        if sentence.endswith("?") or _PROPOSED.search(sentence):
            continue
        for old in change_olds(sentence) + moved_port(sentence, said[i - 1] if i else ""):
            if (_NAMED_VALUE.search(old) or f"`{old}`" in sentence or _package_gone(sentence, old)
                    or _left_the_dependencies(sentence, old)) and old not in olds:
                olds.append(old)
    return olds[:6]


_GONE = re.compile(r"\b(?:is|are|was|were|has been|have been) (?:now )?(?:gone|removed|dropped|uninstalled)\b|"
                   r"\b(?:removed|uninstalled|dropped)\b", re.I)


# "pandas is gone from the dependencies", "moment was removed from package.json": the sentence
# itself says the value was a package, whatever its form (a plural-looking name, no capital).
_LEFT_DEPENDENCIES = re.compile(
    r"\b(?:is|are|was|were|has been|have been) (?:now )?(?:gone|removed|dropped|uninstalled) from (?:the |our |its )?"
    r"(?:dependencies|deps|dev-dependencies|requirements|lock ?file|uv\.lock|pyproject(?:\.toml)?|package\.json|"
    r"Gemfile|go\.mod|Cargo\.toml|mix\.exs|Podfile|Package\.swift)\b", re.I)


def _left_the_dependencies(sentence: str, old: str) -> bool:
    m = _LEFT_DEPENDENCIES.search(sentence)
    return m is not None and re.fullmatch(r"[a-z][a-z0-9_.-]{1,40}", old) is not None \
        and re.search(r"(?<![\w`-])" + re.escape(old) + r"`? " + re.escape(m.group(0).split(" ", 1)[0]), sentence) is not None


def _package_gone(sentence: str, old: str) -> bool:
    """A package written in lower case, reported gone beside a named one ("Passwords are hashed
    with `pwdlib`; passlib and bcrypt are gone"): a name (no plural, no common word), in a
    sentence that says it is gone and names the tool that took its place."""
    return (re.fullmatch(r"[a-z][a-z0-9_-]{2,30}", old) is not None and not old.endswith("s")
            and _GONE.search(sentence) is not None
            and any(t.strip("`").lower() != old for t in NAMED_THING.findall(sentence) if t.startswith("`")))


# The project's server put on another port ("Move ferrydock to port 8090", "now listens on
# :8090"), and the one port it names beside that, in the sentence or the one before ("the
# gateway already listens on 8080, so …", "(the gateway has 8080)"): the old port.
_TO_PORT = re.compile(r"\b(?:move[sd]?|moving|switch(?:ed|es)?|change[sd]?|put|serve[sd]?|run[s]?|listen[s]?|"
                      r"listening|bind[s]?|expose[sd]?)\b[^.;]{0,40}?\b(?:to|on) (?:port )?:?(\d{4,5})\b", re.I)
_A_PORT = re.compile(r"(?:\bport |\bon :?|:|\bhas |\bat )(\d{4,5})\b|\b(\d{4,5}) is (?:taken|in use|busy)", re.I)


def moved_port(sentence: str, before: str = "") -> list[str]:
    """``["8080"]`` for "Move the API to port 8090; the gateway has 8080" (one other port named
    beside the move, in the sentence or the one before); [] otherwise."""
    to = _TO_PORT.search(sentence)
    if to is None or not settled(sentence, to.start()):
        return []
    others = {n for m in _A_PORT.finditer(f"{before} {sentence}") for n in m.groups() if n and n != to.group(1)}
    return sorted(others) if len(others) == 1 else []

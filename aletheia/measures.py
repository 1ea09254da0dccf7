"""Measures said in prose: how long (a timeout, a period, how often), at what time of day, what
share.  A question that asks for one ("How long do we wait…?", "How often does the job run?",
"What time does the backup start?", "How much do frames overlap?") is answered by the newest
measure of its kind said beside its words: "a 10 second timeout" then "fail fast: 3 second
timeout", "every night at 3" then "move them to quarter past two", "once a day" then "twice a
day".  A change of a measure rarely names the old one in a form a change statement has, and
the old and the new spell it differently ("once a day" is every 24 hours), so both are read as
numbers: a period in seconds, a time of day in minutes, a share in percent.  Text only (search
does the reading); stdlib only."""

from __future__ import annotations

import functools
import re

_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
                 "thirty": 30, "forty-five": 45, "sixty": 60, "ninety": 90}
_WORDS = "|".join(sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True))
_UNIT_SECONDS = (("ms", r"ms|millis(?:econds?)?", 0.001), ("s", r"s|secs?|seconds?", 1.0),
                 ("min", r"m|mins?|minutes?", 60.0), ("h", r"h|hrs?|hours?", 3600.0),
                 ("d", r"d|days?|nights?", 86400.0), ("w", r"w|wks?|weeks?", 604800.0),
                 ("mo", r"months?", 2592000.0))
_UNIT = "|".join(spelled for _, spelled, _ in _UNIT_SECONDS)
_PER = {"once": 1, "twice": 2, "three times": 3, "four times": 4}
_EVERY_WORD = {"hourly": 3600.0, "daily": 86400.0, "nightly": 86400.0, "weekly": 604800.0, "monthly": 2592000.0}

# "10 s", "10-second", "3 second", "12 hours", "90s"; "a day", "two weeks" (a word's number only
# before a unit spelled out: "and" is no "an d")
_DURATION = re.compile(rf"(?<![\w.:])(?:(\d+(?:\.\d+)?)[ -]?({_UNIT})|({_WORDS})[ -](seconds?|minutes?|hours?|days?|"
                       r"nights?|weeks?|months?))(?![\w%])", re.I)
# "once a day", "twice per hour", "three times a week"
_FREQUENCY = re.compile(r"\b(once|twice|three times|four times) (?:a|an|per|every) (second|minute|hour|day|night|"
                        r"week|month)\b", re.I)
# "every night", "every 12 hours", "every other day"; "hourly", "nightly"
_EVERY = re.compile(rf"\bevery (?:(\d+(?:\.\d+)?|other|{_WORDS}) )?(second|minute|hour|day|night|week|month|morning|"
                    r"evening)s?\b|\b(hourly|daily|nightly|weekly|monthly)\b", re.I)
_HOURS = ("one two three four five six seven eight nine ten eleven twelve").split()
_HOUR = r"(\d{1,2}|" + "|".join(_HOURS) + r")"
# "3 am", "02:15", "at 3" (as a time: "every night at 3,", "at 3 on sundays", not "at 3 attempts"),
# "quarter past two", "half past 11", "noon", "midnight"
_CLOCK = re.compile(rf"\b(?:(quarter|half|twenty|ten|five) (past|to|after) {_HOUR}|"
                    rf"(\d{{1,2}})(?::(\d{{2}}))? ?([ap]\.?m\.?)(?!\w)|(?<![\w:])(\d{{1,2}}):(\d{{2}})(?![\w:])|"
                    rf"\bat {_HOUR}(?=\s*(?:[,;.)]|$|(?:on|every|each|in the|daily|nightly|sharp|o'clock|utc|local)\b))|"
                    r"(noon|midnight))", re.I)
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ?(?:%|percent\b)", re.I)

# What a question asks for: a period (how long, how often, a timeout, an interval), a time of day,
# a share.
_ASKS_PERIOD = re.compile(r"\bhow (?:long|often|frequently)\b|\b(?:timeouts?|intervals?|delays?|ttl|expir\w*|"
                          r"frequency|period|lifetime|wait)\b", re.I)
_ASKS_CLOCK = re.compile(r"\bwhat time\b|\bat what (?:time|hour)\b|\bwhen does\b[^?]*\b(?:start|run|fire|kick off|begin)",
                         re.I)
_ASKS_SHARE = re.compile(r"\bhow much\b|\bpercent(?:age)?\b|\bwhat (?:share|fraction|ratio)\b", re.I)


# Words a sentence setting a measure anew says it with ("raised the overlap to 75 %", "move them
# to quarter past two", "sessions are good for 14 days now", "make the check twice a day",
# "`FX_TIMEOUT_SECONDS = 3.0` (was 10)"): a measure said without one (a load test "for 20 s") is
# no change of the one the question asks for.
CHANGE_CUE = re.compile(r"\b(?:now|instead|was|were|no longer|any ?more|chang\w*|switch\w*|mov(?:e|ed|es|ing)|"
                        r"rais\w*|lower\w*|increas\w*|decreas\w*|reduc\w*|bump\w*|make|made|cut|shorten\w*|"
                        r"extend\w*|doubl\w*|halv\w*|fail fast)\b", re.I)


def asked(question: str) -> frozenset[str]:
    """The kinds of measure ``question`` asks for: ``period``, ``clock``, ``share``."""
    kinds = set()
    if _ASKS_PERIOD.search(question):
        kinds.add("period")
    if _ASKS_CLOCK.search(question):
        kinds.update(("clock", "period"))  # ("nightly" says when too)
    if _ASKS_SHARE.search(question):
        kinds.add("share")
    return frozenset(kinds)


def number_words(value: int) -> tuple[str, ...]:
    """The words that spell ``value`` ("two" for 2, "twenty" for 20); none for 1's "a"/"an"."""
    return tuple(w for w, v in _NUMBER_WORDS.items() if v == value and w not in ("a", "an"))


def _number(raw: str) -> float:
    low = raw.lower()
    if low in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[low])
    if low == "other":
        return 2.0
    return float(raw)


@functools.lru_cache(maxsize=256)
def _seconds(unit: str) -> float:
    low = unit.lower()
    for _, spelled, factor in _UNIT_SECONDS:
        if re.fullmatch(spelled, low):
            return factor
    return 0.0


# A setting's key that says its unit (`FX_TIMEOUT_SECONDS`, `poll_interval_ms`, `cacheTtlMinutes`): the
# value set is a period (in code a timeout or an interval is a number, its unit in the name).
_KEY_UNIT = re.compile(r"(?:^|_)(ms|millis(?:econds)?|s|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?)$")


def keyed_period(key: str, value: str) -> float | None:
    """The period in seconds a setting's ``value`` sets when its key (snake case, lower: the slot's
    name in ``aletheia.claims``) names the unit: `fx_timeout_seconds` = 10 → 10.0."""
    unit = _KEY_UNIT.search(key)
    if unit is None or unit.start() == 0 or not re.fullmatch(r"\d+(?:\.\d+)?", value):
        return None
    return float(value) * _seconds(unit.group(1))


def _hour(raw: str) -> int:
    low = raw.lower()
    return _HOURS.index(low) + 1 if low in _HOURS else int(low)


def found(text: str, kinds: frozenset[str]) -> list[tuple[int, str, float]]:
    """(offset, kind, value) of each measure of ``kinds`` in ``text``, in order: a period in
    seconds, a time of day in minutes after midnight, a share in percent."""
    return [(at, kind, value) for at, kind, value, _ in found_words(text, kinds)]


# Something every measure holds (a sentence without one is not read by the patterns above).
_ANY = re.compile(r"\d|%|\b(?:once|twice|every|hourly|daily|nightly|weekly|monthly|noon|midnight|percent|past|"
                  r"seconds?|minutes?|hours?|days?|nights?|weeks?|months?)\b", re.I)


def found_words(text: str, kinds: frozenset[str]) -> list[tuple[int, str, float, str]]:
    """``found`` with the words that say each measure."""
    return list(_found_words(text, kinds)) if _ANY.search(text) else []


# (pure, and search reads the same candidates' sentences query after query: ~40 µs a sentence)
@functools.lru_cache(maxsize=4096)
def _found_words(text: str, kinds: frozenset[str]) -> tuple[tuple[int, str, float, str], ...]:
    out: list[tuple[int, str, float, str]] = []
    if "period" in kinds:
        spans: list[tuple[int, int]] = []
        for m in _FREQUENCY.finditer(text):
            out.append((m.start(), "period", _seconds(m.group(2)) / _PER[m.group(1).lower()], m.group(0)))
            spans.append(m.span())
        for m in _EVERY.finditer(text):
            if m.group(3):
                out.append((m.start(), "period", _EVERY_WORD[m.group(3).lower()], m.group(0)))
            else:
                unit = {"morning": "day", "evening": "day"}.get(m.group(2).lower(), m.group(2))
                out.append((m.start(), "period", _number(m.group(1) or "1") * _seconds(unit), m.group(0)))
            spans.append(m.span())
        for m in _DURATION.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue  # (the "a day" of "once a day")
            seconds = _seconds(m.group(2) or m.group(4))
            if seconds:
                out.append((m.start(), "period", _number(m.group(1) or m.group(3)) * seconds, m.group(0)))
    if "clock" in kinds:
        for m in _CLOCK.finditer(text):
            g = m.groups()
            if g[0]:
                minutes = {"quarter": 15, "half": 30, "twenty": 20, "ten": 10, "five": 5}[g[0].lower()]
                hour = _hour(g[2]) % 12
                value = hour * 60 + minutes if g[1].lower() in ("past", "after") else (hour * 60 - minutes) % 720
            elif g[3]:
                hour = int(g[3]) % 12 + (12 if g[5].lower().startswith("p") else 0)
                value = hour * 60 + int(g[4] or 0)
            elif g[6]:
                value = int(g[6]) * 60 + int(g[7])
            elif g[8]:
                value = _hour(g[8]) % 12 * 60
            else:
                value = 720 if g[9].lower() == "noon" else 0
            out.append((m.start(), "clock", float(value % 720), m.group(0)))  # (am or pm: rarely said both ways)
    if "share" in kinds:
        out += [(m.start(), "share", float(m.group(1)), m.group(0)) for m in _PERCENT.finditer(text)]
    return tuple(sorted(out))


# How far apart a period's old and new values can be: a timeout goes from 10 s to 3 s, a job
# from daily to twice a day, a session from 30 days to 14 (the "20 s" a load test ran for is no
# session length).
PERIOD_FACTOR = 30.0


def comparable(kind: str, value: float, others: set[float]) -> bool:
    """Could ``value`` have replaced one of ``others`` (all of one ``kind``)?  A period within
    ``PERIOD_FACTOR`` of one of them; a time of day or a share, any."""
    if kind != "period":
        return bool(others)
    return any(max(value, o) <= PERIOD_FACTOR * min(value, o) for o in others if o > 0 and value > 0)


_WORD = re.compile(r"[a-z][a-z-]{3,}")
# Words any sentence about a measure may hold: they name no subject.
_NOT_SUBJECT = frozenset("""that this with from into have been will would should could make made keep kept
    every once twice times long often time after before about only just than then them they their there
    what when where which while each also still again more less most much many same other like good fine
    seconds second minutes minute hours hour days day nights night weeks week months month percent
    now instead change changed changes move moved moving raise raised lower lowered""".split())


_LABEL = re.compile(r"^\w+:\s+")  # a fact's kind ("Decision: …")
_CLAUSE = re.compile(r"[;,:]\s+|\s+(?:and|but|while|so|because)\s+")


def subject_words(sentence: str) -> frozenset[str]:
    """The words that say what a sentence's measure is of, by their first five letters
    ("sessions" and "session" are one), without the words of measures and changes."""
    words = _WORD.findall(_LABEL.sub("", sentence).lower())
    return frozenset(w[:5] for w in words if w not in _NOT_SUBJECT and w.rstrip("s") not in _NOT_SUBJECT)


ALL = frozenset({"period", "clock", "share"})


def said(sentences: list[str], *, anew: bool = False) -> list[tuple[str, float, frozenset[str], str]]:
    """(kind, value, subject words of its sentence, the words saying it) for each measure
    ``sentences`` say; with ``anew``, only those said in a clause with a change's words
    (``CHANGE_CUE``: "move them to quarter past two", not the "the NAS scrub starts at 3" after it)."""
    out: list[tuple[str, float, frozenset[str], str]] = []
    for sentence in sentences:
        if anew and not CHANGE_CUE.search(sentence):
            continue
        parts = [c for c in _CLAUSE.split(sentence) if CHANGE_CUE.search(c)] if anew else [sentence]
        found_here = [f for part in parts for f in found_words(part, ALL)]
        if found_here:
            words = subject_words(sentence)
            out += [(kind, value, words, raw) for _, kind, value, raw in found_here]
    return out

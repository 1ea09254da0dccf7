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


# What the user says that later sessions must follow or know: rules (always / never / only …),
# choices (use / switch / go with …) and stack lists ("Next.js 14 with the App Router, …").
USER_RULE = re.compile(
    r"\b(?:always|never|must(?:n'?t| not)?|should(?:n'?t| not)?|don'?t|do not|no longer|"
    r"only|everywhere|from now on|by default|make sure|avoid|prefer(?:red)?|instead of|"
    r"rather than|ever|house rules?|ground rules?|convention|stays?|standard way)\b|"
    r"\b(?:no|not) `",
    re.I,
)
USER_CHOICE = re.compile(
    r"\b(?:use|using|go with|going with|switch(?:ed)?|mov(?:e|ed|ing)\b.{0,40}\bto|"
    r"migrate|replac(?:e|ed)|drop(?:ped)?|adopt|stick with|stay on|keep|bump|upgrade|downgrade|"
    r"pin|target|stack|store|put|sign|hash|deploy|run on|runs on|listen|poll|timeout|"
    r"want)\b",
    re.I,
)
APPROVAL = re.compile(
    r"^\W*(?:yes|yep|yeah|agreed|ok(?:ay)?|sounds good|perfect|great|good|nice|works|"
    r"do (?:that|it|this|both|\(?[a-d]\)|option)|go (?:with|ahead|for)|let'?s do|ship it|lgtm|"
    r"use (?:the|that|your))\b",
    re.I,
)
RECOMMEND = re.compile(r"\b(?:I'?d|I would|I recommend|I suggest|my recommendation|recommend(?:ed)?|"
                       r"the better fit|better fit|we should)\b", re.I)
_NAMED = re.compile(r"`[^`]+`|\b[\w.@/+-]*(?:[A-Z][a-z]*[A-Z0-9]|[a-z][A-Z]|\d)[\w.@/+-]*\b|"
                    r"\b[A-Z][\w.+-]{1,}\b")
_TOKEN = r"`[^`]{1,40}`|[\w@][\w.@/+#-]{0,40}"
_CHANGES = (
    re.compile(rf"\bfrom (?:the |our |using )?(?P<old>{_TOKEN}) (?:to|over to) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?P<old>{_TOKEN}) (?:with|by) (?P<new>{_TOKEN})", re.I),
    re.compile(rf"(?P<new>{_TOKEN}) (?:instead of|in place of|rather than) (?P<old>{_TOKEN})", re.I),
    re.compile(rf"\b(?:drop|dropped|remove|ditch|get rid of|stop using|no more|move off|move away from) "
               rf"(?:the |our |using )?(?P<old>{_TOKEN})", re.I),
    re.compile(rf"(?P<old>{_TOKEN})(?: and (?P<old2>{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped)\b", re.I),
)
# Words a change statement can name that are not a choice of the project ("drop it").
_NOT_A_VALUE = frozenset("""a an the it its this that these those them they all any every
    everything something nothing one ones some both either way support code file files test tests
    table tables column columns endpoint endpoints line lines thing things step steps stuff part
    parts need needs idea bit lot us me you we our your more less now here there then""".split())


def change_olds(sentence: str) -> list[str]:
    """The old values a change statement names: "from HS256 to RS256" → HS256, "drop black" →
    black, "Vitest instead of Jest" → Jest."""
    olds: list[str] = []
    for pattern in _CHANGES:
        for m in pattern.finditer(sentence):
            found = m.groupdict()
            for raw in (found.get("old"), found.get("old2")):
                old = (raw or "").strip("`.,;:()")
                if not old or old.lower() in _NOT_A_VALUE or len(old) < 2 or old in olds:
                    continue
                new = found.get("new")
                if new and new.strip("`.,;:()").lower() == old.lower():
                    continue
                olds.append(old)
    return olds


def _stack_list(sentence: str) -> bool:
    """``FastAPI, Postgres, SQLAlchemy 2.0 …``: a list of named things (the user naming the
    stack), not a task."""
    parts = [p.strip() for p in re.split(r",|;| and ", sentence) if p.strip()]
    if len(parts) < 3 or sum(len(p.split()) <= 7 for p in parts) < len(parts) - 1:
        return False
    return sum(1 for p in parts if _NAMED.search(p)) >= 3


# Slots a statement can fill, from the words it uses (one per statement: the first found).
_PORT = re.compile(r"(?P<noun>(?:[\w-]+ ){0,2}(?:server|service|api|app|database|db|proxy|ui))\b"
                   r"[^.]{0,40}?\bport (?P<n>\d{2,5})\b|\bport (?P<n2>\d{2,5}) for (?:the )?"
                   r"(?P<noun2>(?:[\w-]+ ){0,2}(?:server|service|api|app|database|db|proxy|ui))\b|"
                   r"\b(?:use|on|to) (?P<n3>\d{4,5}) for (?:the )?(?P<noun3>(?:[\w-]+ ){0,2}"
                   r"(?:server|service|api|app|database|db|proxy|ui))\b", re.I)
_RUNTIME = re.compile(r"\b(Python|Node(?:\.js)?|Go|Ruby|Java|Rust|PHP|Deno|Elixir)(?: to| on)? v?(\d+(?:\.\d+)?)\b")
_EVERY = re.compile(r"\b(\w+?)(?:s|es|ing)? every (\d+(?:\.\d+)?) ?(ms|s|sec|seconds?|minutes?|min|hours?|h)\b", re.I)
_TIMEOUT = re.compile(r"\b(\d+(?:\.\d+)?)[ -]?(ms|s|sec|seconds?|minutes?)[ -]timeout\b|"
                      r"\btimeout (?:of |to |= ?)?(\d+(?:\.\d+)?) ?(ms|s|sec|seconds?|minutes?)\b", re.I)
_LINE_LENGTH = re.compile(r"\bline[- ]length(?: is| stays| of| =| at)? (\d{2,3})\b", re.I)


def statement_slot(sentence: str) -> tuple[str, str] | None:
    """(subject, value) a statement sets, from its own words: a package manager it names,
    a runtime version, a port of a named server, an interval, a timeout, a line length."""
    from aletheia.extract.knowledge import PACKAGE_MANAGERS

    for m in re.finditer(r"\b(?:use|using|to|with|on|adopt|keep|stick with|go with)\s+`?([a-z][a-z0-9]*)`?\b", sentence, re.I):
        word = m.group(1).lower()
        if word in PACKAGE_MANAGERS and word not in ("go", "swift", "dart", "mix", "bundle"):
            return "tool:package-manager", word
    rt = _RUNTIME.search(sentence)
    if rt:
        m = rt
        name = "Node" if m.group(1).startswith("Node") else m.group(1)
        version = m.group(2) if name not in ("Node", "Java", "Deno") else m.group(2).split(".")[0]
        return f"runtime:{name.lower()}", f"{name} {version}"
    port_m = _PORT.search(sentence)
    if port_m:
        m = port_m
        noun = m.group("noun") or m.group("noun2") or m.group("noun3") or ""
        port = m.group("n") or m.group("n2") or m.group("n3")
        words = [w for w in noun.lower().split() if not w.endswith("'s")][-2:]
        return "port:" + "-".join(words), port
    t_m = _TIMEOUT.search(sentence)
    if t_m:
        m = t_m
        n, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        return "setting:timeout", f"{n} {unit[0]}"
    e_m = _EVERY.search(sentence)
    if e_m:
        m = e_m
        return f"setting:every-{m.group(1).lower()}", f"{m.group(2)} {m.group(3)[0]}"
    ll = _LINE_LENGTH.search(sentence)
    if ll:
        return "setting:line-length", ll.group(1)
    return None


_CURRENT = (
    (re.compile(rf"\bfrom (?:the |our |using )?(?:{_TOKEN}) ((?:to|over to) (?:{_TOKEN}))", re.I), r"\1"),
    (re.compile(rf"\breplac(?:e|ed|ing) (?:the |our )?(?:{_TOKEN}) (?:with|by) ", re.I), "use "),
    (re.compile(rf"(?<=\S) (?:instead of|in place of|rather than) (?:{_TOKEN})", re.I), ""),
    (re.compile(rf"\b(?:drop|dropped|remove|ditch|get rid of|stop using|no more|move off|move away from) "
                rf"(?:the |our |using )?(?:{_TOKEN})(?: and (?:the )?(?:{_TOKEN})(?=[.,;:]|$)| and\b)?,?\s*", re.I), ""),
    (re.compile(r"\s*\((?:was|were|previously|formerly|vs\.?|instead of)\b[^)]*\)", re.I), ""),
    (re.compile(rf"[;,]?\s*(?:{_TOKEN})(?: and (?:{_TOKEN}))? (?:is|are) (?:now )?(?:gone|removed|dropped)\b", re.I), ""),
)


def current_form(text: str) -> str:
    """A change statement said as the choice it leaves: "Switch the JWTs from HS256 to RS256"
    → "Switch the JWTs to RS256"; "Let's drop black and use ruff" → "Let's use ruff"."""
    out = text
    for pattern, repl in _CURRENT:
        out = pattern.sub(repl, out)
    out = re.sub(r"\s{2,}", " ", out).replace(" ,", ",").replace(" .", ".").strip()
    out = re.sub(r"[:,;]\s*([.!]|$)", r"\1", out).strip().lstrip(";:, ")
    out = out[:1].upper() + out[1:]
    return out if len(out) >= 8 else text


class Statement:
    """One durable sentence: its kind and text, the slot it fills, the old values it drops,
    and whether the user said it."""

    __slots__ = ("kind", "text", "subject", "value", "replaces", "stated", "recommends")

    def __init__(self, kind: str, text: str, *, stated: bool = False, sentence: str = "") -> None:
        self.kind, self.stated = kind, stated
        self.replaces = change_olds(sentence or text)
        self.text = current_form(text) if self.replaces else text
        slot = statement_slot(sentence or text)
        self.subject: str | None = slot[0] if slot else None
        self.value: str | None = slot[1] if slot else None
        self.recommends = bool(RECOMMEND.search(sentence or text))


def sentence_facts(item: Item, user: bool) -> list[Statement]:
    """The sentences in a prompt, note or response that state something durable."""
    found: list[Statement] = []
    parts = sentences(item.narrative or item.title)
    limit = 8 if user else 5
    for i, sentence in enumerate(parts):
        if sentence.endswith("?"):
            continue
        # Short sentences count when they set something ("Python 3.12.", "No `any`, ever.").
        short_runtime = user and len(sentence) < 25 and bool(
            _RUNTIME.search(sentence) or (len(sentence) >= 12 and (
                USER_RULE.search(sentence) or statement_slot(sentence))))
        if (len(sentence) < 25 and not short_runtime) or len(sentence) > 320:
            continue
        text = sentence
        if _VAGUE_START.match(sentence) and i > 0 and len(parts[i - 1]) + len(sentence) < 360:
            text = f"{parts[i - 1]} {sentence}"  # "This …" needs the sentence it points at
        if user:
            if USER_CONVENTION.search(sentence) or USER_RULE.search(sentence):
                found.append(Statement("convention", f"Convention: {text}", stated=True, sentence=sentence))
            elif short_runtime or _stack_list(sentence) or (
                    USER_CHOICE.search(sentence) and (_NAMED.search(sentence) or statement_slot(sentence))):
                found.append(Statement("decision", f"Decision: {text}", stated=True, sentence=sentence))
        elif CAUSE.search(sentence):
            found.append(Statement("error_fix", f"Cause: {text}", sentence=sentence))
        elif DECISION.search(sentence) or RECOMMEND.search(sentence):
            found.append(Statement("decision", f"Decision: {text}", sentence=sentence))
        elif CAVEAT.search(sentence):
            found.append(Statement("fact", f"Note: {_LABEL.sub('', text, count=1).strip()}", sentence=sentence))
        elif USER_CONVENTION.search(sentence) and re.search(r"\b(?:project|repo|codebase|tests?)\b", sentence, re.I):
            found.append(Statement("convention", f"Convention: {text}", sentence=sentence))
        if len(found) >= limit:
            break
    return found

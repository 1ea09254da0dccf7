"""Durable statements in prose: conventions the user states, decisions and causes the
assistant states, caveats."""

from __future__ import annotations

import re

from aletheia.changes import (
    NAMED_THING,
    RUNTIME_CHANGE,
    RUNTIME_NAMES,
    change_olds,
    current_form,
    sentences,
)
from aletheia.changes import (
    PROPOSAL as PROPOSAL_WORDS,
)
from aletheia.context import REASON_GIVEN, RULE_FORMS
from aletheia.context import STANDING_RULE as USER_STANDING
from aletheia.extract.items import Item

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
# A sentence that announces rules ("Some ground rules:", "A few conventions for this repo.",
# "House style:"): the sentences after it in the same message are those rules.
RULES_HEADER = re.compile(
    r"\b(?:ground rules?|house (?:rules?|style)|(?:some|a few|a couple of|two|three|four|the|our|my) "
    r"(?:\w+ )?(?:rules|conventions|guidelines|preferences|standards|principles)|style guide|"
    r"things to (?:keep in mind|remember|know))\b", re.I)
RULES_AFTER_HEADER = 6
APPROVAL = re.compile(
    r"^\W*(?:yes|yep|yeah|agreed|ok(?:ay)?|sounds good|perfect|great|good|nice|works|"
    r"do (?:that|it|this|both|\(?[a-d]\)|option)|go (?:with|ahead|for)|let'?s do|ship it|lgtm|"
    r"use (?:the|that|your))\b",
    re.I,
)
# What an assistant says it chose and why ("I used cursor pagination over offset because …",
# "Chose BullMQ since we already run Redis", "Passwords are hashed with argon2 so that …"): a
# choice argued with its reason is a decision later sessions ask about ("why X?").
_ARGUED_CHOICE = re.compile(
    r"\b(?:(?:I|we)(?:'ve| have)? (?:used|use|picked|chose|chosen|went for|settled on|kept|made|put|moved|"
    r"stuck with|added|set|switched|stored|implemented|built|wired|went with)|chose|picked|opted|"
    r"settled on|went for|prefer(?:red)?)\b", re.I)
# A reason for a failure is a cause, not a choice.
_FAILURE = re.compile(r"\b(?:fail\w*|error\w*|exception|crash\w*|broke\w*|bug|traceback|regression)\b", re.I)


def argued_decision(sentence: str) -> bool:
    """Does an assistant's sentence say what was chosen and why (a named thing, a choice or a
    state, and its reason), not why something failed?"""
    reason = REASON_GIVEN.search(sentence)
    if not reason or _FAILURE.search(sentence):
        return False
    if reason.group(0).lower().startswith(("would", "could", "better", "the ")):
        return True  # "A sequence would be simpler, but it leaves gaps": why not the other way
    # (a proposal is said before its reason: "I'd use X because …"; the reason may say "would")
    if PROPOSAL_WORDS.search(sentence[:reason.start()]):
        return False
    return bool(_ARGUED_CHOICE.search(sentence) or (
        NAMED_THING.search(sentence[:reason.start()]) and
        re.search(r"\b(?:is|are|go(?:es)?|runs?|uses?|lives?|stays?|happens?|gets?|built|kept|stored|"
                  r"hashed|signed|sent|done|handled|released|cached|retried)\b", sentence[:reason.start()], re.I)))


RECOMMEND = re.compile(r"\b(?:(?-i:I['’]?d)|I would|I recommend|I suggest|my recommendation|recommend(?:ed)?|"
                       r"the better fit|better fit|we should)\b", re.I)
_NAMED = NAMED_THING
_ROLE = re.compile(r"^[\w.@/+-]+ (?:for|as|via|through) (?:the |our |all )?\w+")


def _stack_list(sentence: str) -> bool:
    """``FastAPI, Postgres, SQLAlchemy 2.0 …``: a list of named things (the user naming the
    stack), not a task."""
    parts = [p.strip() for p in re.split(r",|;| and ", sentence) if p.strip()]
    if len(parts) < 3 or sum(len(p.split()) <= 7 for p in parts) < len(parts) - 1:
        return False
    named = sum(1 for p in parts if _NAMED.search(p))
    # "chi for routing, pgx for Postgres, goose for migrations": a name and its role, however
    # the name is written (beside at least one name written as one).
    roles = sum(1 for p in parts if not _NAMED.search(p) and _ROLE.match(p))
    # (a capital that only starts the sentence names nothing)
    head = parts[0].split(None, 1)
    written = named - (len(head) > 1 and not _NAMED.search(head[1]) and _NAMED.search(head[0]) is not None)
    # "NestJS 10 on Node 20, Prisma with Postgres, pnpm": a bare lowercase name (one word, no
    # verb) beside two written names is a name too.
    bare = sum(1 for p in parts if re.fullmatch(r"`?[a-z][\w.@/+-]*`?\.?", p) is not None)
    return named >= 3 or (written >= 1 and written + roles >= 3) or (written >= 2 and written + bare >= 3)


# Slots a statement can fill, from the words it uses (one per statement: the first found).
_PORT = re.compile(r"(?P<noun>(?:[\w-]+ ){0,2}(?:server|service|api|app|database|db|proxy|ui))\b"
                   r"[^.]{0,40}?\bport (?P<n>\d{2,5})\b|\bport (?P<n2>\d{2,5}) for (?:the )?"
                   r"(?P<noun2>(?:[\w-]+ ){0,2}(?:server|service|api|app|database|db|proxy|ui))\b|"
                   r"\b(?:use|on|to) (?P<n3>\d{4,5}) for (?:the )?(?P<noun3>(?:[\w-]+ ){0,2}"
                   r"(?:server|service|api|app|database|db|proxy|ui))\b", re.I)
# "Move ferrydock to port 8090": the project itself, no server named.
_BARE_PORT = re.compile(r"\b(?:move|switch|change|put|run|serve|listen|bind|expose)\b[^.,;]{0,40}?\b"
                        r"(?:to|on) (?:port (\d{2,5})\b|(\d{4,5})(?=\s*(?:[.,;:)!]|$|instead\b|now\b|and\b|for\b)))",
                        re.I)
_RUNTIME = re.compile(rf"\b({RUNTIME_NAMES})(?: to| on)? v?(\d+(?:\.\d+)?)\b")
# After a runtime's version, the one it changes to ("Node 20 → 22", "Python 3.11 to 3.12").
_RUNTIME_TO = re.compile(r" ?(?:→|->|=>|to) ?v?(\d+(?:\.\d+)?)\b")
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
        name = "Node" if rt.group(1).startswith("Node") else rt.group(1)
        # The version it ends on: the last one of this runtime, or the one an arrow or "to"
        # after it names ("Node 20 → 22" sets Node 22).
        m = [r for r in _RUNTIME.finditer(sentence) if r.group(1)[:4] == rt.group(1)[:4]][-1]
        then = _RUNTIME_TO.match(sentence, m.end())
        version = then.group(1) if then else m.group(2)
        version = version if name not in ("Node", "Java", "Deno") else version.split(".")[0]
        return f"runtime:{name.lower()}", f"{name} {version}"
    port_m = _PORT.search(sentence)
    if port_m:
        m = port_m
        noun = m.group("noun") or m.group("noun2") or m.group("noun3") or ""
        port = m.group("n") or m.group("n2") or m.group("n3")
        words = [w for w in noun.lower().split() if not w.endswith("'s")][-2:]
        return "port:" + "-".join(words), port
    bare = _BARE_PORT.search(sentence)
    if bare:
        return "port:app", bare.group(1) or bare.group(2)
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


_CLAUSE = re.compile(r"\s*[,;]\s*|\s+and\s+")


def statement_slots(sentence: str) -> list[tuple[str, str]]:
    """Every slot a sentence sets: ``statement_slot``'s for the whole sentence, then its clauses'
    ("Move the dev server to port 8090, and switch from Poetry to uv": a package manager and a
    port), one per subject."""
    out: list[tuple[str, str]] = []
    for part in (sentence, *_CLAUSE.split(sentence)):
        slot = statement_slot(part) if part else None
        if slot and all(slot[0] != s for s, _ in out):
            out.append(slot)
    return out


class Statement:
    """One durable sentence: its kind and text, the slot it fills, the old values it drops,
    and whether the user said it."""

    __slots__ = ("kind", "text", "subject", "value", "replaces", "stated", "recommends", "sentence",
                 "runtime", "slots")

    def __init__(self, kind: str, text: str, *, stated: bool = False, sentence: str = "") -> None:
        self.kind, self.stated = kind, stated
        self.sentence = sentence or text
        self.replaces = change_olds(self.sentence)
        self.text = current_form(text) if self.replaces or RUNTIME_CHANGE.search(self.sentence) else text
        slot = statement_slot(self.sentence)
        # (every slot the sentence sets: a reason masks the old values of each)
        self.slots = statement_slots(self.sentence) if slot else []
        self.subject: str | None = slot[0] if slot else None
        self.value: str | None = slot[1] if slot else None
        self.recommends = bool(RECOMMEND.search(self.sentence))
        # A runtime named in passing ("Rails 7.1 on Ruby 3.2, Postgres, Tailwind") is a slot of
        # its own: a later version replaces it there, and this sentence is said again with it.
        self.runtime: tuple[str, str] | None = None
        if slot and slot[0].startswith("runtime:") and len(re.sub(_RUNTIME, "", self.sentence)) > 40:
            self.runtime, self.subject, self.value = slot, None, None

    def changes(self) -> bool:
        """Does it make or change a choice (not only state a rule)?"""
        return bool(self.replaces or self.subject or USER_CHOICE.search(self.sentence))

    def give_reason(self, reason: str) -> None:
        """Say why beside the choice ("Move to uv — why: poetry lock takes 40 s"): the old
        values the reason names (the same kind of value as the slot: a port, a runtime, a
        package manager) are dropped too, and masked, so the reason never names them as current."""
        olds = [o for subject, value in self.slots
                for o in _reason_olds(reason, subject, value)
                if o.lower() not in {r.lower() for r in self.replaces}]
        olds = list(dict.fromkeys(olds))
        if olds:
            self.replaces = [*self.replaces, *olds]
            self.text = current_form(self.text, self.replaces) or self.text
        if self.text:
            self.text = f"{self.text.rstrip('.!')} — why: {masked(reason, self.replaces)}"


# A sentence that tells the agent to do something (it is a task or a rule, never a reason).
_INSTRUCTION = re.compile(
    r"^(?:(?:please|and|also|then|so|ok(?:ay)?|now|first|next|finally|but|oh)\b,?\s+)*"
    r"(?:let'?s|add|make|use|switch|move|put|keep|set|give|write|create|build|fix|run|start|"
    r"update|change|bump|replace|drop|remove|implement|wire|refactor|rename|ship|deploy|go|try|"
    r"check|test|split|extract|delete|install|configure|enable|disable|turn|show|list|return|"
    r"store|send|read|load|allow|skip|support|handle|new|bring|get|pin|upgrade|downgrade|"
    r"migrate|adopt|stick|stay|do|don'?t|never|always|only|avoid|prefer|leave|look|tell|"
    r"explain|open|mark|wrap|limit|cap|log|validate|document|note)\b", re.I)
_BECAUSE = re.compile(r"\b(?:reason|because|since)\b", re.I)


def _reason(sentence: str) -> bool:
    """Could ``sentence`` be why a choice next to it was made (a statement of fact, not a task)?"""
    return (20 <= len(sentence) <= 300 and not sentence.endswith(("?", ":"))
            and not _INSTRUCTION.match(sentence))


def _reason_olds(reason: str, subject: str | None, value: str | None) -> list[str]:
    """Values of the slot's kind a reason names other than the new one: the port that was
    taken, the package manager that was slow, the runtime that is old."""
    from aletheia.extract.knowledge import PACKAGE_MANAGERS

    if not subject or not value:
        return []
    family = subject.split(":", 1)[0]
    olds: list[str] = []
    if family == "port":
        olds = [n for n in re.findall(r"(?<![\w.:/-])(\d{4,5})(?![\w.-])", reason) if n != value]
    elif subject == "tool:package-manager":
        olds = [w for w in re.findall(r"[A-Za-z][\w-]*", reason)
                if w.lower() in PACKAGE_MANAGERS and w.lower() != value.lower()
                and w.lower() not in ("go", "swift", "dart", "mix", "bundle", "pip", "pip3")]
    elif family == "setting":
        unit = re.escape(value.split(" ", 1)[-1][:1]) if " " in value else ""
        olds = [m.group(0) for m in re.finditer(
            r"\b(\d+(?:\.\d+)?) ?(ms|s|sec|seconds?|minutes?|min|hours?|h)\b", reason)
            if unit and m.group(2)[:1] == value.split(" ", 1)[-1][:1]
            and f"{m.group(1)} {m.group(2)[0]}" != value]
    elif family == "runtime":
        name = value.split(" ", 1)[0]
        olds = [f"{name} {v}" for v in re.findall(rf"\b{re.escape(name)}(?:\.js)? v?(\d+(?:\.\d+)?)\b", reason)
                if f"{name} {v}" != value and not value.startswith(f"{name} {v}.")]
    return list({o.lower(): o for o in reversed(olds)}.values())[::-1]


def masked(text: str, olds: list[str]) -> str:
    """``text`` with each old value left out ("… is slow", "`… lock` takes 40 seconds")."""
    for old in olds:
        text = re.sub(r"(?<![\w.-])" + re.escape(old) + r"(?![\w-])", "…", text, flags=re.I)
    return text


# What a prompt pastes from a program (a stack trace's frames, an Erlang term, a log line, a
# REPL's echo: "{gen_server,handle_msg,6,[{file,\"gen_server.erl\"},{line,1183}]}",
# "Mojolicious::_action(undef, …=HASH(0x55d1…)) called at …/Plugin.pm line 16", "Info: routing
# 1.83 2.35 Net core.leds.level_q[3] (148,33) -> (150,31)") is no statement of the user's: it was
# stored as a decision and took the block's room.  Such a line is dense in the brackets,
# quotes and operators of code; what people type is not.  On the tunable parts' stated facts
# (dev-6 … dev-9, 188) every pasted line had 0.109 or more of these characters and every typed
# sentence 0.07 or less; a short one ("Use uv (not pip).") is left alone.
_CODE_CHARS = frozenset('{}[]()<>=#$\\|_:"@/')
MACHINE_SHARE = 0.1
MACHINE_MIN_CHARS = 40
_URL = re.compile(r"\b[a-z][\w+.-]*://\S+")


def machine_output(sentence: str) -> bool:
    """Is this sentence of a prompt a line a program printed (dense in code's punctuation)?"""
    if len(sentence) < MACHINE_MIN_CHARS:
        return False
    text = _URL.sub("u", sentence)  # (an address typed in a rule is prose's: "deploy to https://…")
    return sum(c in _CODE_CHARS for c in text) >= MACHINE_SHARE * len(text)


def sentence_facts(item: Item, user: bool) -> list[Statement]:
    """The sentences in a prompt, note or response that state something durable; a choice the
    user makes keeps the reason they give for it (the sentences just before, or a "because" right
    after)."""
    found: list[tuple[int, Statement]] = []
    parts = sentences(item.narrative or item.title)
    limit = 8 if user else 5
    ruled = -1  # the index of the last rules header the user wrote
    for i, sentence in enumerate(parts):
        if sentence.endswith("?"):
            if not user:
                continue
            # People type to an agent in lower case: "cache them per zoom level. where's the
            # drawing code?" is one sentence to the splitter, and only its end asks.
            sentence = asked_last(sentence)
            if not sentence:
                continue
        if user and machine_output(sentence):
            continue
        if user and RULES_HEADER.search(sentence):
            ruled = i
            rest = RULES_HEADER.split(sentence, 1)[-1]
            if sentence.endswith(":") or (len(sentence) < 90 and ":" not in rest and not USER_RULE.search(rest)):
                continue  # only the announcement ("Some ground rules for ferrydock before it grows.")
        under_header = user and ruled >= 0 and 0 < i - ruled <= RULES_AFTER_HEADER
        # Short sentences count when they set something ("Python 3.12.", "No `any`, ever.",
        # "Swap Jest for Vitest.").
        changed = bool(user and change_olds(sentence))
        short_runtime = user and len(sentence) < 25 and bool(
            _RUNTIME.search(sentence) or (len(sentence) >= 12 and (
                USER_RULE.search(sentence) or statement_slot(sentence) or changed)))
        if (len(sentence) < 25 and not short_runtime) or len(sentence) > 320:
            continue
        text = sentence
        if _VAGUE_START.match(sentence) and i > 0 and len(parts[i - 1]) + len(sentence) < 360:
            text = f"{parts[i - 1]} {sentence}"  # "This …" needs the sentence it points at
        if user:
            if USER_CONVENTION.search(sentence) or USER_RULE.search(sentence) or \
                    USER_STANDING.search(sentence) or RULE_FORMS.search(sentence) or \
                    (under_header and len(sentence) >= 12):
                found.append((i, Statement("convention", f"Convention: {text}", stated=True, sentence=sentence)))
            elif short_runtime or changed or _stack_list(sentence) or statement_slot(sentence) or (
                    USER_CHOICE.search(sentence) and _NAMED.search(sentence)):
                found.append((i, Statement("decision", f"Decision: {text}", stated=True, sentence=sentence)))
        elif CAUSE.search(sentence):
            found.append((i, Statement("error_fix", f"Cause: {text}", sentence=sentence)))
        elif DECISION.search(sentence) or RECOMMEND.search(sentence) or argued_decision(sentence):
            found.append((i, Statement("decision", f"Decision: {text}", sentence=sentence)))
        elif CAVEAT.search(sentence):
            found.append((i, Statement("fact", f"Note: {_LABEL.sub('', text, count=1).strip()}", sentence=sentence)))
        elif USER_CONVENTION.search(sentence) and re.search(r"\b(?:project|repo|codebase|tests?)\b", sentence, re.I):
            found.append((i, Statement("convention", f"Convention: {text}", sentence=sentence)))
    if user:
        found = _with_reasons(parts, found)
    return [s for _, s in found][:limit]


# Where a sentence typed in lower case ends and the next begins ("… per zoom level. where's …").
_LOWER_START = re.compile(r"(?<=[a-z0-9)'\"][.!])\s+(?=[a-z])")


def asked_last(sentence: str) -> str:
    """What a run of lower-case sentences ending in a question says before the question, or ""
    (a question alone, or one whose parts are all questions)."""
    parts = _LOWER_START.split(sentence)
    while parts and parts[-1].rstrip().endswith("?"):
        parts.pop()
    return " ".join(parts).strip()


def _with_reasons(parts: list[str], found: list[tuple[int, Statement]]) -> list[tuple[int, Statement]]:
    """Give each choice the reason said next to it; a sentence used as a reason is not a fact
    of its own ("Running Redis only for Sidekiq is one more thing to babysit" is no rule)."""
    used: set[int] = set()
    for i, s in found:
        if not s.changes():
            continue
        reason: list[int] = []
        j = i - 1
        while j >= 0 and len(reason) < 2 and _reason(parts[j]) and j not in used and \
                not any(k == j and t.changes() for k, t in found):
            reason.insert(0, j)
            j -= 1
        if not reason and i + 1 < len(parts) and _BECAUSE.search(parts[i + 1]) and _reason(parts[i + 1]):
            reason = [i + 1]
        said = " ".join(parts[k] for k in reason)
        # A reason is one for a change: the choice drops something, by its own words or by the
        # value of its kind the reason names (a description before a plain choice is no reason).
        if reason and (s.replaces or any(_reason_olds(said, subject, value)
                                         for subject, value in s.slots)):
            s.give_reason(said)
            used.update(reason)
    return [(i, s) for i, s in found if i not in used]

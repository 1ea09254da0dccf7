"""What an assistant's answer says about the project that a tool call would have shown:
commands it names for a purpose ("`uv sync` to install, `uv run pytest -q -x` for tests",
"`bun run e2e` runs the suite"), the packages it lists ("runtime deps: …"), what a file is for.

A session a host hands over without its tool calls (or a host whose tool events we never see)
still says in its answers how the project is run; without this, the project's commands were
known only from Bash events.  Only code spans are read (an answer writes commands that way), and
only those the command classifier gives a purpose (test, build, migrate, set up …); a span in a
proposal, a question, a negation or a report of a failure is not how the project runs.

What an answer says a file is for (``said_roles``): such a session never reads the file, so its
own first line is never seen.
"""

from __future__ import annotations

import re

from aletheia.changes import PROPOSAL as _PROPOSAL
from aletheia.changes import sentences
from aletheia.extract.commands import category, normalize_command
from aletheia.extract.items import cap

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
MAX_COMMANDS = 8
# A command's last argument that ends in a dot: this directory, or every package under it.
_HERE = re.compile(r"\s(?:\.|\./\.\.\.|\S*/\.\.\.)$")
# A script of the repository named alone (`bin/dev`, `./run-tests.sh`, `scripts/seed`); not a
# vendored tool's binary (`./vendor/bin/pint`: alone, it says nothing of how it is run).
_LOCAL = re.compile(r"^(?:\./)?(?:bin|scripts?)/[\w.+-]+$|^\./[\w.+-]+$")


def answer_commands(text: str) -> list[tuple[str, str]]:
    """(command, what it does) for each command the answer (or a prompt: the user writing how
    the project is run) names for a purpose, in order, the first one for each purpose: those in
    its sentences' code spans, then those in its shell code blocks."""
    out: dict[str, str] = {}

    def take(span: str) -> bool:
        """Keep ``span`` as a command when it does something; False once there are enough."""
        command = normalize_command(span)
        cat = category(command) if command else None
        if cat is None or cat == "vcs" or command in out or cat in out.values():
            return True  # (the first named for a purpose: "`bun run test` = `vitest run`")
        out[command] = cat
        return len(out) < MAX_COMMANDS

    for sentence in sentences(text)[:60]:
        if sentence.rstrip().endswith("?") or _PROPOSAL.search(sentence):
            continue
        for m in _SPAN.finditer(sentence):
            span = m.group(1).strip()
            words = span.split()
            if not _PROGRAM.match(words[0]) or (span.endswith((".", ":")) and not _HERE.search(span)):
                continue  # ("`make`.", "`foo:`": a word, not a command; "`ruff check .`" is one)
            if len(words) < 2 and not _LOCAL.match(span):
                continue  # one word is a name ("`pytest` is set up"), but a script of the repo runs
            if _NOT_BEFORE.search(sentence[:m.start()]) or _NOT_AFTER.search(sentence[m.end():]):
                continue
            if not take(span):
                return list(out.items())
    for command in block_commands(text):
        if not take(command):
            break
    return list(out.items())


# A fenced code block and its language; the languages a shell command is written in.
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_SHELL = frozenset("bash sh shell zsh fish console terminal shell-session shellsession".split())
_PROMPT_SIGN = re.compile(r"^\s*(?:\$|%|❯|>)\s+")
# A block that shows a failure, or follows a question, an offer or an old way, is not how the
# project runs.
_FAILED = re.compile(r"\b(?:error|errors|failed|failure|fails|traceback|exception|not found|denied|"
                     r"refused|panic)\b", re.I)
_LEAD_IN_NOT = re.compile(r"\?\s*$|\b(?:instead of|no longer|used to|previously|the old|not|never|"
                          r"don'?t|do not)\b", re.I)
BLOCK_LINES = 8


def block_commands(text: str) -> list[str]:
    """The commands of the shell code blocks in a prompt or an answer ("To run the tests:
    ```bash uv run pytest -q ```"): each line of a block in a shell language, or of a block
    without one whose lines all read as commands or carry a prompt sign (``$ make test``); not
    a block that shows a failure, nor one after a question, a proposal or an old way."""
    out: list[str] = []
    for m in _FENCE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2)
        if (lang and lang not in _SHELL) or _FAILED.search(body):
            continue
        before = text[max(0, m.start() - 200):m.start()].rstrip()
        lead = re.split(r"(?<=[.!?])\s+|\n", before)[-1] if before else ""
        if _LEAD_IN_NOT.search(lead) or _PROPOSAL.search(lead):
            continue
        lines = [x.strip() for x in body.splitlines() if x.strip() and not x.lstrip().startswith("#")]
        signed = [_PROMPT_SIGN.sub("", x) for x in lines if _PROMPT_SIGN.match(x)]
        if signed:
            lines = signed  # a console session: the signed lines ran, the rest is their output
        elif (not lang or lang in ("console", "terminal")) and (
                len(lines) > BLOCK_LINES or not all(_PROGRAM.match(x.split()[0]) and category(x) for x in lines)):
            continue  # (output, code or a file, not commands)
        for line in lines[:BLOCK_LINES]:
            words = line.split()
            if words and _PROGRAM.match(words[0]) and (len(words) >= 2 or _LOCAL.match(line)):
                out.append(line)
    return out


# --- what an answer says a file is for ----------------------------------------------------------

# A path as an answer writes it: folders and a file with an extension (`src/app/db.py`), or a
# bare file name of a source or config kind (`conftest.py`, `next.config.mjs`).
_PATH = re.compile(r"(?<![\w/.@-])(/?(?:[\w@.-]+/)+[\w.-]+\.[A-Za-z]{1,5}|[\w-]+(?:\.[\w-]+)*\.(?:py|ts|tsx|js|jsx|mjs|"
                   r"go|rb|rs|java|kt|php|cs|swift|ex|exs|sql|toml|ya?ml|json))(?![\w/-])")
# A sentence that says what a file holds or does: the path leads it ("`db.py` holds the engine"),
# or something lives, is kept or is configured there ("Models live in `models/invoice.py`"),
# or the path is the first thing in parentheses after what it is ("goes through structlog
# (`logging.py`: JSON in production…)").
_ROLE_VERBS = re.compile(r"\b(?:holds?|has|have|keeps?|defines?|declares?|contains?|validates?|"
                         r"wraps?|creates?|builds?|reads?|sets? up|configures?|exports?|mounts?|"
                         r"registers?|implements?|handles?|runs?|calls?|is where|lives?|live|"
                         r"is in|are in|go(?:es)? in|sits? in|now \w+s)\b", re.I)
_LIVES_IN = re.compile(r"\b(?:lives?|is|are|go(?:es)?|sits?|kept|defined|declared|configured|set up|"
                       r"happens?|done) in$", re.I)
_SAID_CAP = 200


def said_roles(text: str) -> list[tuple[str, str]]:
    """(path, what it is for) from an assistant's answer: one sentence or list item naming
    exactly one path and saying what it holds or does ("`src/app/db.py` holds the async engine
    and the session dependency").  Files the session only mentions say nothing."""
    found: list[tuple[str, str]] = []
    for sentence in sentences(text)[:80]:
        plain = sentence.replace("`", "")
        paths = list(dict.fromkeys(m.group(1) for m in _PATH.finditer(plain)))
        if len(paths) != 1 or sentence.endswith("?"):
            continue
        path = paths[0].rstrip(".")
        head = plain.split(path, 1)[0]
        leads = not head.strip(" -*:(")
        inside = head.rstrip().endswith("(") and len(head) < 80
        lives = _LIVES_IN.search(head.rstrip())
        if not ((leads and _ROLE_VERBS.search(plain)) or inside or lives):
            continue
        about = plain[len(head) + len(path):].lstrip(" `:—-") if leads else plain
        about = re.sub(r"\s+", " ", about).strip()
        if len(about) >= 12:
            found.append((path, cap(about, _SAID_CAP)))
    return found


# "runtime deps: FastAPI 0.114, SQLAlchemy 2.0 (asyncio) + asyncpg, Alembic; dev deps: pytest":
# the answer listing what the manifest holds (a session seen without its tool calls never shows
# the manifest).  A name each: a package-like first word, its version and notes after it.
_DEPS = re.compile(r"(?i)\b(?:(runtime|dev|test|development)[ -])?(?:deps|dependencies|packages)\s*:\s*"
                   r"([^;\n]{3,400})")
_DEP_NAME = re.compile(r"^`?(@?[A-Za-z][\w.+-]*(?:/[\w.+-]+)?)`?$")
_NOT_NAMES = frozenset("none nothing the a an and or all some same usual it its see as".split())
MAX_DEPENDENCIES = 30


def answer_dependencies(text: str) -> list[tuple[str, bool]]:
    """(package, dev?) for each package an answer lists after "deps:" / "dependencies:"."""
    out: dict[str, bool] = {}
    for m in _DEPS.finditer(text):
        dev = (m.group(1) or "").lower() in ("dev", "test", "development")
        listed = re.sub(r"\([^)]*\)", " ", m.group(2)).split(". ")[0].rstrip(".")
        items = [i.split() for i in re.split(r",|\+|\band\b", listed) if i.strip()]
        names = []
        for words in items:
            found = _DEP_NAME.match(words[0]) if len(words) <= 3 else None
            if found and found.group(1).lower() not in _NOT_NAMES and len(found.group(1)) <= 40:
                names.append(found.group(1))
        if len(names) < 2 or 2 * len(names) < len(items) or _PROPOSAL.search(text[:m.start()][-80:]):
            continue  # prose after the colon, not a list; or a plan, not what the project holds
        for name in names:
            out.setdefault(name, dev)
    return list(out.items())[:MAX_DEPENDENCIES]

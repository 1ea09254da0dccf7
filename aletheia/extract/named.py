"""The tools a session's talk names as the project's own: "add a Celery task", "the FastAPI
app", "`uv run pytest -q`" — what a store without tool events (a host that hands over prompts
and answers only) knows of its stack, where manifests and install commands are never seen.

A name counts when the general vocabulary of ``aletheia.concepts`` knows it as a tool that
answers a concept (a test runner, a database, an ORM, a queue …), and the sentence names it as
in use: not in a question, a proposal, a comparison or a list of options, not as the old side
of a change ("move from X to Y", "drop X") nor right after words that set it aside ("instead of
X", "not X", "X or Y").  A tool whose name is an ordinary word (Black, Express, Spring, Make …)
counts only where it is written as a name: in a code span, with a capital inside a sentence, or
with a version after it.  Each name is one fact per project (``uses:NAME``); its evidence is the
fact store's (the sessions that name it, whether the user did), so a tool named once in an answer
stays out of the block, and one the sessions keep naming reaches the stack line.
"""

from __future__ import annotations

import re

from aletheia.changes import PROPOSAL, change_olds, sentences
from aletheia.concepts import CONCEPTS

# The concepts whose names are tools, and what the stack line calls them; the first that lists
# a name labels it (the ORMs before the migrations, the styling before the front end …).
_LABELS = {
    "package manager": "packages", "web framework": "web", "styling": "styling",
    "bundler": "bundler", "ui": "front end", "state management": "state", "orm": "ORM",
    "migration": "migrations", "database": "database", "cache": "cache", "queue": "jobs",
    "test": "tests", "e2e": "e2e", "mock": "mocks", "lint": "lint", "format": "format",
    "typecheck": "types", "validation": "validation", "http client": "HTTP", "cli": "CLI",
    "logging": "logging", "monitoring": "monitoring", "auth": "auth", "payment": "payments",
    "email": "email", "storage": "storage", "search engine": "search", "ci": "CI",
    "container": "containers", "deploy": "deploy", "infrastructure": "infrastructure",
    "build": "build", "hook": "git hooks", "docs": "docs", "data fetching": "data fetching",
}
# Words those lists hold that name a kind of thing, not one tool.
_GENERIC = frozenset("""css session cookie token tokens jwt oauth oidc logging logger tracing mock
    mocks mocker responses lint staged pre commit precommit readme coverage cov webhook checkout
    blob bucket github actions workflow workflows pipelines mailer smtp entity delayed agenda
    temporal migrate makemigrations lru lambda fetch got ky hex mix gem bundler make makefile just
    justfile rake styled emotion less model env config yaml toml settings fixture fixtures factory
    seed seeds crate module package dependency lock lockfile requirements handler handlers
    controller endpoint endpoints route routes router routing rest struct interface type script
    command cmd async await dockerfile tokens swagger openapi workspace workspaces monkeypatch""".split())
# Tools whose name is an ordinary word: they count only written as a name.
_ORDINARY = frozenset("""black prettier pint spotless biome credo hypothesis nose karma jasmine ava
    pest yarn bun cargo composer brew neon tortoise drizzle eloquent doctrine hibernate diesel
    dapper goose atlas celery solid horizon bull express flask rails slim gin echo chi fiber rocket
    warp spring phoenix react next angular remix alpine ember sass bootstrap rollup parcel babel
    turbo drone compose helm fly render railway sentry honeycomb requests faraday retrofit devise
    clerk passport marshmallow stripe paddle postmark resend click clap cobra commander thor
    recoil varnish sphinx cypress playwright pyre""".split())


def _vocabulary() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, label in _LABELS.items():
        for name in CONCEPTS.get(key, "").split():
            if name not in _GENERIC:
                out.setdefault(name, label)
    return out


TOOLS = _vocabulary()
IN_USE = "(in use)"  # the value of a ``uses:NAME`` fact

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
                    r"^\W{0,3}(?:\w+\W+){0,2}(?:is|was|were|are|has been|got) (?:now )?(?:gone|removed|"
                    r"replaced|dropped|deprecated|retired|skipped|out)\b", re.I)
# A sentence that weighs options or supposes: what it names is not (yet) the project's.
_WEIGHING = re.compile(r"\b(?:if we|whether|maybe|perhaps|options?|alternatives?|pros and cons|"
                       r"trade-?offs?|evaluat\w*|benchmark\w* against|vs\.?|versus)\b", re.I)
_VERSION_AFTER = re.compile(r"^`?\s?v?\d")
_LEAD = re.compile(r"^\W*")


def _key(word: str) -> str | None:
    """The vocabulary's name for ``word`` ("Next.js" → next, "good_job" → goodjob), or None."""
    low = word.lower()
    for form in (low, low.removesuffix(".js"), re.sub(r"[._-]", "", low)):
        if form in TOOLS:
            return form
    return None


def named_tools(text: str) -> list[tuple[str, str, str]]:
    """(key, the name as written, label) for each tool ``text`` names as in use, in order."""
    out: dict[str, tuple[str, str, str]] = {}
    for sentence in sentences(text)[:80]:
        if sentence.rstrip().endswith("?") or PROPOSAL.search(sentence) or _WEIGHING.search(sentence):
            continue
        olds = {o.strip("`").lower() for o in change_olds(sentence)}
        spans = [m.span() for m in _SPAN.finditer(sentence)]
        start = len(_LEAD.match(sentence).group(0))  # type: ignore[union-attr]
        for m in _CANDIDATE.finditer(sentence):
            word = m.group(1)
            key = _key(word)
            if key is None or key in out or word.lower() in olds or key in olds:
                continue
            in_span = any(a < m.start() and m.end() < b for a, b in spans)
            if key in _ORDINARY and not in_span:
                written = (word[0].isupper() and m.start() > start) or any(c.isupper() for c in word[1:])
                if not written and not _VERSION_AFTER.match(sentence[m.end():m.end() + 4]):
                    continue
            before = re.split(r"[;—–]", sentence[max(0, m.start() - 40):m.start()])[-1]  # this clause
            if _SET_ASIDE.search(before) or \
                    _AFTER.search(sentence[m.end():m.end() + 40]):
                continue
            out[key] = (key, word.strip("`"), TOOLS[key])
    return list(out.values())


def _concept_labels() -> dict[tuple[str, ...], frozenset[str]]:
    out: dict[tuple[str, ...], frozenset[str]] = {}
    for key, names in CONCEPTS.items():
        labels = frozenset(TOOLS[n] for n in names.split() if n in TOOLS)
        if labels:
            out[tuple(key.split())] = labels
    return out


_CONCEPT_LABELS = _concept_labels()


def asked_labels(words: list[str]) -> set[str]:
    """What kinds of tool a question's words ask about ("which test runner" → tests, "what
    database" → database): the labels of the tools each concept it names lists."""
    low = [w.lower() for w in words]
    found: set[str] = set()
    for key, labels in _CONCEPT_LABELS.items():
        if all(any(w.startswith(k) and len(w) - len(k) <= 3 for w in low) for k in key):
            found |= labels
    return found


def label_of(name: str) -> str | None:
    """The label of a package or tool name, or of the tool it extends (``pytest-asyncio``,
    ``rspec-rails``: tests; ``@vitejs/plugin-react``: none)."""
    base = name.rsplit("/", 1)[-1]
    key = _key(base) or _key(re.split(r"[-_]", base, maxsplit=1)[0])
    return TOOLS[key] if key else None

"""Which tools answer which concept, by name: the general vocabulary of ``aletheia.concepts``
read the other way (``pytest`` → tests, ``Postgres`` → database), for what the talk names as in
use (``extract.named``), the stack line's groups, and what a question asks about ("which test
runner" → tests).  Stdlib only: per-prompt recall (a hook) reads it."""

from __future__ import annotations

import re

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
    "ui toolkit": "UI toolkit", "mobile": "mobile", "dependency injection": "DI",
    "game engine": "game engine", "graphic": "graphics", "embedded": "embedded",
    "dataframe": "data", "machine learning": "ML", "orchestration": "orchestration",
    "llm": "LLM", "vector store": "vector store", "tui": "TUI", "browser extension": "extension",
    "static site": "static site",
}
# Words those lists hold that name a kind of thing, not one tool.
_GENERIC = frozenset("""css session cookie token tokens jwt oauth oidc logging logger tracing mock
    mocks mocker responses lint staged pre commit precommit readme coverage cov webhook checkout
    blob bucket github actions workflow workflows pipelines mailer smtp entity delayed agenda
    temporal migrate makemigrations lru lambda fetch got ky hex mix gem bundler make makefile just
    justfile rake styled emotion less model env config yaml toml settings fixture fixtures factory
    seed seeds crate module package dependency lock lockfile requirements handler handlers
    controller endpoint endpoints route routes router routing rest struct interface type script
    command cmd async await dockerfile tokens swagger openapi workspace workspaces monkeypatch
    manifest""".split())
# Tools whose name is an ordinary word: they count only written as a name.
ORDINARY = frozenset("""black room realm prettier pint spotless biome credo hypothesis nose karma jasmine ava
    pest yarn bun cargo composer brew neon tortoise drizzle eloquent doctrine hibernate diesel
    dapper goose atlas celery solid horizon bull express flask rails slim gin echo chi fiber rocket
    warp spring phoenix react next angular remix alpine ember sass bootstrap rollup parcel babel
    turbo drone compose helm fly render railway sentry honeycomb requests faraday retrofit devise
    clerk passport marshmallow stripe paddle postmark resend click clap cobra commander thor
    recoil varnish sphinx cypress playwright pyre espresso cucumber spock ginkgo insta
    pixi mamba cabal dub nix conan carthage revive bamboo concourse woodpecker nomad
    ninja ant mill buck pants mage metro detox maestro grunt timber loki jaeger refit caffeine
    dragonfly shrine falcon tornado vapor hanami quart lit stencil elm stimulus hotwire inertia yew
    quasar radix bloc pulsar tilt qt swing electron capacitor ionic flutter expo uno iced maui
    dagger hilt wire fx dig injector lagom pimple unity unreal bevy phaser metal zephyr embassy
    spark torch transformers prefect airflow argo chroma ink blessed textual hugo pelican eleventy
    gatsby zola jekyll""".split())
# Tools named by two words, one of which alone names another tool or none ("Jetpack Compose" is
# no docker compose, "React Native" no React web front end): the vocabulary's name each is read
# as, the words written apart, with a space or a dash.
PHRASES = {
    "jetpack compose": "jetpack", "compose multiplatform": "jetpack", "react native": "reactnative",
    "kotlin multiplatform": "kmp", "google test": "googletest", "google mock": "googlemock",
    "core data": "coredata", "swift data": "swiftdata",
    "entity framework": "efcore", "ef core": "efcore", "dear imgui": "imgui",
    "windows forms": "winforms", "unreal engine": "unreal", "game maker": "gamemaker",
    "scikit learn": "scikitlearn", "llama index": "llamaindex", "work manager": "workmanager",
}
_PHRASE = re.compile(r"(?<![\w.-])(" + "|".join(
    re.escape(p).replace(r"\ ", r"[\s-]+") for p in sorted(PHRASES, key=len, reverse=True))
    + r")(?![\w-])", re.I)


def _vocabulary() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, label in _LABELS.items():
        for name in CONCEPTS.get(key, "").split():
            if name not in _GENERIC:
                out.setdefault(name, label)
    return out


TOOLS = _vocabulary()
IN_USE = "(in use)"  # the value of a ``uses:NAME`` fact


def tool_key(word: str) -> str | None:
    """The vocabulary's name for ``word`` ("Next.js" → next, "good_job" → goodjob), or None."""
    low = word.lower()
    for form in (low, low.removesuffix(".js"), re.sub(r"[._-]", "", low)):
        if form in TOOLS:
            return form
    return None


def said_key(word: str) -> str | None:
    """``tool_key``, or the vocabulary's name a short form says: a database said without its
    "db" ("influx" → influxdb, "mongo" → mongodb), as sessions say them."""
    return tool_key(word) or tool_key(word + "db")


def phrases(text: str) -> list[tuple[int, int, str]]:
    """(start, end, the vocabulary's name) of each two-word tool name ``PHRASES`` knows in
    ``text``: its words are read as that tool, not one by one."""
    return [(m.start(), m.end(), PHRASES[re.sub(r"[\s-]+", " ", m.group(1).lower())])
            for m in _PHRASE.finditer(text)]


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


def concept_tools(words: list[str]) -> set[str]:
    """The tools the concepts ``words`` name list ("message broker" → rabbitmq, kafka, redis …;
    "payment" → stripe, paypal …), as ``tool_key`` gives them."""
    low = [w.lower() for w in words]
    found: set[str] = set()
    for key in _CONCEPT_LABELS:
        if all(any(w.startswith(k) and len(w) - len(k) <= 3 for w in low) for k in key):
            found |= {n for n in CONCEPTS[" ".join(key)].split() if n in TOOLS}
    return found


def concept_pairs(words: list[str]) -> set[str]:
    """The two-word names ("github actions", "azure pipelines") the concepts ``words`` name
    list, as two lowercase words: each word alone may name no tool (``_GENERIC``)."""
    low = [w.lower() for w in words]
    found: set[str] = set()
    for key in CONCEPTS:
        parts = tuple(key.split())
        if all(any(w.startswith(k) and len(w) - len(k) <= 3 for w in low) for k in parts):
            names = CONCEPTS[key].split()
            found.update(f"{a} {b}" for a, b in zip(names, names[1:], strict=False))
    return found


def label_of(name: str) -> str | None:
    """The label of a package or tool name, or of the tool it extends (``pytest-asyncio``,
    ``rspec-rails``: tests; ``@vitejs/plugin-react``: none)."""
    base = name.rsplit("/", 1)[-1]
    key = tool_key(base) or tool_key(re.split(r"[-_]", base, maxsplit=1)[0])
    return TOOLS[key] if key else None

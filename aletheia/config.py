"""Every knob aletheia has, in one table: each ``ALETHEIA_*`` environment variable and each
stored setting, with its type, default and meaning.

Variables are read through ``env(name)``: one parser per type, one strict boolean parser, and one
error (``ConfigError``, an ``InvalidInput``) that names the variable and what it takes.  A
stored setting is read by ``aletheia.settings`` against ``SETTINGS`` here.  ``describe`` lists
them all with where each value came from (default / environment / setting), which is what
``aletheia doctor`` prints; ``tests/test_config.py`` holds the README and the CLI's help to
this table.  Standard library only and cheap to import: the hook reads ``ALETHEIA_HOME``.
"""

from __future__ import annotations

import os

from aletheia.errors import InvalidInput

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping
    from typing import Any


class ConfigError(InvalidInput):
    """A variable holds a value its type does not take."""


class Var:
    """One environment variable.  ``kind``: str, bool, int, float, list (comma-separated) or
    secret (a str never printed).  ``scope``: who reads it — "user" (documented for everyone),
    "scripts" (read by scripts/, not by Python), or "test" (fault injection for the tests)."""

    __slots__ = ("name", "kind", "default", "help", "lo", "hi", "aliases", "scope", "paths",
                 "blank")

    def __init__(self, name: str, kind: str, default: Any, help: str, *, lo: float | None = None,
                 hi: float | None = None, aliases: dict[str, Any] | None = None,
                 scope: str = "user", paths: bool = False, blank: Any = None) -> None:
        self.name, self.kind, self.default, self.help = name, kind, default, help
        self.lo, self.hi, self.aliases, self.scope = lo, hi, aliases or {}, scope
        self.paths = paths  # a list that os.pathsep separates too (like PATH)
        self.blank = blank  # what set-but-empty means, when not the same as unset


class Setting:
    """One stored setting (the ``setting`` table; ``aletheia settings``)."""

    __slots__ = ("key", "default", "kind", "help", "minimum", "maximum", "env")

    def __init__(self, key: str, default: Any, kind: type, help: str,
                 minimum: int | None = None, maximum: int | None = None,
                 env: str | None = None) -> None:
        self.key, self.default, self.kind, self.help = key, default, kind, help
        self.minimum, self.maximum, self.env = minimum, maximum, env


VARS: dict[str, Var] = {v.name: v for v in (
    Var("ALETHEIA_HOME", "str", "~/.aletheia", "the data directory (hub.db, queue.db, spool, keys)"),
    Var("ALETHEIA_PROJECT", "str", "", "the project every capture and command uses (unset: the "
        "git top level of the working directory, or a .aletheia-project file)"),
    Var("ALETHEIA_EXCLUDED_PROJECTS", "list", [], "projects (names, paths or globs, comma- or "
        "path-separated) that capture nothing; adds to the excluded_projects setting",
        paths=True),
    Var("ALETHEIA_CONTEXT", "bool", True, "off: this session starts without the context block",
        aliases={"none": False, "fresh": False}),
    Var("ALETHEIA_SEMANTIC", "bool", False, "fuse semantic neighbours into search by default "
        "(the embed extra)"),
    Var("ALETHEIA_HOST", "str", "127.0.0.1", "the address `aletheia serve` binds"),
    Var("ALETHEIA_PORT", "int", 8377, "the port `aletheia serve` binds (0: any free port)",
        lo=0, hi=65535),
    Var("ALETHEIA_API_KEY", "secret", "", "the API token (unset: the one in keys/api-token)"),
    Var("ALETHEIA_ALLOWED_HOSTS", "list", [], "more Host names the server answers to"),
    Var("ALETHEIA_QUEUE_URL", "str", "", "the queue: empty for queue.db (SQLite), or redis://… "
        "for Redis (several worker processes on this machine; every job reads this machine's "
        "hub.db)"),
    Var("ALETHEIA_LEASE_SECONDS", "float", 60.0, "how long a worker holds a job before another "
        "may take it", lo=0.05, hi=86_400),
    Var("ALETHEIA_PROVIDER", "str", "", "the model for extraction: openai, ollama, llamacpp, "
        "lmstudio or a base URL (overrides the provider setting; set but empty: off; unset: "
        "the setting)", blank="off"),
    Var("ALETHEIA_PROVIDER_URL", "str", "", "the base URL for a preset provider"),
    Var("ALETHEIA_PROVIDER_MODEL", "str", "", "the provider's model (unset: offline rules)"),
    Var("ALETHEIA_PROVIDER_API_KEY", "secret", "", "the provider's key (else OPENAI_API_KEY)"),
    Var("ALETHEIA_PROVIDER_TIMEOUT", "float", 20.0, "seconds per provider call (at most a third "
        "of the lease)", lo=0.05, hi=3600),
    Var("ALETHEIA_PROVIDER_JOB_TOKENS", "int", 12_000, "provider tokens one job may spend",
        lo=1, hi=10**12),
    Var("ALETHEIA_PROVIDER_DAY_TOKENS", "int", 400_000, "provider tokens all workers may spend "
        "in a day", lo=1, hi=10**12),
    Var("ALETHEIA_VENV", "str", "${XDG_DATA_HOME:-~/.local/share}/aletheia/venv",
        "where scripts/install puts the venv", scope="scripts"),
    Var("ALETHEIA_BIN_DIR", "str", "~/.local/bin", "where scripts/install links `aletheia`",
        scope="scripts"),
    Var("ALETHEIA_NPM_HOSTS", "str", ".cache/npm-hosts", "where scripts/npm-hosts installs the "
        "host CLIs the end-to-end tests run", scope="scripts"),
    Var("ALETHEIA_NPM_AXE", "str", ".cache/npm-axe", "where scripts/npm-axe installs axe-core for "
        "the dashboard's accessibility test", scope="scripts"),
    Var("ALETHEIA_HOOK_FAULT", "str", "", "tests: hang-write makes the hook's write hang",
        scope="test"),
    Var("ALETHEIA_JOB_FAULT", "str", "", "tests: fail, sleep:SECONDS or write-sleep:SECONDS in "
        "every job",
        scope="test"),
)}

SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("excluded_projects", [], list, "projects (names, paths or globs) that capture nothing",
            env="ALETHEIA_EXCLUDED_PROJECTS"),
    Setting("context.pinned", 50, int, "pinned memories in the context block", 0, 50),
    Setting("context.facts", 40, int,
            "project knowledge lines in the context block (besides the stack line)", 0, 80),
    Setting("context.recent", 5, int,
            "recent sessions, with how they ended, in the context block", 0, 20),
    Setting("context.earlier", 15, int,
            "older sessions after the recent ones, only in the room project knowledge leaves",
            0, 30),
    Setting("context.requests", 2, int,
            "sessions not compressed yet, by their request, in the context block", 0, 5),
    Setting("context.weak_facts", False, bool,
            "let facts with weak evidence (one assistant remark, one session) into the block"),
    Setting("context.prompt_recall", True, bool,
            "per-prompt recall: what the store holds about each prompt (UserPromptSubmit)"),
    Setting("context.file_recall", True, bool,
            "per-file recall: what is known about a file the agent reads or edits (PreToolUse)"),
    Setting("provider", "", str, "model provider for extraction ('' = offline rules)",
            env="ALETHEIA_PROVIDER"),
)}

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_bool(name: str, text: str) -> bool:
    """The one boolean parser: 1/true/yes/on or 0/false/no/off, any case."""
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"{name} must be one of {'/'.join(_TRUE)} or {'/'.join(_FALSE)}, "
                      f"not {text.strip()!r}")


def parse(var: Var, text: str) -> Any:
    """``text`` (already stripped, non-empty) as ``var``'s type, within its bounds."""
    low = text.lower()
    if low in var.aliases:
        return var.aliases[low]
    if var.kind == "bool":
        return parse_bool(var.name, text)
    if var.kind == "list":
        parts = (text.replace(os.pathsep, ",") if var.paths else text).split(",")
        return [p.strip() for p in parts if p.strip()]
    if var.kind in ("int", "float"):
        try:
            number: float = int(text) if var.kind == "int" else float(text)
        except ValueError:
            raise ConfigError(f"{var.name} must be {'an integer' if var.kind == 'int' else 'a number'}"
                              f", not {text!r}") from None
        if number != number or (var.lo is not None and number < var.lo) or \
                (var.hi is not None and number > var.hi):
            raise ConfigError(f"{var.name} must be between {var.lo:g} and {var.hi:g}, not {text}")
        return number
    return text


def env(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The value of variable ``name`` in ``environ`` (default: this process's), typed; its
    default when unset or blank.  Raises ``ConfigError`` for a value its type does not take."""
    var = VARS[name]
    given = (os.environ if environ is None else environ).get(name)
    text = "" if given is None else given.strip()
    if not text:
        return var.blank if given is not None and var.blank is not None else var.default
    return parse(var, text)


def is_set(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """The variable decides its value (set, and not blank unless blank means something)."""
    given = (os.environ if environ is None else environ).get(name)
    return given is not None and (bool(given.strip()) or VARS[name].blank is not None)


def describe(conn: sqlite3.Connection | None = None,
             environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every variable and setting with its value and where the value came from."""
    environ = os.environ if environ is None else environ
    out: list[dict[str, Any]] = []
    for var in VARS.values():
        entry: dict[str, Any] = {"name": var.name, "kind": var.kind, "scope": var.scope,
                                 "default": var.default, "help": var.help,
                                 "source": "environment" if is_set(var.name, environ)
                                 else "default"}
        try:
            value = env(var.name, environ)
        except ConfigError as exc:
            value, entry["error"] = environ.get(var.name), exc.message
        entry["value"] = "(set)" if var.kind == "secret" and value else value
        out.append(entry)
    stored: dict[str, Any] = {}
    if conn is not None:
        from aletheia import settings

        stored = settings.stored(conn)
    for spec in SETTINGS.values():
        entry = {"name": spec.key, "kind": spec.kind.__name__, "scope": "setting",
                 "default": spec.default, "help": spec.help,
                 "source": "setting" if spec.key in stored else "default",
                 "value": stored.get(spec.key, spec.default)}
        if spec.env:
            entry["env"] = spec.env
        out.append(entry)
    return out


def doctor_check(conn: sqlite3.Connection | None) -> dict[str, Any]:
    """``aletheia doctor``'s configuration check: every variable and setting with its value and
    where it came from; a problem when a variable holds a value its type does not take."""
    entries = describe(conn)
    bad = [e for e in entries if e.get("error")]
    changed = sum(1 for e in entries if e["source"] != "default")
    summary = (f"{len(entries)} variables and settings, {changed} not at their default"
               + (f"; {len(bad)} bad: " + "; ".join(e["error"] for e in bad) if bad else ""))
    return {"name": "config", "status": "problem" if bad else "ok", "summary": summary,
            "hint": "fix or unset the variable" if bad else None,
            "data": {"entries": entries, "detail": render(entries)}}


def render(entries: list[dict[str, Any]]) -> list[str]:
    """``describe``'s entries as aligned lines: name, value, (source), and an error if any."""
    width = max(len(e["name"]) for e in entries)
    lines = []
    for e in entries:
        value = e["value"]
        if isinstance(value, bool):
            shown = "on" if value else "off"
        elif isinstance(value, list):
            shown = ",".join(value)
        else:
            shown = "" if value is None else str(value)
        line = f"{e['name']:{width}}  {shown:30.200}  ({e['source']})"
        if e.get("error"):
            line += f"  error: {e['error']}"
        lines.append(line)
    return lines

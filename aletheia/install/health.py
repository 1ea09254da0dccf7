"""Do the hooks and MCP entries that ``aletheia install`` wrote still point at something?

A host runs a hook by its absolute interpreter and script path.  When that install moves or
goes (a deleted clone, an upgraded Python), every hook fails, and silently: hooks exit 0 by
design.  ``doctor`` calls :func:`broken_entries` to find them before the user wonders why
nothing was captured.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aletheia.install import base

# Absolute paths inside quotes (JSON, TOML and JS all quote them).
_QUOTED_PATH = re.compile(r"""["'](/[^"'\n]+)["']""")


@dataclass(frozen=True)
class Broken:
    host: str
    file: str
    what: str  # "hook" | "MCP server"
    missing: str  # the path that is gone (or not executable)

    def line(self) -> str:
        return f"{self.host}: a {self.what} in {self.file} runs {self.missing}, which is missing"

    def to_dict(self) -> dict[str, str]:
        return {"host": self.host, "file": self.file, "what": self.what, "missing": self.missing,
                "message": self.line()}


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _check(path: str, *, interpreter: bool) -> bool:
    return _runnable(path) if interpreter else os.path.isfile(path)


def _command_paths(command: str) -> Iterator[tuple[str, bool]]:
    """(path, is_interpreter) for a hook command of ours: its program and its script."""
    try:
        parts = shlex.split(command)
    except ValueError:
        return
    if parts and parts[0].startswith("/"):
        yield parts[0], True
    for p in parts[1:]:
        if p.startswith("/") and p.endswith(".py"):
            yield p, False


def _walk_json(doc: Any, host: str, file: str, under_mcp: bool = False) -> Iterator[Broken]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == base.MCP_NAME and under_mcp and isinstance(value, dict):
                command = value.get("command")
                program = command[0] if isinstance(command, list) and command else command
                if isinstance(program, str) and program.startswith("/") and not _runnable(program):
                    yield Broken(host, file, "MCP server", program)
                continue
            yield from _walk_json(value, host, file, under_mcp=key in ("mcpServers", "mcp"))
    elif isinstance(doc, list):
        for item in doc:
            yield from _walk_json(item, host, file)
    elif isinstance(doc, str) and base.is_our_command(doc):
        for path, interp in _command_paths(doc):
            if not _check(path, interpreter=interp):
                yield Broken(host, file, "hook", path)


def _scan_text(text: str, host: str, file: str, what: str) -> Iterator[Broken]:
    """A TOML block or a JS plugin of ours: every quoted interpreter or hook script in it."""
    for m in _QUOTED_PATH.finditer(text):
        path = m.group(1)
        if os.path.basename(path).startswith("python") and not _runnable(path):
            yield Broken(host, file, what, path)
        elif path.endswith("/hooks/run.py") and not os.path.isfile(path):
            yield Broken(host, file, "hook", path)


def _load(text: str) -> Any:
    """A JSON config, or a JSONC one (OpenCode's may hold comments); None if neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    from aletheia.errors import InvalidInput
    from aletheia.install import jsonc

    try:
        return jsonc.to_python(text, jsonc.parse(text))
    except (InvalidInput, ValueError):
        return None


def _files(home: Path) -> dict[str, str]:
    """Config file → host: what install-state recorded, plus every host's user-level files."""
    from aletheia.install import HOSTS

    out: dict[str, str] = {}
    for path, record in base.load_state()["files"].items():
        if isinstance(record, dict) and isinstance(record.get("host"), str):
            out[path] = record["host"]
    for name, module in HOSTS.items():
        try:
            plan = module.plan("install", home=home, project=None, mcp=True)
        except Exception:  # a config we cannot parse is the host check's business, not ours
            continue
        for edit in plan.edits:
            out.setdefault(str(edit.path), name)
    return out


def broken_entries(home: Path | None = None) -> list[Broken]:
    """Every aletheia hook or MCP entry, in any host config we know of, whose interpreter or
    script no longer exists."""
    home = Path(os.path.expanduser("~")) if home is None else home
    found: list[Broken] = []
    begin, end = base.block_markers("#", "MCP server")
    for file, host in sorted(_files(home).items()):
        data = base.read_bytes(Path(file))
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if file.endswith((".json", ".jsonc")):
            doc = _load(text)
            if doc is None:
                continue
            found.extend(_walk_json(doc, host, file))
            if host == "opencode":  # the plugin's options: {"python": …, "hook": …}
                found.extend(_scan_text(text, host, file, "hook"))
        elif begin in text:  # codex config.toml: only our marked block
            span = base.find_block(text, begin, end)
            if span is not None:
                found.extend(_scan_text(text[span[0]:span[1]], host, file, "MCP server"))
        elif os.path.basename(file) in ("aletheia.js", "aletheia.ts"):  # a file we own whole
            found.extend(_scan_text(text, host, file, "hook"))
    unique: dict[tuple[str, str, str], Broken] = {}
    for b in found:
        unique.setdefault((b.file, b.what, b.missing), b)
    return list(unique.values())


def installed_hosts(home: Path | None = None) -> dict[str, bool]:
    """Hosts whose user-level config aletheia wrote (per install-state) → whether the MCP
    server was part of it: what ``aletheia install --refresh`` writes again."""
    from aletheia.install import HOSTS

    home = Path(os.path.expanduser("~")) if home is None else home
    state = base.load_state()["files"]
    out: dict[str, bool] = {}
    for name, module in HOSTS.items():
        try:
            plan = module.plan("install", home=home, project=None, mcp=True)
        except Exception:
            continue
        ours = [e for e in plan.edits
                if isinstance(state.get(str(e.path)), dict) and state[str(e.path)].get("host") == name]
        if ours:
            out[name] = any(_has_our_mcp(e.path) for e in ours)
    return out


def _has_our_mcp(path: Path) -> bool:
    data = base.read_bytes(path)
    if data is None:
        return False
    text = data.decode("utf-8", "replace")
    if path.suffix not in (".json", ".jsonc"):
        return base.block_markers("#", "MCP server")[0] in text
    doc = _load(text)
    return isinstance(doc, dict) and any(
        isinstance(doc.get(key), dict) and base.MCP_NAME in doc[key] for key in ("mcpServers", "mcp"))

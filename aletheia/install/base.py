"""What every host installer shares: the hook command, JSON/TOML merging, diffs, backups, undo.

An installer computes a *plan* (each config file's bytes before and after) without touching
anything; ``apply`` then backs up every file it changes into ``$ALETHEIA_HOME/backups/`` and
records what it wrote in ``$ALETHEIA_HOME/install-state.json``.  ``uninstall`` restores the
original bytes when the file is still exactly what we wrote, and otherwise removes only our
entries (the user edited the file since: keep their edits).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia import paths
from aletheia.errors import InvalidInput

STATE_FILE = "install-state.json"
MCP_NAME = "aletheia"
# The MCP server is the CLI's stdio server; ``-m aletheia`` works for any install layout.  ``-P``
# (Python 3.11+): ``-m`` puts the working directory first on sys.path, so a host started inside
# a clone of aletheia would run that clone's ./aletheia instead of this install.
MCP_ARGS = ["-P", "-m", "aletheia", "mcp"]
# How every MCP entry of ours ends, this install's and an older one's (written without -P).
MCP_TAIL = MCP_ARGS[-3:]

JSON = dict[str, Any]


# -- what the host runs ------------------------------------------------------------------------


def python() -> str:
    """The interpreter that runs aletheia, as an absolute path (never a shim found on PATH).

    Not resolved through symlinks: a venv's ``bin/python`` is a symlink, and resolving it would
    step outside the venv.
    """
    return os.path.abspath(sys.executable)


def _package() -> Path:
    import aletheia

    return Path(aletheia.__file__).resolve().parent


def hook_script() -> Path:
    """``hooks/run.py`` of this install (editable checkout or site-packages alike), found
    without importing the hook package (the core imports none of hooks, tasks and web)."""
    return (_package() / "hooks").resolve() / "run.py"


# The folders whose modules the hook imports (``tests/test_install.py`` checks this list
# against what a hook run really loads).
HOOK_PACKAGES = (".", "capture", "hooks")


def checkout_of_install() -> Path | None:
    """The source checkout this install runs from (an editable install), or None when it is a
    regular install (a venv's site-packages) that does not depend on any clone."""
    for parent in hook_script().parents:
        if (parent / ".git").exists() and (parent / "pyproject.toml").is_file():
            return parent
        if parent.name == "site-packages":
            return None
    return None


def precompile_hook() -> None:
    """Byte-compile the modules the hook imports.  pip does this for a regular install, but an
    editable checkout run with PYTHONDONTWRITEBYTECODE (common on CI machines and in
    containers) would recompile them on every host event: ~15 ms of a ~40 ms hook.  Best
    effort: a read-only install keeps whatever it has."""
    import compileall

    for folder in HOOK_PACKAGES:
        with contextlib.suppress(OSError):
            compileall.compile_dir(str((_package() / folder).resolve()), maxlevels=0, quiet=2)


def hook_command(host: str, event: str) -> str:
    """The fast hook form: ``<python> -I -S <run.py> <host> <Event>`` (stdlib only, ~15 ms)."""
    return " ".join(shlex.quote(p) for p in (python(), "-I", "-S", str(hook_script()), host, event))


_OURS_RE = re.compile(r"(?:hooks[/\\]run\.py['\"]?|\baletheia['\"]?\s+hook)\s+(?P<host>[\w-]+)\b")


def is_our_command(command: Any, host: str | None = None) -> bool:
    """True for a hook command an aletheia installer wrote (any interpreter path, any version)."""
    if not isinstance(command, str):
        return False
    m = _OURS_RE.search(command)
    return m is not None and (host is None or m.group("host") == host)


def mcp_server() -> JSON:
    return {"command": python(), "args": list(MCP_ARGS)}


# -- a plan: files before and after ------------------------------------------------------------


@dataclass
class FileEdit:
    path: Path
    before: bytes | None  # None: the file does not exist
    after: bytes | None  # None: delete the file
    what: str = ""  # "hooks", "MCP server", "plugin" … for the summary line

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Plan:
    host: str
    action: str  # "install" | "uninstall"
    edits: list[FileEdit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # uninstall: files left alone because another host's install still uses our entry there
    released: list[Path] = field(default_factory=list)

    @property
    def changed(self) -> list[FileEdit]:
        return [e for e in self.edits if e.changed]

    def diff(self) -> str:
        out: list[str] = []
        for e in self.changed:
            old = _text(e.before).splitlines(keepends=True)
            new = _text(e.after).splitlines(keepends=True)
            out.extend(
                difflib.unified_diff(
                    old, new,
                    fromfile=str(e.path) if e.before is not None else "/dev/null",
                    tofile=str(e.path) if e.after is not None else "/dev/null",
                )
            )
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n\\ No newline at end of file\n"
        return "".join(out)


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# -- JSON documents ----------------------------------------------------------------------------


@dataclass
class JsonStyle:
    indent: int | str | None = 2
    trailing_newline: bool = True


def load_json(path: Path, data: bytes | None) -> tuple[JSON, JsonStyle]:
    """Parse a config file (absent or empty: ``{}``) and remember how it was laid out."""
    if data is None or not data.strip():
        return {}, JsonStyle()
    text = data.decode("utf-8-sig")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(
            f"{path} is not valid JSON ({exc}); fix or move it, then run this again "
            "(nothing was changed)"
        ) from None
    if not isinstance(doc, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed")
    return doc, _style(text)


def _style(text: str) -> JsonStyle:
    indent: int | str | None = None
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            indent = lead if "\t" in lead else len(lead)
            break
    if indent is None and "\n" in text.strip():
        indent = 2
    return JsonStyle(indent=indent, trailing_newline=text.endswith("\n"))


def dump_json(doc: JSON, style: JsonStyle) -> bytes:
    if style.indent is None:
        text = json.dumps(doc, ensure_ascii=False, separators=(", ", ": "))
    else:
        text = json.dumps(doc, ensure_ascii=False, indent=style.indent)
    return (text + ("\n" if style.trailing_newline else "")).encode("utf-8")


def json_edit(path: Path, mutate: Callable[[JSON], None], *, what: str,
              delete_if_empty: bool = False) -> FileEdit:
    """A FileEdit that applies ``mutate`` to the parsed file; no change keeps the exact bytes."""
    before = read_bytes(path)
    doc, style = load_json(path, before)
    snapshot = json.dumps(doc, sort_keys=False)
    mutate(doc)
    if json.dumps(doc, sort_keys=False) == snapshot:
        return FileEdit(path, before, before, what)
    if not doc and delete_if_empty:
        return FileEdit(path, before, None, what)
    return FileEdit(path, before, dump_json(doc, style), what)


# -- Claude-style hook lists: {"hooks": {Event: [{"matcher"?, "hooks": [{type, command}]}]}} ----


def add_group_hooks(doc: JSON, host: str, events: Iterable[tuple[str, str | None, str]],
                    *, extra: Callable[[str], JSON] | None = None,
                    container: str = "hooks") -> None:
    """Add one group per (config event, matcher, our event name); idempotent, in place.

    An up-to-date entry of ours is left as it is, a stale one (another interpreter path, an
    older layout) is replaced where it stands, and a missing one is appended: so a second
    install changes no byte, and the user's own entries never move.
    """
    hooks = doc.setdefault(container, {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f'"{container}" in the config is not an object; nothing was changed')
    for config_event, matcher, our_event in events:
        entry: JSON = {"type": "command", "command": hook_command(host, our_event)}
        if extra is not None:
            entry.update(extra(our_event))
        group: JSON = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [entry]
        groups = hooks.setdefault(config_event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f'hooks."{config_event}" is not a list; nothing was changed')
        mine = [i for i, g in enumerate(groups) if _group_is_ours(g, host)]
        if mine:
            if groups[mine[0]] != group:
                groups[mine[0]] = group
            for i in reversed(mine[1:]):
                del groups[i]
        else:
            groups.append(group)


def _group_is_ours(group: Any, host: str) -> bool:
    if not isinstance(group, dict):
        return False
    inner = group.get("hooks")
    return (
        isinstance(inner, list) and len(inner) > 0
        and all(isinstance(h, dict) and is_our_command(h.get("command"), host) for h in inner)
    )


def remove_group_hooks(doc: JSON, host: str, *, container: str = "hooks") -> None:
    """Remove every hook of ours; drop the groups, events and container that we emptied."""
    hooks = doc.get(container)
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for g in groups:
            inner = g.get("hooks") if isinstance(g, dict) else None
            if isinstance(inner, list) and any(
                isinstance(h, dict) and is_our_command(h.get("command"), host) for h in inner
            ):
                rest = [h for h in inner
                        if not (isinstance(h, dict) and is_our_command(h.get("command"), host))]
                if rest:
                    kept.append({**g, "hooks": rest})
                continue
            kept.append(g)
        if len(kept) != len(groups) or kept != groups:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del doc[container]


# -- flat hook lists: {"hooks": {event: [{"command": …}]}} (Cursor, Windsurf) -------------------


def add_flat_hooks(doc: JSON, host: str, events: Iterable[tuple[str, str]],
                   *, extra: JSON | None = None) -> None:
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput('"hooks" in the config is not an object; nothing was changed')
    for config_event, our_event in events:
        entry: JSON = {"command": hook_command(host, our_event), **(extra or {})}
        items = hooks.setdefault(config_event, [])
        if not isinstance(items, list):
            raise InvalidInput(f'hooks."{config_event}" is not a list; nothing was changed')
        mine = [i for i, h in enumerate(items)
                if isinstance(h, dict) and is_our_command(h.get("command"), host)]
        if mine:
            if items[mine[0]] != entry:
                items[mine[0]] = entry
            for i in reversed(mine[1:]):
                del items[i]
        else:
            items.append(entry)


def remove_flat_hooks(doc: JSON, host: str) -> None:
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        items = hooks[event]
        if not isinstance(items, list):
            continue
        kept = [h for h in items
                if not (isinstance(h, dict) and is_our_command(h.get("command"), host))]
        if len(kept) != len(items):
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del doc["hooks"]


# -- MCP server maps: {"mcpServers": {"aletheia": {...}}} ---------------------------------------


def set_mcp(doc: JSON, server: JSON, *, key: str = "mcpServers") -> None:
    servers = doc.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f'"{key}" in the config is not an object; nothing was changed')
    if servers.get(MCP_NAME) != server:
        servers[MCP_NAME] = server


def remove_mcp(doc: JSON, *, key: str = "mcpServers") -> None:
    servers = doc.get(key)
    if isinstance(servers, dict) and MCP_NAME in servers:
        del servers[MCP_NAME]
        if not servers:
            del doc[key]


# -- marked text blocks (TOML, Markdown, JS files we own) ---------------------------------------


def block_markers(comment: str, what: str) -> tuple[str, str]:
    return (f"{comment} >>> aletheia {what} (managed by aletheia; edit outside this block) >>>",
            f"{comment} <<< aletheia {what} <<<")


def find_block(text: str, begin: str, end: str) -> tuple[int, int] | None:
    """Span of the block including its trailing newline, or None."""
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        raise InvalidInput("an aletheia block has a start marker and no end marker; fix the file")
    stop += len(end)
    if text.startswith("\n", stop):
        stop += 1
    return start, stop


def put_block(text: str, begin: str, end: str, body: str) -> str:
    """Replace our block, or append it after a blank line; an identical block changes nothing."""
    block = f"{begin}\n{body.rstrip(chr(10))}\n{end}\n"
    span = find_block(text, begin, end)
    if span is not None:
        return text[: span[0]] + block + text[span[1]:]
    if not text:
        return block
    if text.endswith("\n\n"):
        return text + block
    return text + ("\n" if text.endswith("\n") else "\n\n") + block


def drop_block(text: str, begin: str, end: str) -> str:
    span = find_block(text, begin, end)
    if span is None:
        return text
    head, tail = text[: span[0]], text[span[1]:]
    # Take back the blank line put_block added in front of the block.
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + tail


def text_edit(path: Path, transform: Callable[[str], str], *, what: str,
              delete_if_empty: bool = False) -> FileEdit:
    before = read_bytes(path)
    text = "" if before is None else before.decode("utf-8")
    after = transform(text)
    if after == text:
        return FileEdit(path, before, before, what)
    if not after.strip() and delete_if_empty:
        return FileEdit(path, before, None, what)
    return FileEdit(path, before, after.encode("utf-8"), what)


def whole_file(path: Path, content: str | None, *, what: str) -> FileEdit:
    """A file we own entirely (a plugin): write ``content``, or delete it when None."""
    before = read_bytes(path)
    after = None if content is None else content.encode("utf-8")
    return FileEdit(path, before, after, what)


# -- applying a plan: backups, state, atomic writes ---------------------------------------------


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def state_path() -> Path:
    return paths.home() / STATE_FILE


def load_state() -> JSON:
    try:
        data = json.loads(state_path().read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        return {"files": {}}
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return {"files": {}}
    return data


def save_state(state: JSON) -> None:
    paths.ensure_home()
    _atomic_write(state_path(), json.dumps(state, indent=2, sort_keys=True).encode() + b"\n",
                  mode=paths.FILE_MODE)


def _atomic_write(path: Path, data: bytes, *, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _backup(path: Path, data: bytes, host: str, now: float) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    folder = paths.home() / "backups" / f"{stamp}-{host}"
    paths.ensure_dir(folder)
    name = str(path).strip(os.sep).replace(os.sep, "__") or "root"
    target = folder / name
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{name}.{n}"
    paths.touch_private(target)
    target.write_bytes(data)
    return target


def _created_dirs(path: Path) -> list[str]:
    """Parent directories of ``path`` that do not exist yet (outermost first)."""
    missing: list[str] = []
    parent = path.parent
    while not parent.exists():
        missing.append(str(parent))
        if parent.parent == parent:
            break
        parent = parent.parent
    return list(reversed(missing))


def _hosts(record: JSON) -> list[str]:
    """The hosts whose install wrote into a file (one, unless several share it, e.g. the
    project's ``.mcp.json`` that Claude Code and Command Code both read)."""
    hosts = record.get("hosts")
    if isinstance(hosts, list):
        return [h for h in hosts if isinstance(h, str)]
    return [record["host"]] if isinstance(record.get("host"), str) else []


def shared_with(path: Path, host: str) -> list[str]:
    """Other hosts whose install still needs what we wrote into ``path``."""
    record = load_state()["files"].get(str(path))
    return [h for h in _hosts(record) if h != host] if isinstance(record, dict) else []


def recorded_original(path: Path) -> tuple[bool, bytes | None]:
    """(known, bytes before our first install): ``(True, None)`` when an install created the
    file, ``(False, None)`` when no install of ours is recorded for it (or its backup is gone)."""
    record = load_state()["files"].get(str(path))
    if not isinstance(record, dict):
        return False, None
    original = record.get("original")
    if original is None:
        return True, None
    data = read_bytes(Path(original))
    if data is None or _sha(data) != record.get("original_sha256"):
        return False, None
    return True, data


def _remove(e: FileEdit, record: JSON | None, made_dirs: list[str]) -> None:
    with contextlib.suppress(FileNotFoundError):
        e.path.unlink()
    made_dirs.extend((record or {}).get("created_dirs") or [])


def apply(plan: Plan, *, now: float | None = None) -> list[str]:
    """Write the plan's changed files; return one line per file for the report."""
    stamp = time.time() if now is None else now
    state = load_state()
    files: JSON = state["files"]
    lines: list[str] = []
    made_dirs: list[str] = []
    for e in plan.changed:
        key = str(e.path)
        record = files.get(key)
        if e.after is None:  # a file of ours goes (uninstall, or an install dropping an old one)
            _remove(e, record, made_dirs)
            lines.append(f"removed {e.path}")
            files.pop(key, None)
        elif plan.action == "install":
            if record is None:
                # First time we touch this file: keep its original bytes.
                backup = _backup(e.path, e.before, plan.host, stamp) if e.before is not None else None
                record = {"host": plan.host, "original": str(backup) if backup else None,
                          "original_sha256": _sha(e.before),
                          "created_dirs": _created_dirs(e.path) if e.before is None else []}
            record["hosts"] = sorted({*_hosts(record), plan.host})
            e.path.parent.mkdir(parents=True, exist_ok=True)
            mode = (e.path.stat().st_mode & 0o777) if e.before is not None else 0o644
            _atomic_write(e.path, e.after, mode=mode)
            record["written_sha256"] = _sha(e.after)
            files[key] = record
            suffix = f" (backup: {record['original']})" if record.get("original") else ""
            lines.append(f"{'updated' if e.before is not None else 'created'} {e.path}: "
                         f"{e.what}{suffix}")
        else:
            mode = (e.path.stat().st_mode & 0o777) if e.before is not None else 0o644
            _atomic_write(e.path, e.after, mode=mode)
            lines.append(f"restored {e.path}")
            files.pop(key, None)
    if plan.action == "install":
        # A file another host's install already holds our entry in (identical: no change)
        # now serves this host too, so uninstalling either one keeps it for the other.
        for e in plan.edits:
            record = files.get(str(e.path))
            if not e.changed and isinstance(record, dict) and e.after is not None:
                record["hosts"] = sorted({*_hosts(record), plan.host})
    else:
        # Directories we created, deepest first, and only if empty: the user may use them now.
        for d in sorted(set(made_dirs), key=len, reverse=True):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        for e in plan.edits:
            files.pop(str(e.path), None)  # files that needed no change are no longer ours either
        for path in plan.released:
            record = files.get(str(path))
            if isinstance(record, dict):
                record["hosts"] = [h for h in _hosts(record) if h != plan.host]
                record["host"] = record["hosts"][0] if record["hosts"] else record.get("host")
    save_state(state)
    return lines


def undo_edit(structural: FileEdit) -> FileEdit:
    """For uninstall: the exact original bytes if the file is still what we wrote, else the
    structural removal (our entries out, the user's later edits kept)."""
    record = load_state()["files"].get(str(structural.path))
    if record is None or structural.before is None:
        return structural
    if _sha(structural.before) != record.get("written_sha256"):
        return structural
    original = record.get("original")
    if original is None:
        return FileEdit(structural.path, structural.before, None, structural.what)
    data = read_bytes(Path(original))
    if data is None or _sha(data) != record.get("original_sha256"):
        return structural  # the backup is gone: fall back to removing our entries
    return FileEdit(structural.path, structural.before, data, structural.what)

"""OpenCode (written against and run with ``opencode-ai`` 1.18.33, see tests/e2e/hosts).

OpenCode has no shell hooks: its plugins run in-process.  Our plugin is a file of aletheia's
own package (``assets/opencode-plugin.js``) that hands each event to the same stdlib hook every
other host runs.  ``install`` adds two entries to OpenCode's config and nothing else:

- ``"plugin": [["file:///…/opencode-plugin.js", {"python": …, "hook": …}]]``, and
- ``"mcp": {"aletheia": {"type": "local", "command": [python, "-P", "-m", "aletheia", "mcp"]}}``,

in ``~/.config/opencode/opencode.json[c]`` (``--project``: ``<dir>/opencode.json[c]``, which
OpenCode finds from any subdirectory of the repository).  Nothing goes into a ``.opencode/``
folder: OpenCode runs ``npm install`` in each one it finds when it starts.

The edit is textual (``jsonc``): comments, key order and layout stay byte for byte outside our
two entries.  OpenCode inserts ``"$schema"`` into a config file that lacks it on its next start,
so a file we create carries it from the start, and ``uninstall`` recognises a file of ours by
what is left once our entries are out (nothing but ``$schema``), not by its bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from aletheia.errors import InvalidInput
from aletheia.install import base, jsonc

NAME = "opencode"
WRITTEN_AGAINST = "opencode-ai 1.18.33 (driven end to end in tests/e2e/hosts)"
SCHEMA = "https://opencode.ai/config.json"
PLUGIN_FILE = "opencode-plugin.js"
# What the installers of aletheia <= 0.1 wrote instead (a generated plugin file in a plugins/
# folder); an install or uninstall removes it when it is still ours.
_LEGACY_HEADER = "// aletheia capture plugin for OpenCode"


def plugin_path() -> Path:
    return Path(__file__).resolve().parent / "assets" / PLUGIN_FILE


def plugin_entry() -> list[Any]:
    return [plugin_path().as_uri(), {"python": base.python(), "hook": str(base.hook_script())}]


def mcp_entry() -> dict[str, Any]:
    server = base.mcp_server()
    return {"type": "local", "command": [server["command"], *server["args"]], "enabled": True}


def _is_our_plugin(item: Any) -> bool:
    spec = item[0] if isinstance(item, list) and item else item
    return isinstance(spec, str) and spec.startswith("file://") and spec.endswith(
        "/assets/" + PLUGIN_FILE) and "aletheia" in spec


def _is_our_mcp(entry: Any) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, list) and command[-3:] == base.MCP_TAIL


def config_dir(home: Path, project: Path | None) -> Path:
    if project is not None:
        return project
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else home / ".config") / "opencode"


def candidates(home: Path, project: Path | None) -> list[Path]:
    """OpenCode's config files at this level, in the order it prefers them."""
    names = ["opencode.jsonc", "opencode.json"] + ([] if project is not None else ["config.json"])
    return [config_dir(home, project) / n for n in names]


def config_file(home: Path, project: Path | None) -> Path:
    """The file we edit: the first that exists, or a new ``opencode.json``."""
    found = next((p for p in candidates(home, project) if p.exists()), None)
    return found if found is not None else config_dir(home, project) / "opencode.json"


# -- text edits ---------------------------------------------------------------------------------


def _decode(path: Path, data: bytes | None) -> str:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed") from None


def install_text(path: Path, text: str, *, mcp: bool) -> str:
    if not text.strip():
        doc: dict[str, Any] = {"$schema": SCHEMA, "plugin": [plugin_entry()]}
        if mcp:
            doc["mcp"] = {base.MCP_NAME: mcp_entry()}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    where = str(path)
    root = jsonc.parse(text, where)
    plugins = jsonc.member(root, "plugin")
    if plugins is None:
        text = jsonc.add_member(text, root, "plugin", [plugin_entry()])
    elif plugins.value.kind != "array":
        raise InvalidInput(f'{path}: "plugin" is not a list; nothing was changed')
    else:
        ours = [i for i, item in enumerate(plugins.value.items)
                if _is_our_plugin(jsonc.to_python(text, item))]
        if not ours:
            text = jsonc.add_item(text, plugins.value, plugin_entry())
        else:
            for i in reversed(ours[1:]):  # one entry of ours, however many a past install left
                text = jsonc.remove_item(text, plugins.value, i)
            item = jsonc.member(jsonc.parse(text, where), "plugin").value.items[ours[0]]  # type: ignore[union-attr]
            if jsonc.to_python(text, item) != plugin_entry():
                text = jsonc.replace_value(text, item, plugin_entry())
    if not mcp:
        return text
    root = jsonc.parse(text, where)
    servers = jsonc.member(root, "mcp")
    if servers is None:
        return jsonc.add_member(text, root, "mcp", {base.MCP_NAME: mcp_entry()})
    if servers.value.kind != "object":
        raise InvalidInput(f'{path}: "mcp" is not an object; nothing was changed')
    current = jsonc.member(servers.value, base.MCP_NAME)
    if current is None:
        return jsonc.add_member(text, servers.value, base.MCP_NAME, mcp_entry())
    value = jsonc.to_python(text, current.value)
    if not _is_our_mcp(value):
        raise InvalidInput(f'{path} already has an MCP server named "{base.MCP_NAME}" that is not '
                           "aletheia's; rename it or install with --no-mcp (nothing was changed)")
    if value != mcp_entry():
        text = jsonc.replace_value(text, current.value, mcp_entry())
    return text


def uninstall_text(path: Path, text: str, original: str | None) -> str | None:
    """Our entries out; a container we created goes once empty; ``None``: delete the file
    (we created it and nothing but OpenCode's ``$schema`` is left)."""
    if not text.strip():
        return text
    where = str(path)
    before = _keys(original, where)
    root = jsonc.parse(text, where)
    plugins = jsonc.member(root, "plugin")
    if plugins is not None and plugins.value.kind == "array":
        for i in reversed(range(len(plugins.value.items))):
            if _is_our_plugin(jsonc.to_python(text, plugins.value.items[i])):
                text = jsonc.remove_item(text, plugins.value, i)
                plugins = jsonc.member(jsonc.parse(text, where), "plugin")
                assert plugins is not None
        if not plugins.value.items and "plugin" not in before:
            text = jsonc.remove_member(text, jsonc.parse(text, where), "plugin")
    root = jsonc.parse(text, where)
    servers = jsonc.member(root, "mcp")
    if servers is not None and servers.value.kind == "object":
        ours = jsonc.member(servers.value, base.MCP_NAME)
        if ours is not None and _is_our_mcp(jsonc.to_python(text, ours.value)):
            text = jsonc.remove_member(text, servers.value, base.MCP_NAME)
            servers = jsonc.member(jsonc.parse(text, where), "mcp")
            assert servers is not None
            if not servers.value.members and "mcp" not in before:
                text = jsonc.remove_member(text, jsonc.parse(text, where), "mcp")
    if original is None:
        left = {m.key for m in jsonc.parse(text, where).members}
        if left <= {"$schema"}:
            return None
    return text


def _keys(original: str | None, where: str) -> set[str]:
    if not original or not original.strip():
        return set()
    try:
        return {m.key for m in jsonc.parse(original, where).members}
    except InvalidInput:
        return set()


# -- the plan -----------------------------------------------------------------------------------


def _legacy_plugin(home: Path, project: Path | None) -> list[base.FileEdit]:
    root = (project / ".opencode") if project is not None else config_dir(home, None)
    edits = []
    for folder in ("plugins", "plugin"):
        path = root / folder / "aletheia.js"
        data = base.read_bytes(path)
        if data is not None and data.decode("utf-8", "replace").startswith(_LEGACY_HEADER):
            edits.append(base.FileEdit(path, data, None, "old capture plugin"))
    return edits


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    p = base.Plan(NAME, action)
    p.edits.extend(_legacy_plugin(home, project))
    if action == "install":
        path = config_file(home, project)
        before = base.read_bytes(path)
        after = install_text(path, _decode(path, before), mcp=mcp).encode("utf-8")
        p.edits.append(base.FileEdit(path, before, after if after != before else before,
                                     "capture plugin" + (", MCP server" if mcp else "")))
        p.notes.append(f"Written against {WRITTEN_AGAINST}. The plugin is {plugin_path()}; "
                       "nothing is written into a .opencode/ folder.")
        return p
    for path in candidates(home, project):
        before = base.read_bytes(path)
        if before is None:
            continue
        known, original = base.recorded_original(path)
        if not known:  # not written by an install we recorded: take out our entries only
            original = before
        text = uninstall_text(path, _decode(path, before),
                              None if original is None else _decode(path, original))
        p.edits.append(base.FileEdit(path, before, None if text is None else text.encode("utf-8"),
                                     "capture plugin, MCP server"))
    return p

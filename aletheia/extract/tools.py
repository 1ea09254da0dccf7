"""Tool events as the hooks store them (``input: {json}\n\noutput:\n…``) parsed into calls:
which tool, its command or paths, its output, whether the host said it failed."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from aletheia import patches
from aletheia.extract.items import Item

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "run_shell_command", "local_shell"})
EDIT_TOOLS = frozenset({
    "edit", "multiedit", "write", "notebookedit", "replace", "write_file", "apply_patch",
    "edit_file", "str_replace_editor", "str_replace_based_edit_tool", "create_file",
})
READ_TOOLS = frozenset({"read", "read_file", "view", "read_many_files", "notebookread"})
_OUTPUT_SEP = "\n\noutput:\n"


@dataclass(frozen=True)
class ToolCall:
    item: Item
    tool: str
    input: Any
    output: str
    failed: bool

    @property
    def name(self) -> str:
        return self.tool.lower()

    @property
    def command(self) -> str:
        value: Any = None
        if isinstance(self.input, dict):
            value = self.input.get("command", self.input.get("cmd"))
        elif isinstance(self.input, str) and self.name in SHELL_TOOLS:
            value = self.input
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)
            if value.startswith(("bash -lc ", "bash -c ", "sh -c ")):
                value = value.split(" ", 2)[2]
        return value.strip() if isinstance(value, str) else ""

    @property
    def is_shell(self) -> bool:
        return bool(self.command) and (self.name in SHELL_TOOLS or not self.paths)

    @property
    def is_edit(self) -> bool:
        return self.name in EDIT_TOOLS and not self.failed

    @property
    def is_read(self) -> bool:
        return self.name in READ_TOOLS and not self.failed

    @property
    def paths(self) -> list[str]:
        found = list(self.item.files)
        if isinstance(self.input, dict):
            for key in ("file_path", "path", "notebook_path", "filePath", "absolute_path"):
                value = self.input.get(key)
                if isinstance(value, str) and value not in found:
                    found.append(value)
            patch = self.input.get("patch") or self.input.get("input")
            if isinstance(patch, str):
                found.extend(p for p in patches.files(patch) if p not in found)
        elif isinstance(self.input, str) and self.name == "apply_patch":
            found.extend(patches.files(self.input))
        return found


def _unfolded(text: str) -> Any:
    """Capture stores a structure with a text field (a Write's ``content``) as that text, then
    the other fields as one JSON line: ``<content>\n{"file_path": …}``.  Put it back together
    (the text as it was, else)."""
    head, _, last = text.rpartition("\n")
    if not head or not last.startswith("{"):
        return text
    try:
        rest = json.loads(last)
    except ValueError:
        return text
    if not isinstance(rest, dict) or "content" in rest:
        return text
    return {**rest, "content": head}


def unfolded_output(text: str) -> str:
    """The text part of an output stored the same way (``<content>\n{"type": "create", …}``)."""
    found = _unfolded(text)
    return str(found["content"]) if isinstance(found, dict) else text


def parse_tool(item: Item) -> ToolCall | None:
    if item.kind != "tool_event":
        return None
    text = item.narrative
    raw_input, output = text, ""
    if text.startswith("input: "):
        body = text[len("input: "):]
        raw_input, _, output = body.partition(_OUTPUT_SEP)
    parsed: Any = raw_input
    with contextlib.suppress(ValueError):
        parsed = json.loads(raw_input)
    if isinstance(parsed, str):
        parsed = _unfolded(raw_input)
    tool = item.subtitle or item.title.split(":", 1)[0].split(" ", 1)[0] or "tool"
    failed = "error" in item.concepts or item.title.endswith("(failed)")
    return ToolCall(item=item, tool=tool, input=parsed, output=output, failed=failed)

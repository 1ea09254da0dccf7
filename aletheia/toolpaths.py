"""Which file a tool call reads or edits: a file tool's path, or the file a shell command shows
or patches.  Stdlib only and cheap to import: the hook asks it on every tool event before
deciding whether per-file recall (``aletheia.recall``, which it then imports) has anything to
do."""

from __future__ import annotations

import os
import re

from aletheia import patches

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

FILE_TOOLS = frozenset({
    "read", "edit", "multiedit", "write", "notebookedit", "notebookread", "read_file", "write_file",
    "replace", "edit_file", "create_file", "str_replace_editor", "str_replace_based_edit_tool",
    "read_many_files", "view",
})
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "absolute_path")
# A host without a read tool (Codex reads and patches files through its shell) or an agent that
# reaches for its shell: the file a command shows or patches is the file it works on.
SHELL_TOOLS = frozenset({"bash", "shell", "shell_command", "exec_command", "run_shell_command",
                         "local_shell"})
_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "bat", "sed"})
_VALUED = {"head": ("-n", "-c"), "tail": ("-n", "-c"), "sed": ("-e", "-f"), "nl": ("-w", "-s", "-v", "-i")}
_FIRST_COMMAND = re.compile(r"\|\||&&|[|;<>\n]")


def _shell_path(command: str) -> str | None:
    """The file a simple read (``cat``, ``head``, ``sed -n``, ``nl`` …) or an ``apply_patch``
    names; None for any other command."""
    if "apply_patch" in command:
        return next((path for kind, path in patches.headers(command) if kind in ("update", "add")),
                    None)
    import shlex

    try:
        words = shlex.split(_FIRST_COMMAND.split(command, maxsplit=1)[0])
    except ValueError:
        return None
    if not words or os.path.basename(words[0]) not in _READERS:
        return None
    name = os.path.basename(words[0])
    operands: list[str] = []
    valued = _VALUED.get(name, ())
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in valued:
            skip = True
        elif not word.startswith("-") or word == "-":
            operands.append(word)
    if name == "sed":
        if not any(w.startswith(("-n", "-i")) for w in words[1:]):
            return None  # a sed that rewrites its input to stdout: not a read of a file
        scripted = any(w in ("-e", "-f") for w in words[1:])
        operands = operands if scripted else operands[1:]
    return operands[-1] if name == "sed" and operands else (operands[0] if operands else None)


def tool_path(tool_name: str, tool_input: Any) -> str | None:
    """The file a read or edit tool call names, or a shell command reads or patches (None for
    any other tool)."""
    name = tool_name.lower()
    if name in SHELL_TOOLS:
        from aletheia.capture.memory import command_of

        command = command_of(tool_input)
        return _shell_path(command) if command else None
    if name not in FILE_TOOLS or not isinstance(tool_input, dict):
        return None
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None

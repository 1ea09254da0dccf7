"""``aletheia rules sync``: write the enabled rules for a host into its instruction file.

The rules go in a marked block that aletheia owns (Markdown comments), so the rest of the
file is never touched and a second sync with the same rules changes no byte; with no enabled
rules the block (and a file that only held it) goes away.  Cursor reads ``.cursor/rules/*.mdc``,
so for Cursor the whole file ``aletheia.mdc`` is ours.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from aletheia.errors import InvalidInput
from aletheia.install import base
from aletheia.rules import enabled_rules

BEGIN = "<!-- >>> aletheia rules (managed by `aletheia rules sync`; edit outside this block) >>> -->"
END = "<!-- <<< aletheia rules <<< -->"

# host -> instruction file, relative to the project directory
FILES: dict[str, str] = {
    "claude-code": "CLAUDE.md",
    "codex": "AGENTS.md",
    "opencode": "AGENTS.md",
    "gemini": "GEMINI.md",
    "cursor": ".cursor/rules/aletheia.mdc",
    "windsurf": ".windsurf/rules/aletheia.md",
    "command-code": "AGENTS.md",
}
_CURSOR_HEAD = ("---\ndescription: Standing rules kept in aletheia (written by `aletheia rules "
                "sync`; edits here are overwritten)\nalwaysApply: true\n---\n")
_WINDSURF_HEAD = "---\ntrigger: always_on\n---\n"


@dataclass
class SyncResult:
    host: str
    path: Path
    rules: int
    changed: bool
    diff: str


def _body(rules: list[str]) -> str:
    lines = ["## Rules kept in aletheia", ""]
    lines += [f"- {' '.join(r.split())}" for r in rules]
    return "\n".join(lines)


def render(host: str, current: str, rules: list[str]) -> str:
    if host in ("cursor", "windsurf"):
        if not rules:
            return ""
        head = _CURSOR_HEAD if host == "cursor" else _WINDSURF_HEAD
        return head + "\n" + base.put_block("", BEGIN, END, _body(rules))
    if not rules:
        return base.drop_block(current, BEGIN, END)
    return base.put_block(current, BEGIN, END, _body(rules))


def sync(conn: sqlite3.Connection, host: str, project_dir: Path, project: str, *,
         dry_run: bool = False) -> SyncResult:
    if host not in FILES:
        raise InvalidInput(f"no instruction file known for {host!r} (known: {', '.join(FILES)})")
    texts = [r["text"] for r in enabled_rules(conn, host, project)]
    path = project_dir / FILES[host]
    edit = base.text_edit(path, lambda t: render(host, t, texts), what="rules",
                          delete_if_empty=True)
    if edit.before is None and not texts:
        edit = base.FileEdit(path, None, None, "rules")
    plan = base.Plan(host, "sync", [edit])
    result = SyncResult(host, path, len(texts), edit.changed, plan.diff())
    if edit.changed and not dry_run:
        if edit.after is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(edit.after)
    return result

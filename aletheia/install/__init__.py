"""``aletheia install <host>`` / ``uninstall``: write (and undo exactly) each host's own config.

One module per host computes a plan (the bytes of each config file before and after); this
module runs it: a dry run prints the diff, a real run backs up and writes (``base.apply``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from aletheia.errors import InvalidInput
from aletheia.install import (
    base,
    claude_code,
    codex,
    command_code,
    cursor,
    gemini,
    opencode,
    windsurf,
)

HOSTS: dict[str, ModuleType] = {
    m.NAME: m for m in (claude_code, codex, gemini, cursor, opencode, windsurf, command_code)
}


@dataclass
class Outcome:
    host: str
    action: str
    dry_run: bool
    diff: str
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    changed: bool = False


def host_module(host: str) -> ModuleType:
    try:
        return HOSTS[host]
    except KeyError:
        raise InvalidInput(f"unknown host {host!r} (known: {', '.join(HOSTS)})") from None


def make_plan(host: str, action: str, *, project: Path | None = None, mcp: bool = True,
              home: Path | None = None) -> base.Plan:
    if action not in ("install", "uninstall"):
        raise InvalidInput(f"unknown action {action!r}")
    home = Path(os.path.expanduser("~")) if home is None else home
    if project is not None:
        project = project.resolve()
        if not project.is_dir():
            raise InvalidInput(f"--project {project}: not a directory")
    plan: base.Plan = host_module(host).plan(action, home=home, project=project, mcp=mcp)
    if action == "uninstall":
        kept = []
        for e in plan.edits:
            others = base.shared_with(e.path, host)
            if others:
                plan.released.append(e.path)
                plan.notes.append(f"{e.path} is left as it is: {', '.join(others)} still uses it.")
            else:
                kept.append(base.undo_edit(e))
        plan.edits = kept
    return plan


def run(host: str, action: str, *, project: Path | None = None, dry_run: bool = False,
        mcp: bool = True, home: Path | None = None) -> Outcome:
    plan = make_plan(host, action, project=project, mcp=mcp, home=home)
    out = Outcome(host, action, dry_run, plan.diff(), notes=list(plan.notes),
                  changed=bool(plan.changed))
    if action == "install":
        checkout = base.checkout_of_install()
        if checkout is not None:
            out.notes.append(
                f"these hooks run aletheia from the checkout {checkout} (an editable install): "
                "moving or deleting it breaks them; ./scripts/install installs a copy that lasts")
    if not dry_run and plan.changed:
        out.lines = base.apply(plan)
    if not dry_run and action == "install":
        base.precompile_hook()
    return out

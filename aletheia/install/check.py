"""``aletheia install --check HOST``: does the host installed here fire what aletheia relies on?

Read from the host itself: its binary on PATH and the version it prints, compared with the
version our end-to-end tests drive (tests/e2e/hosts) and the oldest one known to have the
events we use; and its config: whether ``aletheia install`` would still change anything there
(our entries missing or stale), at user level and, with ``--project``, in the project.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia.errors import AletheiaError


@dataclass(frozen=True)
class Needs:
    binary: str
    tested: str  # the version tests/e2e/hosts drives
    minimum: str  # the oldest version known to fire what we rely on
    relies_on: str
    runtime: tuple[str, str] | None = None  # (binary, minimum version), e.g. Node for Command Code


NEEDS: dict[str, Needs] = {
    "claude-code": Needs("claude", "2.1.197", "2.1.197",
                         "hooks SessionStart and UserPromptSubmit (JSON additionalContext), "
                         "PreToolUse of Read/Edit/Write (JSON additionalContext: per-file "
                         "recall), PostToolUse, Stop, SessionEnd in settings.json"),
    "codex": Needs("codex", "0.171.0", "0.171.0",
                   "hooks.json SessionStart and UserPromptSubmit (stdout: a developer message), "
                   "PreToolUse of its shell (JSON additionalContext: per-file recall), "
                   "PostToolUse, Stop, SessionEnd (run only once trusted in /hooks)"),
    "gemini": Needs("gemini", "0.61.0", "0.61.0",
                    "hooks SessionStart, BeforeAgent and AfterTool (JSON additionalContext), "
                    "AfterAgent, SessionEnd in settings.json"),
    "opencode": Needs("opencode", "1.18.33", "1.18.33",
                      "file plugins with options under \"plugin\"; plugin hooks chat.message, "
                      "experimental.chat.messages.transform, tool.execute.before/after (the "
                      "output it returns), the session.idle event"),
    "command-code": Needs("cmd", "1.64.0", "1.64.0",
                          "mods: onTurnStart, transformContext, appendSystemPrompt, "
                          "afterToolCall (additionalContext), onStop (~/.commandcode/mods/)",
                          runtime=("node", "22.0.0")),
}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _parse(text: str) -> tuple[int, ...] | None:
    m = _VERSION.search(text)
    return tuple(int(g) for g in m.groups()) if m else None


def _run_version(binary: str, env: dict[str, str]) -> tuple[str | None, str]:
    """(version, what went wrong)."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`{binary} --version` did not run: {exc}"
    version = _parse(out.stdout) if out.returncode == 0 else None
    if version is None:
        lines = [ln.strip() for ln in (out.stderr + out.stdout).splitlines() if ln.strip()]
        detail = next((ln for ln in lines if "Error" in ln), lines[0] if lines else "")
        return None, f"`{binary} --version` failed (exit {out.returncode}): {detail[:300]}"
    return ".".join(map(str, version)), ""


@dataclass
class Report:
    host: str
    ok: bool = True
    binary: str | None = None
    version: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)  # (ok | warn | fail, text)

    def say(self, level: str, text: str) -> None:
        self.lines.append((level, text))
        if level == "fail":
            self.ok = False

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "ok": self.ok, "binary": self.binary,
                "version": self.version,
                "checks": [{"level": lv, "text": t} for lv, t in self.lines]}


def check(host: str, *, home: Path | None = None, project: Path | None = None,
          env: dict[str, str] | None = None) -> Report:
    from aletheia.install import make_plan

    env = dict(os.environ if env is None else env)
    report = Report(host)
    needs = NEEDS.get(host)
    if needs is None:
        report.say("warn", f"{host}: written from its documentation, not run by aletheia's "
                   "tests; no version check")
    else:
        _check_binary(report, needs, env)
    for level, where in (("user level", None), ("project", project)):
        if level == "project" and project is None:
            continue
        try:
            plan = make_plan(host, "install", project=where, home=home)
        except AletheiaError as exc:
            report.say("fail", f"config ({level}): {exc}")
            continue
        if plan.changed:
            files = ", ".join(str(e.path) for e in plan.changed)
            flag = f" --project {where}" if where is not None else ""
            report.say("fail", f"config ({level}): aletheia is not installed or out of date in "
                       f"{files}: run `aletheia install {host}{flag}`")
        else:
            report.say("ok", f"config ({level}): aletheia's entries are in place")
    return report


def _check_binary(report: Report, needs: Needs, env: dict[str, str]) -> None:
    path = shutil.which(needs.binary, path=env.get("PATH"))
    if path is None:
        report.say("fail", f"`{needs.binary}` is not on PATH")
        return
    report.binary = path
    if needs.runtime is not None:
        runtime, minimum = needs.runtime
        where = shutil.which(runtime, path=env.get("PATH"))
        found, problem = _run_version(where, env) if where else (None, f"no `{runtime}` on PATH")
        if found is None or _parse(found) < _parse(minimum):  # type: ignore[operator]
            report.say("fail", f"{needs.binary} needs {runtime} >= {minimum}: "
                       f"{problem or f'found {found}'}")
    version, problem = _run_version(path, env)
    report.version = version
    if version is None:
        report.say("fail", problem)
        return
    have, tested, oldest = _parse(version), _parse(needs.tested), _parse(needs.minimum)
    assert have is not None and tested is not None and oldest is not None
    if have < oldest:
        report.say("fail", f"{needs.binary} {version} is older than {needs.minimum}, the oldest "
                   f"known to fire what aletheia relies on: {needs.relies_on}")
    elif have == tested:
        report.say("ok", f"{needs.binary} {version}: the version aletheia's end-to-end tests run "
                   f"(they check {needs.relies_on})")
    else:
        report.say("warn", f"{needs.binary} {version} is newer than {needs.tested}, the version "
                   f"aletheia's end-to-end tests run; what it relies on ({needs.relies_on}) was "
                   "not checked on this version")

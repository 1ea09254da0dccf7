"""Run the real hook as a subprocess, the way a host does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "aletheia"]
# The form installers write: absolute interpreter, isolated, no site, straight to the hook file.
DIRECT = [sys.executable, "-I", "-S", str(REPO / "hooks" / "run.py")]


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str
    seconds: float


def run_hook(
    host: str, event: str, payload: Any, env: dict[str, str], *, direct: bool = False,
    raw: bytes | None = None, timeout: float = 20,
) -> HookRun:
    data = raw if raw is not None else json.dumps(payload).encode()
    cmd = (DIRECT if direct else [*ENTRY, "hook"]) + [host, event]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=env.get("HOOK_CWD") or os.getcwd())
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except BrokenPipeError:
        out, err = proc.communicate(timeout=timeout)
    return HookRun(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                   time.monotonic() - start)


def claude_tool(session: str, cwd: str, command: str, output: str, use_id: str) -> dict[str, Any]:
    return {
        "session_id": session, "transcript_path": "/dev/null", "cwd": cwd,
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_response": {"stdout": output, "stderr": "", "interrupted": False},
        "tool_use_id": use_id, "duration_ms": 12,
    }

"""Command Code 1.64.0 (on the registry's Node 22) for real: `aletheia install command-code`, then
`cmd -p` sessions against a fake Chat Completions server — one in the repository, one in a
linked worktree of it that reads and edits a file session 1 left something known about — and a
project-level install."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.hosts.checks import (
    ANSWER,
    ASK,
    captured,
    check_passes,
    compressed,
    in_project,
    later_sessions,
    ledger,
    read_then_edit,
    recalled,
    snapshot,
    tree,
    uninstalled,
    written_files,
)
from tests.e2e.hosts.conftest import Sandbox, host_binary, host_path, host_version, record_timing
from tests.e2e.hosts.fake_models import Request, Script, serve
from tests.fakes import github_token

# Several real host sessions per test: more than the suite's 300 s on a busy machine.
pytestmark = [pytest.mark.hosts, pytest.mark.slow, pytest.mark.timeout(900)]

# The user's own files: a model provider (only the user-level providers.json is read; the key
# must be an env reference) and settings.
USER_SETTINGS = {"tasteLearning": False, "theme": "dark"}


def _providers(url: str) -> str:
    return json.dumps({"provider": {"fakeoai": {
        "name": "Fake loopback", "api": "openai-completions", "baseURL": f"{url}/v1",
        "apiKey": "$FAKE_OAI_KEY",
        "models": {"fake-model": {"name": "Fake Model", "contextWindow": 128000,
                                  "maxOutput": 4096}}}}}, indent=2) + "\n"


def _user_setup(sandbox: Sandbox) -> dict[Path, bytes | None]:
    folder = sandbox.home / ".commandcode"
    folder.mkdir()
    (folder / "providers.json").write_text(_providers("http://127.0.0.1:9"))
    (folder / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    return snapshot([folder / "providers.json", folder / "settings.json"])


def _cmd(sandbox: Sandbox, cmd: Path, prompt: str, cwd: Path, url: str,
         *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    (sandbox.home / ".commandcode" / "providers.json").write_text(_providers(url))
    env = sandbox.env(FAKE_OAI_KEY="sk-fake-000", COMMAND_CODE_API_KEY="fake-cmd-000",
                      COMMANDCODE_SKIP_UPDATES="1")
    env["PATH"] = f"{host_path('cmd')}:{env['PATH']}"  # Node 22 from the registry
    return sandbox.run([str(cmd), "-p", prompt, "-m", "fakeoai/fake-model", "--skip-onboarding",
                        "--no-auto-update", "--yolo", *extra], cwd=cwd, env=env, model=url)



def _system(request: Request) -> str:
    body = request.json() or {}
    return "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                     for m in body.get("messages", []) if m.get("role") == "system")


def test_command_code_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    cmd = host_binary("cmd")
    version = host_version(cmd)
    secret = github_token(random.Random(10))
    users = _user_setup(sandbox)
    folder = sandbox.home / ".commandcode"
    installed = sandbox.aletheia("install", "command-code", "--json")
    ours = written_files(installed)
    assert set(ours) == {folder / "mods" / "aletheia.ts", folder / "mcp.json"}
    before = {**dict.fromkeys(ours), folder / "settings.json": users[folder / "settings.json"]}
    assert "nothing to change" in sandbox.aletheia("install", "command-code").stdout

    check_passes(sandbox, "command-code", cmd, version, host_path("cmd"))

    first = Script(command=f"echo token={secret}", answer=ANSWER)
    with serve("chat", first) as url:
        proc, took = _cmd(sandbox, cmd, "first command code session: the ibis marker",
                          sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("command-code", version, "session 1 (1 tool call)", took)
    assert first.tool_result_sent()
    session, mems = captured(sandbox, "command-code",
                             prompt="first command code session: the ibis marker", secret=secret)
    assert [m["title"] for m in mems if m["kind"] == "response"] == [ANSWER]
    # The MCP server from ~/.commandcode/mcp.json started: its tools are offered to the model.
    assert any("mcp__aletheia__search" in r.text for r in first.chat())

    compressed(sandbox)
    path = ledger(sandbox)
    second = Script(command="echo again", then=read_then_edit(path))
    prompt = f"second command code session: {ASK}"
    with serve("chat", second) as url:
        proc, took = _cmd(sandbox, cmd, prompt, sandbox.worktree, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("command-code", version, "session 2 (shell, read, edit)", took)
    calls = second.chat()
    recalled(calls)
    for r in calls:  # the block rides the system prompt of every request, in print mode too
        system = _system(r)
        assert "<aletheia-memory>" in system and "walrus" in system
        block = system[system.index("<aletheia-memory>"):system.index("</aletheia-memory>")]
        assert "second command code session" not in block
    assert "round(0.1 + 0.2, 2)" in path.read_text()  # the edit ran
    later = later_sessions(sandbox, "command-code", session)
    in_project(later, sandbox)
    assert [m["title"] for m in later if m["kind"] == "prompt"] == [prompt]

    undone = sandbox.aletheia("uninstall", "command-code")
    assert undone.returncode == 0, undone.stderr
    uninstalled(before)


def test_command_code_project_install(sandbox: Sandbox) -> None:
    """The project's mod and .mcp.json: Command Code loads a project's mods in a workspace the
    user trusted (in print mode only with --dangerously-skip-permissions), from the repository
    root, so a session in a subdirectory is captured too."""
    cmd = host_binary("cmd")
    version = host_version(cmd)
    _user_setup(sandbox)
    noted = sandbox.aletheia("save", "the heron note, saved before the session", "--project",
                             str(sandbox.repo))
    assert noted.returncode == 0, noted.stderr
    sub = sandbox.repo / "src"
    sub.mkdir()
    # The user has used Command Code here before: it keeps a folder per trusted directory.
    for where in (sandbox.repo, sub):
        with serve("chat", Script(command="echo before-install")) as url:
            proc, _ = _cmd(sandbox, cmd, "before aletheia", where, url)
        assert proc.returncode == 0, proc.stderr
    before = tree(sandbox.repo)
    installed = sandbox.aletheia("install", "command-code", "--project", str(sandbox.repo),
                                 "--json")
    assert all(p.is_relative_to(sandbox.repo) for p in written_files(installed))
    assert any("does not look in parent directories" in n
               for n in json.loads(installed.stdout)["notes"])

    script = Script(command="echo at-the-root")
    with serve("chat", script) as url:
        proc, took = _cmd(sandbox, cmd, "project-level command code session", sandbox.repo, url,
                          "--dangerously-skip-permissions")
    assert proc.returncode == 0, proc.stderr
    record_timing("command-code", version, "project-level session (1 tool call)", took)
    rows = later_sessions(sandbox, "command-code", "")
    assert {"prompt", "tool_event"} <= {m["kind"] for m in rows}
    in_project(rows, sandbox)
    assert all("the heron note" in _system(r) for r in script.chat())

    script = Script(command="echo from-a-subdirectory")
    with serve("chat", script) as url:
        proc, took = _cmd(sandbox, cmd, "from a subdirectory", sub, url,
                          "--dangerously-skip-permissions")
    assert proc.returncode == 0, proc.stderr
    record_timing("command-code", version, "project-level session in a subdirectory", took)
    prompts = [m["title"] for m in later_sessions(sandbox, "command-code", "")
               if m["kind"] == "prompt"]
    assert prompts == ["project-level command code session", "from a subdirectory"], prompts
    assert all("the heron note" in _system(r) for r in script.chat())

    undone = sandbox.aletheia("uninstall", "command-code", "--project", str(sandbox.repo))
    assert undone.returncode == 0, undone.stderr
    assert tree(sandbox.repo) == before


def test_command_code_tui_gets_the_block_and_its_prompt_is_stored(sandbox: Sandbox) -> None:
    """The interactive TUI (in a pseudo-terminal), with the first prompt on the command line:
    the mod's block reaches the model there too (a shell SessionStart hook's context would miss
    that first turn), and the prompt, the tool call and the answer are stored."""
    cmd = host_binary("cmd")
    version = host_version(cmd)
    _user_setup(sandbox)
    assert sandbox.aletheia("install", "command-code").returncode == 0
    assert sandbox.aletheia("save", "the egret note, saved before the session", "--project",
                            str(sandbox.repo)).returncode == 0
    prompt = "tui session: the egret question"
    secret = github_token(random.Random(11))
    script = Script(command=f"echo token={secret}")
    with serve("chat", script) as url:
        (sandbox.home / ".commandcode" / "providers.json").write_text(_providers(url))
        env = sandbox.env(FAKE_OAI_KEY="sk-fake-000", COMMAND_CODE_API_KEY="fake-cmd-000",
                          COMMANDCODE_SKIP_UPDATES="1", TERM="xterm-256color")
        env["PATH"] = f"{host_path('cmd')}:{env['PATH']}"
        argv = [str(cmd), prompt, "-m", "fakeoai/fake-model", "--skip-onboarding",
                "--no-auto-update", "--yolo", "--trust"]
        took = tty_session(sandbox.offline(argv, url), sandbox.repo, sandbox.at(env, sandbox.repo),
                           done=lambda: script.tool_result_sent(), settled=lambda: _stopped(sandbox))
    record_timing("command-code", version, "TUI session (1 tool call)", took)
    calls = script.chat()
    assert script.tool_result_sent(), [r.text[:200] for r in calls]
    session_calls = [r for r in calls if (r.json() or {}).get("tools")]
    assert session_calls
    for r in session_calls:
        system = _system(r)
        assert "<aletheia-memory>" in system and "the egret note" in system
    for r in calls:  # the TUI's own side requests (the session title) do not carry it
        if r not in session_calls:
            assert "aletheia-memory" not in r.text
    _, mems = captured(sandbox, "command-code", prompt=prompt, secret=secret)
    assert "response" in {m["kind"] for m in mems}


def _stopped(sandbox: Sandbox) -> bool:
    """The turn's end reached the store (the mod's onStop ran the Stop hook)."""
    try:
        return bool(sandbox.rows("SELECT 1 FROM stop_queue UNION ALL SELECT 1 FROM job"))
    except Exception:  # the store is being created or upgraded: not yet
        return False


def tty_session(argv: list[str], cwd: Path, env: dict[str, str], *, done: Callable[[], bool],
                settled: Callable[[], bool], timeout: float = 180) -> float:
    """Run an interactive CLI in a pseudo-terminal until ``done()``, then until ``settled()``
    (at most 30 s more), then stop it and everything it started; returns the seconds to done."""
    import fcntl
    import os
    import signal
    import struct
    import termios
    import threading
    import time

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=str(cwd), env=env, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)

    def drain() -> None:  # a TUI blocks when nobody reads its screen
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = start + timeout
        while time.monotonic() < deadline and proc.poll() is None and not done():
            time.sleep(0.5)
        took = time.monotonic() - start
        settle = time.monotonic() + 30  # the answer's own hooks (Stop) run after the request
        while time.monotonic() < settle and proc.poll() is None and not settled():
            time.sleep(0.5)
        return took
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is None:
                os.killpg(proc.pid, sig)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    continue
        os.close(master)

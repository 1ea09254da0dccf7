"""install/uninstall for every host: merge, idempotence, backups, exact undo, dry run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aletheia.errors import InvalidInput
from aletheia.install import HOSTS, base, make_plan, run

ALL_HOSTS = sorted(HOSTS)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return h


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and directory under root (directories as None)."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = None if p.is_dir() else p.read_bytes()
    return out


def _user_json(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = {"theme": "dark", "ünïcode": "kept as is"}
    if path.name in ("settings.json", "settings.local.json", "hooks.json"):
        # A hook of the user's own, on an event we also use.
        if "cursor" in str(path) or "windsurf" in str(path):
            key = "stop" if "cursor" in str(path) else "post_run_command"
            doc["hooks"] = {key: [{"command": "./my-own-hook.sh"}]}
            if "cursor" in str(path):
                doc = {"version": 1, **doc}
        else:
            doc["hooks"] = {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    if path.name in (".claude.json", ".mcp.json", "mcp.json", "mcp_config.json", "settings.json"):
        doc["mcpServers"] = {"other": {"command": "other-server", "args": []}}
    if path.name == "opencode.json":
        doc["mcp"] = {"other": {"type": "local", "command": ["x"], "enabled": True}}
    return doc


def _seed(plan: base.Plan) -> None:
    """Give every config file a plan touches some pre-existing content of the user's."""
    for e in plan.edits:
        e.path.parent.mkdir(parents=True, exist_ok=True)
        if e.path.suffix == ".json":
            e.path.write_text(json.dumps(_user_json(e.path), indent=2, ensure_ascii=False) + "\n",
                              encoding="utf-8")
        elif e.path.suffix == ".toml":
            e.path.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n')


@pytest.mark.parametrize("host", ALL_HOSTS)
@pytest.mark.parametrize("level", ["user", "project"])
def test_install_twice_then_uninstall_restores_every_byte(home: Path, tmp_path: Path, host: str,
                                                          level: str) -> None:
    project = None
    if level == "project":
        project = tmp_path / "repo"
        project.mkdir()
    _seed(make_plan(host, "install", project=project))
    root = tmp_path
    before = _snapshot(root)

    first = run(host, "install", project=project)
    assert first.changed
    after_first = _snapshot(root)
    assert after_first != before

    second = run(host, "install", project=project)
    assert not second.changed, second.diff
    assert _snapshot(root) == after_first

    undone = run(host, "uninstall", project=project)
    assert undone.changed
    assert _snapshot(root) == before


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_install_into_nothing_and_uninstall_leaves_nothing(home: Path, host: str) -> None:
    assert _snapshot(home) == {}
    run(host, "install")
    assert _snapshot(home) != {}
    run(host, "uninstall")
    assert _snapshot(home) == {}


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_users_entries_survive_and_ours_are_present(home: Path, host: str) -> None:
    _seed(make_plan(host, "install"))
    run(host, "install")
    texts = {e.path: e.path.read_text("utf-8") for e in make_plan(host, "install").edits
             if e.path.exists()}
    joined = "\n".join(texts.values())
    assert str(base.hook_script()) in joined
    assert os.path.abspath(sys.executable) in joined
    for path, text in texts.items():
        if path.suffix == ".json":
            doc = json.loads(text)
            assert doc["theme"] == "dark" and doc["ünïcode"] == "kept as is"
            assert "my-own-hook.sh" in text or "notify-send done" in text or "hooks" not in doc \
                or path.name.startswith("mcp")


def test_structural_uninstall_keeps_edits_made_after_install(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "opus"\n}\n')
    run("claude-code", "install", mcp=False)
    doc = json.loads(settings.read_text())
    doc["permissions"] = {"allow": ["Bash(ls:*)"]}  # the user edits the file after install
    settings.write_text(json.dumps(doc, indent=2) + "\n")
    out = run("claude-code", "uninstall")
    assert out.changed
    assert json.loads(settings.read_text()) == {"model": "opus",
                                                "permissions": {"allow": ["Bash(ls:*)"]}}


def test_dry_run_shows_a_diff_and_writes_nothing(home: Path) -> None:
    out = run("gemini", "install", dry_run=True)
    assert out.changed and out.dry_run
    assert "+++ " in out.diff and "aletheia-SessionStart" in out.diff
    assert _snapshot(home) == {}
    run("gemini", "install")
    undo = run("gemini", "uninstall", dry_run=True)
    assert undo.changed and "--- " in undo.diff
    assert (home / ".gemini" / "settings.json").exists()


def test_backup_holds_the_original(home: Path) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"ui": {"theme": "x"}}')
    out = run("gemini", "install")
    line = next(line for line in out.lines if "backup:" in line)
    backup = Path(line.split("backup: ", 1)[1].rstrip(")"))
    assert backup.read_bytes() == b'{"ui": {"theme": "x"}}'
    assert (backup.stat().st_mode & 0o777) == 0o600


def test_a_stale_entry_is_replaced_in_place_not_duplicated(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = "/old/venv/bin/python -I -S /old/src/hooks/run.py claude-code Stop"
    settings.write_text(json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "echo mine"}]},
        {"hooks": [{"type": "command", "command": old}]},
    ]}}, indent=2))
    run("claude-code", "install", mcp=False)
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert len(stop) == 2
    assert stop[0]["hooks"][0]["command"] == "echo mine"
    assert stop[1]["hooks"][0]["command"] == base.hook_command("claude-code", "Stop")


def test_invalid_json_is_refused_and_left_alone(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    with pytest.raises(InvalidInput, match="not valid JSON"):
        run("claude-code", "install")
    assert settings.read_text() == '{"hooks": '


def test_codex_refuses_a_foreign_mcp_table_and_says_how_to_trust(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.aletheia]\ncommand = "mine"\n')
    with pytest.raises(InvalidInput, match="--no-mcp"):
        run("codex", "install")
    out = run("codex", "install", mcp=False)
    assert any("/hooks" in n and "trust" in n for n in out.notes)


def test_codex_home_is_honoured(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    run("codex", "install")
    assert (tmp_path / "ch" / "hooks.json").exists()
    toml = (tmp_path / "ch" / "config.toml").read_text()
    assert "[mcp_servers.aletheia]" in toml
    import tomllib

    assert tomllib.loads(toml)["mcp_servers"]["aletheia"]["args"] == ["-P", "-m", "aletheia", "mcp"]


def test_hook_command_is_the_fast_form() -> None:
    argv = shlex.split(base.hook_command("claude-code", "PostToolUse"))
    assert argv[0] == os.path.abspath(sys.executable)
    assert argv[1:3] == ["-I", "-S"]
    assert Path(argv[3]).is_file() and Path(argv[3]).name == "run.py"
    assert argv[4:] == ["claude-code", "PostToolUse"]
    assert base.is_our_command(base.hook_command("codex", "Stop"), "codex")
    assert not base.is_our_command(base.hook_command("codex", "Stop"), "claude-code")
    assert base.is_our_command("aletheia hook gemini AfterTool", "gemini")
    assert not base.is_our_command("./my-hook.sh", None)


def test_installed_hook_command_captures_into_the_store(home: Path, aletheia_home: Path,
                                                        tmp_path: Path) -> None:
    """Run exactly the command the installer wrote, through a shell, as a host would."""
    pytest.importorskip("aletheia.redact")
    run("claude-code", "install", mcp=False)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    work = tmp_path / "work"
    work.mkdir()
    payload = {"session_id": "s-1", "cwd": str(work), "hook_event_name": "UserPromptSubmit",
               "prompt": "install smoke prompt"}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "ALETHEIA_HOME": str(aletheia_home)}
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(),
                          env=env, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    from tests.settle import settled_store

    conn = settled_store()  # a hook past its watchdog on a busy machine spools, legitimately
    try:
        rows = conn.execute("SELECT kind, title, project FROM memory").fetchall()
    finally:
        conn.close()
    assert [(r["kind"], r["title"]) for r in rows] == [("prompt", "install smoke prompt")]
    assert rows[0]["project"] == str(work.resolve())


def test_claude_code_gets_the_recall_events_and_loses_them_exactly(home: Path) -> None:
    """Per-prompt recall rides on UserPromptSubmit; per-file recall needs PreToolUse for the
    tools that read or edit a file (Gemini's BeforeAgent and AfterTool are already hooked)."""
    before = _snapshot(home)
    run("claude-code", "install", mcp=False)
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    (pre,) = hooks["PreToolUse"]
    assert pre["matcher"] == "Read|Edit|MultiEdit|Write|NotebookEdit"
    assert pre["hooks"][0]["command"].endswith("claude-code PreToolUse")
    assert "UserPromptSubmit" in hooks
    gemini = {event for event, _, _ in HOSTS["gemini"].EVENTS}  # type: ignore[attr-defined]
    assert {"BeforeAgent", "AfterTool", "SessionStart"} <= gemini
    run("claude-code", "uninstall", mcp=False)
    assert _snapshot(home) == before


@pytest.mark.slow
def test_hook_runs_from_a_regular_install(tmp_path: Path, aletheia_home: Path) -> None:
    """A non-editable install (packages in a site dir): ``-I -S run.py`` still finds aletheia."""
    pytest.importorskip("aletheia.redact")
    repo = Path(__file__).resolve().parent.parent
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(target), str(repo)], check=True, capture_output=True,
                   timeout=600)
    script = target / "aletheia" / "hooks" / "run.py"
    assert script.is_file()
    # The files install points OpenCode and Command Code at ship in the package.
    for asset in ("opencode-plugin.js", "command-code-mod.ts"):
        assert (target / "aletheia" / "install" / "assets" / asset).is_file(), asset
    # hooks/, tasks/ and web/ install inside the aletheia package, never as top-level packages
    # (PyPI has unrelated packages named hooks and tasks).
    top = {p.name for p in target.iterdir() if (p / "__init__.py").is_file()}
    assert top == {"aletheia"}, top
    work = tmp_path / "w"
    work.mkdir()
    payload = {"session_id": "s-2", "cwd": str(work), "prompt": "from a regular install"}
    proc = subprocess.run([sys.executable, "-I", "-S", str(script), "claude-code", "UserPromptSubmit"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=30,
                          env={"ALETHEIA_HOME": str(aletheia_home), "PATH": "/usr/bin:/bin"},
                          cwd=str(tmp_path))
    assert proc.returncode == 0
    from tests.settle import settled_store

    conn = settled_store()  # a hook past its watchdog on a busy machine spools, legitimately
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM memory")]
    finally:
        conn.close()
    assert titles == ["from a regular install"]


def _installed_commands(home: Path, host: str) -> dict[str, str]:
    """event -> command, read back from what the installer wrote."""
    if host == "opencode":
        # The plugin runs <python> -I -S <hook> opencode <Event> with the options install wrote.
        config = json.loads((home / ".config/opencode/opencode.json").read_text())
        spec, options = config["plugin"][0]
        assert Path(spec.removeprefix("file://")).is_file()
        cmd = " ".join(shlex.quote(p) for p in (options["python"], "-I", "-S", options["hook"],
                                                "opencode"))
        return {e: f"{cmd} {e}" for e in ("UserPromptSubmit", "PostToolUse", "Stop")}
    if host == "command-code":
        # The mod runs <python> -I -S <hook> command-code <Event>, with the paths install wrote.
        mod = (home / ".commandcode/mods/aletheia.ts").read_text()
        assert f"const PYTHON: string = {json.dumps(base.python())};" in mod
        assert f"const HOOK: string = {json.dumps(str(base.hook_script()))};" in mod
        cmd = " ".join(shlex.quote(p) for p in (base.python(), "-I", "-S", str(base.hook_script()),
                                                "command-code"))
        return {e: f"{cmd} {e}" for e in ("UserPromptSubmit", "PostToolUse", "Stop")}
    path = {"cursor": home / ".cursor/hooks.json",
            "windsurf": home / ".codeium/windsurf/hooks.json"}[host]
    hooks = json.loads(path.read_text())["hooks"]
    out = {}
    for event, items in hooks.items():
        entry = items[0]["hooks"][0] if "hooks" in items[0] else items[0]
        out[event] = entry["command"]
    return out


CASES = [
    ("cursor", "beforeSubmitPrompt", {"conversation_id": "c1", "generation_id": "g1",
                                      "prompt": "cursor prompt"}, "prompt", "cursor prompt"),
    ("cursor", "postToolUse", {"conversation_id": "c1", "tool_name": "Shell",
                               "tool_input": {"command": "ls -la"},
                               "tool_output": '{"exitCode":0,"stdout":"a.txt"}',
                               "tool_use_id": "t1"}, "tool_event", "Shell: $ ls -la"),
    ("windsurf", "pre_user_prompt", {"agent_action_name": "pre_user_prompt",
                                     "trajectory_id": "w1", "execution_id": "e1",
                                     "tool_info": {"user_prompt": "windsurf prompt"}},
     "prompt", "windsurf prompt"),
    ("windsurf", "post_run_command", {"agent_action_name": "post_run_command",
                                      "trajectory_id": "w1", "execution_id": "e2",
                                      "tool_info": {"command_line": "make test", "output": "ok"}},
     "tool_event", "run_command: $ make test"),
    ("opencode", "UserPromptSubmit", {"session_id": "o1", "prompt": "opencode prompt"},
     "prompt", "opencode prompt"),
    ("opencode", "PostToolUse", {"session_id": "o1", "tool_name": "bash",
                                 "tool_input": {"command": "pwd"}, "tool_response": "/x",
                                 "tool_use_id": "c1"}, "tool_event", "bash: $ pwd"),
    ("command-code", "PostToolUse", {"session_id": "cc1", "tool_name": "shell_command",
                                     "tool_input": {"command": "git status"},
                                     "tool_response": "clean", "tool_use_id": "x"},
     "tool_event", "shell_command: $ git status"),
    ("command-code", "UserPromptSubmit", {"session_id": "cc1", "prompt": "command code prompt",
                                          "turn_id": "m1"}, "prompt", "command code prompt"),
]


@pytest.mark.parametrize(("host", "event", "payload", "kind", "title"), CASES)
def test_hosts_not_run_here_capture_through_the_installed_command(
        home: Path, aletheia_home: Path, tmp_path: Path, host: str, event: str,
        payload: dict[str, Any], kind: str, title: str) -> None:
    """The payload shapes come from each host's documentation (see the installer modules)."""
    run(host, "install", mcp=False)
    command = _installed_commands(home, host)[event]
    work = tmp_path / "work"
    work.mkdir()
    payload = {**payload, "cwd": str(work)} if host != "windsurf" else payload
    if host == "windsurf":
        payload["tool_info"] = {**payload["tool_info"], "cwd": str(work)}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "ALETHEIA_HOME": str(aletheia_home)}
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(),
                          env=env, capture_output=True, timeout=30, cwd=str(work))
    assert proc.returncode == 0, proc.stderr
    from tests.settle import settled_store

    conn = settled_store()  # a hook past its watchdog on a busy machine spools, legitimately
    try:
        rows = [dict(r) for r in conn.execute("SELECT kind, title, project, tool FROM memory")]
    finally:
        conn.close()
    assert rows == [{"kind": kind, "title": title, "project": str(work.resolve()), "tool": host}]


def _hook_modules(tmp_path: Path) -> list[Path]:
    """The source files of the hook script and of every aletheia module a real hook run
    imports (SessionStart renders the context block, so it loads the most)."""
    import importlib.util

    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "source": "startup"})
    names: set[str] = set()
    # On a busy machine the hook's 150 ms watchdog can end a run before SessionStart renders
    # the block (it spools what it owes and exits): take the union of a few runs.
    for _ in range(6):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-I", "-S", str(base.hook_script()),
             "claude-code", "SessionStart"], input=payload.encode(), capture_output=True,
            timeout=60, env={**os.environ, "ALETHEIA_HOME": str(tmp_path / "probe-home")})
        names |= {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
                  if line.startswith("import time:")}
        if "aletheia.context" in names:
            break
    files = [base.hook_script()]
    for name in sorted(n for n in names if n.split(".")[0] == "aletheia"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        files.append(Path(spec.origin))
    return files


def test_install_byte_compiles_every_module_the_hook_imports(home: Path, tmp_path: Path) -> None:
    # Without bytecode (an editable checkout under PYTHONDONTWRITEBYTECODE) every host event
    # would recompile the hook's modules: install leaves each one it imports compiled.
    import importlib.util

    modules = _hook_modules(tmp_path)
    names = {m.resolve().relative_to(Path(base.__file__).resolve().parents[2]).as_posix()
             for m in modules}
    assert {"hooks/run.py", "aletheia/capture/ingest.py", "aletheia/store.py",
            "aletheia/redact.py", "aletheia/context.py"} <= names
    cached = [Path(importlib.util.cache_from_source(str(m))) for m in modules]
    for pyc in cached:
        pyc.unlink(missing_ok=True)
    run("claude-code", "install")
    for pyc, module in zip(cached, modules, strict=True):
        assert pyc.exists(), module
        assert pyc.stat().st_mtime >= module.stat().st_mtime


# -- OpenCode: textual edits of JSONC, and what OpenCode itself does to its config ---------------

JSONC_USER = """{
\t// my own settings: comments, tabs, a trailing comma
\t"theme": "tokyonight", /* inline */
\t"mcp": {
\t\t"other": {"type": "local", "command": ["x"]},
\t},
\t"autoupdate": false,
}
"""


def _opencode_adds_schema(text: str) -> str:
    """What opencode-ai 1.18.33 does on start to a config file that lacks "$schema"."""
    import re

    if '"$schema"' in text:
        return text
    return re.sub(r"^\s*\{", '{\n  "$schema": "https://opencode.ai/config.json",', text, count=1)


@pytest.mark.parametrize("name", ["opencode.jsonc", "opencode.json"])
def test_opencode_edits_only_its_entries_in_a_commented_config(home: Path, name: str) -> None:
    from aletheia.install import jsonc, opencode

    config = home / ".config" / "opencode" / name
    config.parent.mkdir(parents=True)
    config.write_text(JSONC_USER)
    run("opencode", "install")
    text = config.read_text()
    # Every line of the user's is still there, in order; ours are added, nothing else.
    assert [line for line in text.splitlines() if line in JSONC_USER.splitlines()] == \
        JSONC_USER.splitlines()
    doc = jsonc.to_python(text, jsonc.parse(text))
    assert doc["mcp"]["other"] == {"type": "local", "command": ["x"]}
    assert doc["mcp"]["aletheia"] == opencode.mcp_entry()
    assert doc["plugin"] == [opencode.plugin_entry()]
    assert not (home / ".config" / "opencode" / "plugins").exists()
    assert not run("opencode", "install").changed
    # OpenCode starts and inserts "$schema"; uninstall still takes out exactly our entries.
    config.write_text(_opencode_adds_schema(config.read_text()))
    out = run("opencode", "uninstall")
    assert out.changed
    assert config.read_text() == _opencode_adds_schema(JSONC_USER)


@pytest.mark.parametrize("touched", [False, True])
def test_opencode_project_config_we_created_goes_away(home: Path, tmp_path: Path,
                                                       touched: bool) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    run("opencode", "install", project=project)
    config = project / "opencode.json"
    assert json.loads(config.read_text())["$schema"] == "https://opencode.ai/config.json"
    assert not (project / ".opencode").exists()  # OpenCode runs npm install in every .opencode/
    if touched:  # a file an older install wrote without "$schema", which OpenCode then added
        text = config.read_text().replace('  "$schema": "https://opencode.ai/config.json",\n', "")
        config.write_text(_opencode_adds_schema(text))
    run("opencode", "uninstall", project=project)
    assert list(project.iterdir()) == []


def test_opencode_uninstall_removes_a_plugin_file_an_older_install_wrote(home: Path) -> None:
    old = home / ".config" / "opencode" / "plugins" / "aletheia.js"
    old.parent.mkdir(parents=True)
    old.write_text("// aletheia capture plugin for OpenCode: written by `aletheia install …`\n")
    mine = old.parent / "mine.js"
    mine.write_text("export const Mine = async () => ({})\n")
    run("opencode", "install")
    assert not old.exists() and mine.exists()


def test_opencode_refuses_a_foreign_mcp_server_of_the_same_name(home: Path) -> None:
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    original = '{"mcp": {"aletheia": {"type": "remote", "url": "http://x"}}}'
    config.write_text(original)
    with pytest.raises(InvalidInput, match="--no-mcp"):
        run("opencode", "install")
    assert config.read_text() == original
    run("opencode", "install", mcp=False)
    assert "aletheia" in json.loads(config.read_text())["plugin"][0][0]


@pytest.mark.parametrize("text", ['{"a": 1, "b": [1, 2]}', "{}", '{\n  "a": {}\n}\n',
                                  '{\n    "a": [\n        1,\n    ],\n}', '// c\n{"x": "//"}'])
def test_jsonc_insert_and_remove_are_inverse(text: str) -> None:
    from aletheia.install import jsonc

    root = jsonc.parse(text)
    added = jsonc.add_member(text, root, "new", {"k": [1, "v"]})
    doc = jsonc.to_python(added, jsonc.parse(added))
    assert doc["new"] == {"k": [1, "v"]}
    assert jsonc.remove_member(added, jsonc.parse(added), "new") == text


# -- a file two hosts' installs share: the project's .mcp.json -----------------------------------


def test_a_shared_mcp_json_stays_until_the_last_host_is_uninstalled(home: Path,
                                                                    tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    mcp = project / ".mcp.json"
    mcp.write_text('{"mcpServers": {"other": {"command": "o"}}}\n')
    original = mcp.read_bytes()
    run("claude-code", "install", project=project)
    run("command-code", "install", project=project)
    out = run("command-code", "uninstall", project=project)
    assert any("claude-code still uses it" in n for n in out.notes)
    assert "aletheia" in json.loads(mcp.read_text())["mcpServers"]
    run("claude-code", "uninstall", project=project)
    assert mcp.read_bytes() == original


# -- Command Code -------------------------------------------------------------------------------


def test_command_code_installs_a_mod_and_its_mcp_config(home: Path) -> None:
    run("command-code", "install")
    mod = (home / ".commandcode" / "mods" / "aletheia.ts").read_text()
    assert json.dumps(base.python()) in mod and "__PYTHON__" not in mod and "__HOOK__" not in mod
    for hook in ("onTurnStart", "appendSystemPrompt", "afterToolCall", "onStop"):
        assert hook in mod
    servers = json.loads((home / ".commandcode" / "mcp.json").read_text())["mcpServers"]
    assert servers["aletheia"]["args"] == base.MCP_ARGS
    assert not (home / ".commandcode" / "settings.json").exists()  # no shell hooks any more


def test_command_code_drops_the_shell_hooks_an_older_install_wrote(home: Path) -> None:
    settings = home / ".commandcode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "dark", "hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo mine"}]},
                         {"hooks": [{"type": "command",
                                     "command": base.hook_command("command-code", "SessionStart")}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": base.hook_command("command-code", "PostToolUse")}]}],
    }}, indent=2))
    run("command-code", "install", mcp=False)
    assert json.loads(settings.read_text()) == {"theme": "dark", "hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "echo mine"}]}]}}


def test_command_code_project_install_says_why_subdirectories_see_nothing(
        home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    out = run("command-code", "install", project=project)
    assert any("does not look in parent directories" in n for n in out.notes)
    assert (project / ".commandcode" / "mods" / "aletheia.ts").exists()
    assert (project / ".mcp.json").exists()


# -- install --check ------------------------------------------------------------------------------


def _fake_binary(folder: Path, name: str, output: str, code: int = 0) -> None:
    """A stand-in printing what a host prints for --version (the real hosts: tests/e2e/hosts)."""
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{output}'\nexit {code}\n")
    script.chmod(0o755)


@pytest.mark.parametrize(("printed", "level", "ok"), [
    ("1.18.33", "ok", True), ("opencode 1.19.0", "warn", True), ("1.2.0", "fail", False)])
def test_check_compares_the_host_version_with_what_was_tested(
        home: Path, tmp_path: Path, printed: str, level: str, ok: bool) -> None:
    from aletheia.install.check import check

    run("opencode", "install")
    _fake_binary(tmp_path / "bin", "opencode", printed)
    report = check("opencode", home=home, env={"PATH": str(tmp_path / "bin")})
    assert report.ok is ok
    assert report.lines[0][0] == level
    assert report.lines[-1] == ("ok", "config (user level): aletheia's entries are in place")


def test_check_says_what_is_missing(home: Path, tmp_path: Path) -> None:
    from aletheia.install.check import check

    report = check("command-code", home=home, env={"PATH": str(tmp_path / "none")})
    assert not report.ok
    texts = " ".join(t for _, t in report.lines)
    assert "`cmd` is not on PATH" in texts and "aletheia install command-code" in texts
    _fake_binary(tmp_path / "bin", "cmd", "1.64.0")
    _fake_binary(tmp_path / "bin", "node", "v20.20.2")
    report = check("command-code", home=home, env={"PATH": str(tmp_path / "bin")})
    assert any(lv == "fail" and "node >= 22" in t for lv, t in report.lines)


def test_cli_check_exits_1_and_prints_json(home: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from aletheia.cli import cli

    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    out = CliRunner().invoke(cli, ["install", "gemini", "--check", "--json"])
    assert out.exit_code == 1
    report = json.loads(out.output)
    assert report["host"] == "gemini" and report["ok"] is False
    assert not (home / ".gemini").exists()  # --check writes nothing


def test_opencode_reinstall_from_another_python_replaces_its_entries_in_place(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aletheia.install import jsonc, opencode

    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(JSONC_USER)
    with monkeypatch.context() as m:  # an install made from another interpreter
        m.setattr(base, "python", lambda: "/old/venv/bin/python")
        run("opencode", "install")
    old = config.read_text()
    out = run("opencode", "install")
    assert out.changed
    text = config.read_text()
    doc = jsonc.to_python(text, jsonc.parse(text))
    assert doc["plugin"] == [opencode.plugin_entry()] and "/old/venv" not in text
    assert doc["mcp"]["aletheia"] == opencode.mcp_entry()
    assert len(text.splitlines()) == len(old.splitlines())  # replaced where they stood
    run("opencode", "uninstall")
    assert config.read_text() == JSONC_USER

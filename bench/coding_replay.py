"""Replaying the coding-session set (bench/coding_data.py) into a fresh store, the way the
hooks capture it, and finding each gold event's memory afterwards.

Shared by ``bench/coding_recall.py`` and ``bench/context_recall.py``.  Each project gets a real
git repository in a temp dir (so project identity is what the hook resolves, not a label);
``ALETHEIA_HOME`` is a fresh temp dir.  Three ways in, all through the real capture code:

- ``inprocess``: the capture pipeline the hook process runs (``aletheia.capture``: adapter,
  project, redaction, write, stop queue) called in this process for each event, on one
  connection: the same code minus the process shell (stdin, watchdog, spool fallback).
- ``cli``: a real ``aletheia hook claude-code <Event>`` process per event.
- ``installed``: the command ``aletheia install claude-code --project`` writes into each
  repository's ``.claude/settings.local.json``, run through ``sh -c`` like Claude Code does.

The hooks stamp memories with the capture time; ``restamp`` then gives each memory the time its
event has in the data (sessions span weeks), so a replay looks like weeks of use.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_data as cd  # noqa: E402  (bench/ is not a package)

HOST = cd.HOST
MODES = ("inprocess", "cli", "installed")
# Environment variables of the caller that would change what the hooks do.
_SCRUB = ("ALETHEIA_PROJECT", "ALETHEIA_EXCLUDED_PROJECTS", "ALETHEIA_PROVIDER",
          "ALETHEIA_QUEUE_URL", "ALETHEIA_HOOK_FAULT", "ALETHEIA_CONTEXT", "ALETHEIA_SEMANTIC")


class ReplayError(RuntimeError):
    """The replay could not be done as asked (a hook failed to start, a gold event is lost)."""


@dataclass
class Replay:
    data: cd.DataSet
    root: Path  # the temp dir holding home/ and repos/
    home: Path
    repos: dict[str, Path]  # project name → its git repository
    keys: dict[str, str]  # project name → the project key the store uses
    secrets: dict[str, str]
    memory_of: dict[str, str] = field(default_factory=dict)  # event key → memory id
    outputs: dict[str, str] = field(default_factory=dict)  # event key → what the hook printed
    capture_s: float = 0.0

    def env(self, **extra: str) -> dict[str, str]:
        out = {k: v for k, v in os.environ.items() if k not in _SCRUB}
        out["ALETHEIA_HOME"] = str(self.home)
        out["PYTHONPATH"] = str(REPO)
        out.update(extra)
        return out

    def session_cwd(self, project: str, session: cd.Session) -> Path:
        return self.repos[project] / session.cwd if session.cwd else self.repos[project]


def aletheia_cmd() -> list[str]:
    """The ``aletheia`` console script of this interpreter's environment (or ``-m aletheia``)."""
    script = Path(sys.executable).with_name("aletheia")
    return [str(script)] if script.exists() else [sys.executable, "-m", "aletheia"]


def prepare(data: cd.DataSet, root: Path) -> Replay:
    """A fresh ALETHEIA_HOME (schema created) and one git repository per project under ``root``."""
    home = root / "home"
    os.environ["ALETHEIA_HOME"] = str(home)  # for the in-process store calls of this process
    for var in _SCRUB:
        os.environ.pop(var, None)
    repos: dict[str, Path] = {}
    for name, project in data.projects.items():
        repo = root / "repos" / name
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for s in project.sessions:
            if s.cwd:
                (repo / s.cwd).mkdir(parents=True, exist_ok=True)
        repos[name] = repo
    from aletheia import db
    from aletheia.project import resolve_project

    db.connect().close()  # the hook creates a schema but never upgrades one: start current
    keys = {name: resolve_project(str(repo)) for name, repo in repos.items()}
    events = [e for p in data.projects.values() for e in p.events()]
    return Replay(data, root, home, repos, keys, cd.secrets_for(events))


# --- capture ------------------------------------------------------------------------------


def _installed_commands(replay: Replay, project: str) -> dict[str, str]:
    """Run ``aletheia install claude-code --project`` in the repository; return event → command."""
    repo = replay.repos[project]
    env = replay.env(HOME=str(replay.root / "host-home"))
    done = subprocess.run([*aletheia_cmd(), "install", HOST, "--project", "--no-mcp"], cwd=repo,
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReplayError(f"aletheia install {HOST} --project failed: {done.stderr.strip()}")
    for name in ("settings.local.json", "settings.json"):
        path = repo / ".claude" / name
        if path.exists():
            config = json.loads(path.read_text(encoding="utf-8"))
            break
    else:
        raise ReplayError(f"no .claude/settings*.json in {repo} after install")
    out: dict[str, str] = {}
    for event, groups in config.get("hooks", {}).items():
        for group in groups:
            for hook in group.get("hooks", []):
                if hook.get("type") == "command":
                    out[event] = hook["command"]
    return out


def run_hook_process(cmd: list[str] | str, payload: dict[str, Any], cwd: Path,
                     env: dict[str, str], timeout: float = 30) -> str:
    """One hook process, the way a host runs it: JSON on stdin, stdout captured."""
    shell = isinstance(cmd, str)
    try:
        done = subprocess.run(cmd, input=json.dumps(payload).encode(), cwd=cwd, env=env,
                              capture_output=True, timeout=timeout, shell=shell)
    except subprocess.TimeoutExpired as exc:
        raise ReplayError(f"a hook ran for more than {timeout} s: {cmd}") from exc
    if done.returncode != 0:  # a hook always exits 0: anything else is a broken install
        raise ReplayError(f"hook exited {done.returncode}: {cmd}: {done.stderr.decode()[-500:]}")
    return done.stdout.decode("utf-8", "replace")


def _inprocess_runner() -> tuple[Callable[[str, dict[str, Any]], str], Callable[[], None]]:
    """(capture one event, close): the capture pipeline the hook process runs
    (``aletheia.capture``: adapter, project, redaction, write, stop queue, SessionStart
    block), on one connection held open for the whole replay."""
    try:
        from aletheia import db
        from aletheia.capture.adapters import adapt
        from aletheia.capture.ingest import ingest
    except ImportError as exc:  # the capture code moved: say so instead of guessing
        raise ReplayError(f"in-process capture is unavailable here ({exc}); use --hooks") from exc
    conn = db.connect()

    def one(event: str, payload: dict[str, Any]) -> str:
        summary = ingest(conn, [adapt(HOST, event, payload)], source="hook", cwd=os.getcwd(),
                         placeholder=True, context="host")
        last = summary.last
        return str(last.context or "") if last is not None else ""

    return one, conn.close


def capture(replay: Replay, mode: str = "inprocess", *, jobs: int = 2,
            only: Callable[[cd.Event], bool] | None = None) -> int:
    """Feed every event (or those ``only`` keeps) to the hooks; returns how many were sent.
    In-process, events go in global time order; with processes, each project's events go in
    order while up to ``jobs`` projects run side by side (the store sees concurrent hooks)."""
    if mode not in MODES:
        raise ReplayError(f"unknown capture mode {mode!r}")
    start = time.perf_counter()
    sent = 0
    if mode == "inprocess":
        one, close = _inprocess_runner()
        ordered = sorted(
            ((e, name, s) for name, p in replay.data.projects.items() for s in p.sessions
             for e in s.events if only is None or only(e)),
            key=lambda t: t[0].at)
        for e, name, s in ordered:
            payload = cd.payload(e, s, str(replay.repos[name]), replay.secrets)
            cwd = os.getcwd()
            os.chdir(replay.session_cwd(name, s))
            try:
                replay.outputs[e.key] = one(e.hook, payload)
            finally:
                os.chdir(cwd)
            sent += 1
        close()
    else:
        def project_run(name: str) -> int:
            commands = _installed_commands(replay, name) if mode == "installed" else {}
            env = replay.env()
            n = 0
            for s in replay.data.projects[name].sessions:
                for e in s.events:
                    if only is not None and not only(e):
                        continue
                    payload = cd.payload(e, s, str(replay.repos[name]), replay.secrets)
                    if mode == "installed":
                        if e.hook not in commands:
                            continue  # the installer does not hook this event
                        cmd: list[str] | str = commands[e.hook]
                    else:
                        cmd = [*aletheia_cmd(), "hook", HOST, e.hook]
                    replay.outputs[e.key] = run_hook_process(cmd, payload,
                                                             replay.session_cwd(name, s), env)
                    n += 1
            return n

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            sent = sum(pool.map(project_run, list(replay.data.projects)))
    replay.capture_s += time.perf_counter() - start
    return sent


def replay_spool() -> int:
    """Write what hooks spooled (a hook that hit its watchdog or a lock spools; the next writer
    replays) so the store holds everything before it is read."""
    from aletheia import db, spool

    if spool.pending_size() == 0:
        return 0
    conn = db.connect()
    try:
        result = spool.replay(conn)
    finally:
        conn.close()
    return int(getattr(result, "written", 0) or 0) or 1


# --- gold events → memory ids -------------------------------------------------------------

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    # Tool input is stored as JSON: undo its escapes so a pattern like ``print\(`` matches.
    text = text.replace("\\\\", "\\").replace('\\"', '"')
    return _WS.sub(" ", text).strip().lower()


def fingerprint(e: cd.Event) -> str:
    """A short piece of text the event's memory must hold (before any secret placeholder, which
    redaction would have changed)."""
    p = e.payload
    if e.kind == "prompt":
        text = str(p["prompt"])
    elif e.kind == "stop":
        text = str(p["last_assistant_message"])
    elif e.tool == "Bash":
        text = e.command.strip().split("\n")[0]
    elif e.path:
        text = e.path.replace(cd.ROOT, "")
    elif e.tool in ("Grep", "Glob"):
        text = str(p["tool_input"]["pattern"])
    else:
        text = e.text.split("\n")[0]
    text = text.split("{{secret", 1)[0]
    return _norm(text)[:60]


def map_events(replay: Replay) -> dict[str, str]:
    """Event key → memory id, by session and order: each stored event's memory is the next
    memory of its session (by capture time) that holds the event's fingerprint."""
    from aletheia import db

    conn = db.connect()
    out: dict[str, str] = {}
    try:
        for project in replay.data.projects.values():
            for s in project.sessions:
                rows = conn.execute(
                    "SELECT id, title, narrative FROM memory WHERE session_id = ? "
                    "ORDER BY created_at, rowid", (s.uuid,)).fetchall()
                texts = [(r[0], _norm(f"{r[1]} {r[2]}")) for r in rows]
                j = 0
                for e in s.events:
                    if not e.stored:
                        continue
                    fp = fingerprint(e)
                    for k in range(j, len(texts)):
                        if fp and fp in texts[k][1]:
                            out[e.key] = texts[k][0]
                            j = k + 1
                            break
    finally:
        conn.close()
    replay.memory_of = out
    return out


def check_gold(replay: Replay, questions: list[cd.Question]) -> None:
    """Fail loudly when a gold (or superseded) event has no memory in the store."""
    missing = sorted({k for q in questions for k in (*q.gold, *q.superseded)
                      if k not in replay.memory_of})
    if missing:
        raise ReplayError(f"{len(missing)} gold events are not in the store: "
                          f"{', '.join(missing[:20])}{' …' if len(missing) > 20 else ''}")


def restamp(replay: Replay) -> int:
    """Give each mapped memory its event's time, and each session its span (capture stamps
    everything with the replay's few seconds)."""
    from aletheia import db
    from aletheia.db import tx

    events = replay.data.events()
    conn = db.connect()
    try:
        with tx(conn):
            for key, memory_id in replay.memory_of.items():
                conn.execute("UPDATE memory SET created_at = ? WHERE id = ?",
                             (events[key].at, memory_id))
            for p in replay.data.projects.values():
                for s in p.sessions:
                    times = [e.at for e in s.events]
                    conn.execute("UPDATE session SET started_at = ?, last_event_at = ? WHERE id = ?",
                                 (min(times), max(times), s.uuid))
    finally:
        conn.close()
    return len(replay.memory_of)


def compress(replay: Replay) -> dict[str, Any]:
    """``aletheia compress --json`` (the offline default) in a real process."""
    start = time.perf_counter()
    done = subprocess.run([*aletheia_cmd(), "compress", "--json"], env=replay.env(),
                          capture_output=True, text=True, cwd=replay.root)
    if done.returncode != 0:
        raise ReplayError(f"aletheia compress failed: {done.stderr.strip()[-500:]}")
    try:
        out: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        out = {"output": done.stdout.strip()[-500:]}
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def store_counts() -> dict[str, int]:
    from aletheia import db

    conn = db.connect()
    try:
        memories = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
        facts = conn.execute("SELECT count(*) FROM fact").fetchone()[0]
    finally:
        conn.close()
    return {"memories": int(memories), "facts": int(facts)}


def shell_join(cmd: list[str]) -> str:
    return " ".join(shlex.quote(c) for c in cmd)


# --- what both benches do first -----------------------------------------------------------


def default_tmp() -> str | None:
    """/dev/shm when there is one: the store's fsyncs then cost nothing."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def load_checked(part: str = "all") -> cd.DataSet:
    """The folder that holds ``part``: the main set (dev, heldout, all), dev-extra (no
    minimums) or dev-3 / heldout-2 / heldout-3 / heldout-4 (their own minimums), refused when it
    does not validate."""
    data = cd.load(cd.folder(part))
    problems = cd.validate(data)
    if problems:
        raise ReplayError("the data set is broken:\n  " + "\n  ".join(problems[:20]))
    return data


@contextlib.contextmanager
def workdir(parent: str | None, prefix: str, keep: bool) -> Iterator[Path]:
    # The folder's name is in every file event's title (the checkout's path): a random part of
    # fixed shape (hex, no "_", which the tokenizer splits at) keeps each memory's token count,
    # and so every BM25 figure, the same from run to run.
    base = Path(parent or tempfile.gettempdir())
    while True:
        root = base / f"{prefix}{secrets.token_hex(4)}"
        try:
            root.mkdir(mode=0o700)
            break
        except FileExistsError:
            continue
    try:
        yield root
    finally:
        if keep:
            print(f"store kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def build(data: cd.DataSet, root: Path, mode: str, *, jobs: int, restamp_times: bool,
          run_compress: bool) -> tuple[Replay, dict[str, Any]]:
    """A store holding every project's sessions, captured by ``mode``, with every gold event
    found (or ReplayError), times from the data unless told otherwise, compressed if asked."""
    replay = prepare(data, root)
    meta: dict[str, Any] = {"capture": mode, "restamp": restamp_times}
    meta["events_sent"] = capture(replay, mode, jobs=jobs)
    meta["capture_s"] = round(replay.capture_s, 1)
    meta["spool_replayed"] = replay_spool()
    map_events(replay)
    check_gold(replay, data.questions)
    if restamp_times:
        restamp(replay)
    if run_compress:
        meta["compress"] = compress(replay)
    meta["store"] = store_counts()
    return replay, meta

"""The coding-session evaluation set (bench/data/coding/): load it, expand it into the Claude
Code hook payloads the sessions would have produced, and resolve its gold labels.

Standard library only, and no aletheia import: the set must be readable by anyone who
re-measures recall on it (and by ``tests/test_bench_data.py``).

Layout (see bench/data/coding/README.md for the authoring format):

- ``projects.toml``: each project's name, part (``dev`` or ``heldout``) and a one-line summary.
  ``dev-extra/`` holds a third part in the same layout (``load(EXTRA)``): small projects of
  other stacks to tune on like dev, outside the set's minimums.  ``heldout-2/``
  (``load(HELDOUT2)``), ``heldout-3/`` (``load(HELDOUT3)``) and ``heldout-4/``
  (``load(HELDOUT4)``) are a second, a third and a fourth held-out part of four more projects
  each, with minimums of their own (``PART_MINIMUMS``): report on them, never tune on them.
  ``dev-3/`` (``load(DEV3)``) is a tunable part held to heldout-3's minimums, written to be as
  hard as real sessions (the stack and most answers in talk, changes told in passing or only in
  tool output); ``dev-4/`` (``load(DEV4)``) is a fifth such part (a fresh yardstick for one stop, tuned on since);
  ``dev-5/`` (``load(DEV5)``) a sixth (stop 27's fresh yardstick, tuned on since stop 27's second session);
  ``dev-6/`` (``load(DEV6)``) a seventh (the fresh yardstick of stop 27's second session, tuned on since stop 28);
  ``dev-7/`` (``load(DEV7)``) an eighth (stop 28's fresh yardstick, tuned on since stop 29);
  ``dev-8/`` (``load(DEV8)``) a ninth (stop 29's fresh yardstick, tuned on since stop 30);
  ``dev-9/`` (``load(DEV9)``) a tenth (stop 30's fresh yardstick, tuned on since stop 31);
  ``dev-10/`` (``load(DEV10)``) an eleventh, stop 31's fresh yardstick (nobody tunes on it in that stop).  ``load(folder(part))`` loads the folder that holds a part.
- ``<project>.sessions``: the project's sessions in time order, one ``@@`` header per hook event.
- ``<project>.questions.toml``: questions a later session of the project would ask, with gold
  labels, short answers and categories.

Every event gets a stable key: ``<session>:<label>`` where the label is written in the data
(``@@ bash:t05``) or, when it is not, ``@<index>`` (gold may not name those).  Gold labels name written labels only, or a
pattern (``cmd~REGEX`` any Bash event whose command matches; ``file~REGEX`` any Read, Edit or
Write of a matching path; ``text~REGEX`` any event whose text matches) that resolves to events.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "coding"
PARTS = ("dev", "heldout")
EXTRA = DATA / "dev-extra"
EXTRA_PART = "dev-extra"  # only in EXTRA: tuned on like dev, never mixed into the main set
HELDOUT2 = DATA / "heldout-2"
HELDOUT2_PART = "heldout-2"  # only in HELDOUT2: report-only like heldout, never tuned on
HELDOUT3 = DATA / "heldout-3"
HELDOUT3_PART = "heldout-3"  # only in HELDOUT3: a third report-only part, never tuned on
HELDOUT4 = DATA / "heldout-4"
HELDOUT4_PART = "heldout-4"  # only in HELDOUT4: a fourth report-only part, never tuned on
DEV3 = DATA / "dev-3"
DEV3_PART = "dev-3"  # only in DEV3: tuned on like dev, written as hard as real sessions
DEV4 = DATA / "dev-4"
DEV4_PART = "dev-4"  # only in DEV4: written like dev-3 as stop 26's fresh yardstick, tuned on since stop 27
DEV5 = DATA / "dev-5"
DEV5_PART = "dev-5"  # only in DEV5: written like dev-4 as stop 27's fresh yardstick, tuned on since that stop's second session
DEV6 = DATA / "dev-6"
DEV6_PART = "dev-6"  # only in DEV6: written like dev-5 as the fresh yardstick of stop 27's second session, tuned on since stop 28
DEV7 = DATA / "dev-7"
DEV7_PART = "dev-7"  # only in DEV7: written like dev-6 as stop 28's fresh yardstick, tuned on since stop 29
DEV8 = DATA / "dev-8"
DEV8_PART = "dev-8"  # only in DEV8: written like dev-7 as stop 29's fresh yardstick, tuned on since stop 30
DEV9 = DATA / "dev-9"
DEV9_PART = "dev-9"  # only in DEV9: written like dev-8 as stop 30's fresh yardstick, tuned on since stop 31
DEV10 = DATA / "dev-10"
DEV10_PART = "dev-10"  # only in DEV10: written like dev-9 as stop 31's fresh yardstick, not tuned on in that stop
# The parts that live in a folder of their own (each folder holds exactly that one part).
FOLDERS = {EXTRA_PART: EXTRA, HELDOUT2_PART: HELDOUT2, HELDOUT3_PART: HELDOUT3,
           HELDOUT4_PART: HELDOUT4, DEV3_PART: DEV3, DEV4_PART: DEV4, DEV5_PART: DEV5,
           DEV6_PART: DEV6, DEV7_PART: DEV7, DEV8_PART: DEV8, DEV9_PART: DEV9,
           DEV10_PART: DEV10}
# The held-out parts in folders of their own: report on them, never tune on them.
HELDOUT_FOLDER_PARTS = (HELDOUT2_PART, HELDOUT3_PART, HELDOUT4_PART)
# The parts one may tune on (read their misses, fit constants): coding_ablate's "tunable" group.
TUNABLE_PARTS = ("dev", EXTRA_PART, DEV3_PART, DEV4_PART, DEV5_PART, DEV6_PART, DEV7_PART,
                 DEV8_PART, DEV9_PART)
CATEGORIES = (
    "stack", "command", "convention", "decision", "error-fix", "file-role",
    "knowledge-update", "tool-output-only", "multi-session", "no-answer",
)
# The questions a SessionStart block should answer ("what does this project use / prefer / run").
BLOCK_CATEGORIES = ("stack", "command", "convention", "decision", "knowledge-update")
SECRET_SEED = 20261201
ROOT = "{ROOT}"
# Hook events that leave a memory in the store (a prompt, a tool event, an assistant answer).
STORED_KINDS = ("prompt", "tool", "stop")
HOST = "claude-code"


# --- the data model -----------------------------------------------------------------------


@dataclass
class Event:
    session: str
    index: int
    label: str
    hook: str  # the Claude Code hook event name
    kind: str  # start, prompt, tool, stop, end
    payload: dict[str, Any]  # with {ROOT} and secret placeholders still in it
    at: int  # epoch ms: when the event happened
    tool: str = ""
    command: str = ""
    path: str = ""
    text: str = ""  # what the event says (prompt, command and output, file text, answer)

    @property
    def key(self) -> str:
        return f"{self.session}:{self.label}"

    @property
    def stored(self) -> bool:
        return self.kind in STORED_KINDS


@dataclass
class Session:
    name: str
    project: str
    started: int
    uuid: str
    cwd: str  # relative to the project's root ("" = the root)
    events: list[Event] = field(default_factory=list)


@dataclass
class Project:
    name: str
    part: str
    summary: str
    sessions: list[Session] = field(default_factory=list)

    def events(self) -> Iterator[Event]:
        for s in self.sessions:
            yield from s.events


@dataclass
class Question:
    id: str
    project: str
    part: str
    category: str
    text: str
    gold: list[str]  # event keys that hold the answer (knowledge updates: the current ones)
    superseded: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)  # accepted short answers (variants)
    answer_re: str = ""  # or a regex (case-insensitive)
    old_answer: list[str] = field(default_factory=list)  # the superseded short answers
    old_answer_re: str = ""
    block: bool = False  # a "use / prefer / run" question a SessionStart block should carry
    note: str = ""

    @property
    def gold_sessions(self) -> list[str]:
        return sorted({k.split(":", 1)[0] for k in self.gold})

    def answered_by(self, text: str) -> bool:
        """Does ``text`` hold the short answer (case-insensitive, as a whole word)?"""
        return holds(text, self.answer, self.answer_re)

    def shows_old(self, text: str) -> bool:
        return holds(text, self.old_answer, self.old_answer_re)


def holds(text: str, variants: list[str], pattern: str = "") -> bool:
    if pattern and re.search(pattern, text, re.I):
        return True
    return any(re.search(r"(?<![\w])" + re.escape(v) + r"(?![\w])", text, re.I) for v in variants)


@dataclass
class DataSet:
    projects: dict[str, Project]
    questions: list[Question]

    def events(self) -> dict[str, Event]:
        return {e.key: e for p in self.projects.values() for e in p.events()}

    def part(self, part: str) -> DataSet:
        if part == "all":
            return self
        keep = {n: p for n, p in self.projects.items() if p.part == part}
        return DataSet(keep, [q for q in self.questions if q.project in keep])


# --- parsing the .sessions files ----------------------------------------------------------

_HEADER = re.compile(r"^@@ (\S+)(.*)$")
_OFFSET = re.compile(r"^\+(\d+)([smh])$")
_TOOL_KINDS = {"bash", "read", "edit", "write", "grep", "glob", "todo"}


class DataError(ValueError):
    """The data set is malformed (a bad header, an unknown label, a missing field)."""


def _rng(*parts: object) -> random.Random:
    seed = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(seed[:8], "big"))


def _tool_use_id(session: str, label: str) -> str:
    digest = hashlib.sha256(f"{session}/{label}".encode()).digest()
    alphabet = string.ascii_letters + string.digits
    n = int.from_bytes(digest, "big")
    chars = []
    for _ in range(24):
        n, r = divmod(n, len(alphabet))
        chars.append(alphabet[r])
    return "toolu_01" + "".join(chars)


def _parse_time(value: str) -> int:
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


# A flag or an option written as the README shows it, in brackets (``[fail] [exit=2]``): the
# same as bare (``fail exit=2``).  Only a whole token: a path's ``[id]`` segment stays.
_BRACKETED = re.compile(r"\[((?:fail|all)|[a-z_]+=[^\]\s]*)\]")


def _split_header(rest: str) -> tuple[list[str], dict[str, str], str]:
    """`` a b=c [d=e] +5m | free text`` → (positional, options, free text)."""
    free = ""
    if " | " in rest or rest.rstrip().endswith(" |"):
        rest, free = rest.split(" |", 1)
        free = free.strip()
    pos: list[str] = []
    opts: dict[str, str] = {}
    for tok in rest.split():
        bracketed = _BRACKETED.fullmatch(tok)
        if bracketed:
            tok = bracketed.group(1)
        if "=" in tok and not tok.startswith(("/", ".")):
            k, v = tok.split("=", 1)
            opts[k] = v
        else:
            pos.append(tok)
    return pos, opts, free


def _sections(lines: list[str], names: tuple[str, ...]) -> dict[str, list[str]]:
    """Cut a body at ``--- name`` marker lines; what precedes the first marker is ``""``."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in lines:
        stripped = line.rstrip()
        if stripped.startswith("--- ") and stripped[4:] in names:
            current = stripped[4:]
            out[current] = []
            continue
        out[current].append(line)
    return out


def _text(lines: list[str]) -> str:
    # Trim blank lines at both ends; keep inner blank lines and indentation.
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return expand_macros("\n".join(line.rstrip() for line in lines))


def _abs(path: str) -> str:
    if path == ".":
        return ROOT
    if path.startswith(("/", "~", "{")):
        return path
    return f"{ROOT}/{path}"


def _numbered(content: str, start: int) -> str:
    return "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(content.split("\n")))


def _patch(old: str, new: str, rng: random.Random) -> list[dict[str, Any]]:
    old_lines, new_lines = old.split("\n"), new.split("\n")
    start = rng.randint(3, 180)
    return [{
        "oldStart": start, "oldLines": len(old_lines), "newStart": start,
        "newLines": len(new_lines),
        "lines": [f"-{line}" for line in old_lines] + [f"+{line}" for line in new_lines],
    }]


def _tool_event(kind: str, pos: list[str], opts: dict[str, str], free: str,
                body: list[str], rng: random.Random) -> tuple[str, dict[str, Any], str, str, str, bool]:
    """(tool_name, fields for the payload, command, path, text, failed)."""
    failed = "fail" in pos
    pos = [p for p in pos if p != "fail"]
    tool_input: dict[str, Any]
    response: dict[str, Any]
    if kind == "bash":
        secs = _sections(body, ("stderr",))
        cmd_lines: list[str] = []
        out_lines = list(secs[""])
        while out_lines and not out_lines[0].strip():
            out_lines.pop(0)
        # The first line is ``$ command``; ``$> `` lines continue it (heredocs, long pipes).
        if out_lines and out_lines[0].startswith("$ "):
            cmd_lines.append(out_lines.pop(0)[2:])
            while out_lines and out_lines[0].startswith("$> "):
                cmd_lines.append(out_lines.pop(0)[3:])
        if not cmd_lines:
            raise DataError("a bash event needs a '$ command' line")
        command = expand_macros("\n".join(cmd_lines))
        stdout = _text(out_lines)
        stderr = _text(secs.get("stderr", []))
        tool_input = {"command": command, "description": free or "Run command"}
        if "timeout" in opts:
            tool_input["timeout"] = int(opts["timeout"])
        text = f"{command}\n{stdout}\n{stderr}"
        if failed:
            code = opts.get("exit", "1")
            error = f"Exit code {code}\n" + "\n".join(p for p in (stdout, stderr) if p)
            return "Bash", {"tool_input": tool_input, "error": error}, command, "", text, True
        response = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
        return "Bash", {"tool_input": tool_input, "tool_response": response}, command, "", text, False
    if kind == "read":
        path = _abs(pos[0])
        content = _text(body)
        start = int(opts.get("offset", "1"))
        total = int(opts.get("total", str(start - 1 + len(content.split("\n")))))
        tool_input = {"file_path": path}
        if start != 1:
            tool_input["offset"] = start
            tool_input["limit"] = len(content.split("\n"))
        response = {"type": "text", "file": {
            "filePath": path, "content": _numbered(content, start),
            "numLines": len(content.split("\n")), "startLine": start, "totalLines": total}}
        return "Read", {"tool_input": tool_input, "tool_response": response}, "", path, f"{path}\n{content}", False
    if kind == "edit":
        path = _abs(pos[0])
        secs = _sections(body, ("old", "new"))
        old, new = _text(secs.get("old", [])), _text(secs.get("new", []))
        if not old and not new:
            raise DataError("an edit needs '--- old' and '--- new' sections")
        replace_all = "all" in pos[1:]
        tool_input = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            tool_input["replace_all"] = True
        response = {"filePath": path, "oldString": old, "newString": new,
                    "structuredPatch": _patch(old, new, rng), "userModified": False,
                    "replaceAll": replace_all}
        return "Edit", {"tool_input": tool_input, "tool_response": response}, "", path, f"{path}\n{old}\n{new}", False
    if kind == "write":
        path = _abs(pos[0])
        content = _text(body)
        response = {"type": opts.get("type", "create"), "filePath": path, "content": content,
                    "structuredPatch": []}
        return ("Write", {"tool_input": {"file_path": path, "content": content},
                          "tool_response": response}, "", path, f"{path}\n{content}", False)
    if kind == "grep":
        mode = {"content": "content", "files": "files_with_matches", "count": "count"}[
            opts.get("mode", "content")]
        output = _text(body)
        tool_input = {"pattern": free, "output_mode": mode}
        if "path" in opts:
            tool_input["path"] = _abs(opts["path"])
        if "glob" in opts:
            tool_input["glob"] = opts["glob"]
        if mode == "content":
            tool_input["-n"] = True
            response = {"mode": mode, "numFiles": 0, "filenames": [],
                                        "content": output, "numLines": len(output.split("\n")) if output else 0}
        else:
            files = [_abs(f) for f in output.split("\n") if f.strip()]
            response = {"mode": mode, "filenames": files, "numFiles": len(files)}
        return "Grep", {"tool_input": tool_input, "tool_response": response}, "", "", f"{free}\n{output}", False
    if kind == "glob":
        files = [_abs(f) for f in _text(body).split("\n") if f.strip()]
        response = {"filenames": files, "durationMs": rng.randint(4, 60),
                    "numFiles": len(files), "truncated": False}
        return ("Glob", {"tool_input": {"pattern": free}, "tool_response": response}, "", "",
                free + "\n" + "\n".join(files), False)
    if kind == "todo":
        todos = []
        for line in _text(body).split("\n"):
            m = re.match(r"^\[( |~|x)\] (.+)$", line.strip())
            if not m:
                raise DataError(f"a todo line looks like '[ ] text': {line!r}")
            status = {" ": "pending", "~": "in_progress", "x": "completed"}[m.group(1)]
            todos.append({"content": m.group(2), "status": status, "activeForm": m.group(2)})
        return ("TodoWrite", {"tool_input": {"todos": todos},
                              "tool_response": {"oldTodos": [], "newTodos": todos}}, "", "",
                "\n".join(t["content"] for t in todos), False)
    raise DataError(f"unknown tool event {kind!r}")


def parse_sessions(text: str, project: str) -> list[Session]:
    sessions: list[Session] = []
    blocks: list[tuple[str, str, list[str], int]] = []  # (kind, header rest, body, line number)
    for number, line in enumerate(text.split("\n"), 1):
        m = _HEADER.match(line)
        if m:
            blocks.append((m.group(1), m.group(2), [], number))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip() and not line.startswith("#"):
            raise DataError(f"{project}.sessions:{number}: text before the first @@ header")
    clock = 0
    for head, rest, body, number in blocks:
        where = f"{project}.sessions:{number}"
        kind, _, label = head.partition(":")
        pos, opts, free = _split_header(rest)
        offsets = [p for p in pos if _OFFSET.match(p)]
        pos = [p for p in pos if not _OFFSET.match(p)]
        try:
            if kind == "session":
                name, when = pos[0], pos[1]
                clock = _parse_time(when)
                sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"aletheia-bench/{project}/{name}"))
                s = Session(name, project, clock, sid, opts.get("cwd", ""))
                sessions.append(s)
                start = {"source": opts.get("source", "startup")}
                s.events.append(Event(name, 0, "start", "SessionStart", "start", start, clock))
                continue
            if not sessions:
                raise DataError("an event before the first session")
            s = sessions[-1]
            index = len(s.events)
            label = label or f"@{index}"
            if any(e.label == label for e in s.events):
                raise DataError(f"label {label!r} used twice in session {s.name}")
            rng = _rng(project, s.name, label)
            prev = s.events[-1]
            if offsets:
                for off in offsets:
                    m = _OFFSET.match(off)
                    assert m
                    clock += int(m.group(1)) * {"s": 1000, "m": 60_000, "h": 3_600_000}[m.group(2)]
            elif kind == "prompt" and prev.kind == "stop":
                clock += rng.randint(60, 420) * 1000
            else:
                clock += rng.randint(6, 80) * 1000
            if kind == "prompt":
                prompt = _text(body)
                s.events.append(Event(s.name, index, label, "UserPromptSubmit", "prompt",
                                      {"prompt": prompt}, clock, text=prompt))
            elif kind == "stop":
                message = _text(body)
                s.events.append(Event(s.name, index, label, "Stop", "stop",
                                      {"last_assistant_message": message, "stop_hook_active": False},
                                      clock, text=message))
            elif kind == "end":
                s.events.append(Event(s.name, index, label, "SessionEnd", "end",
                                      {"reason": free or "prompt_input_exit"}, clock))
            elif kind in _TOOL_KINDS:
                tool, fields, command, path, said, failed = _tool_event(kind, pos, opts, free, body, rng)
                payload = {"tool_name": tool, **fields, "tool_use_id": _tool_use_id(s.name, label),
                           "duration_ms": rng.randint(15, 4000) if tool == "Bash" else rng.randint(2, 90)}
                s.events.append(Event(s.name, index, label,
                                      "PostToolUseFailure" if failed else "PostToolUse", "tool",
                                      payload, clock, tool, command, path, said))
            else:
                raise DataError(f"unknown header @@ {head}")
        except (IndexError, KeyError, ValueError) as exc:
            raise DataError(f"{where}: {exc}") from exc
    return sessions


# --- macros for boilerplate output --------------------------------------------------------

_MACRO = re.compile(r"\{\{(\w+)((?: [^}]*)?)\}\}")


def _m_pytest(args: list[str]) -> str:
    """{{pytest PASSED SECONDS [SKIPPED]}}: the quiet progress lines and the summary."""
    passed, secs = int(args[0]), args[1]
    skipped = int(args[2]) if len(args) > 2 else 0
    marks = "." * passed + "s" * skipped
    lines = []
    total = len(marks)
    for i in range(0, total, 80):
        chunk = marks[i:i + 80]
        pct = min(100, round(100 * (i + len(chunk)) / total))
        lines.append(f"{chunk:<80} [{pct:>3}%]")
    summary = f"{passed} passed" + (f", {skipped} skipped" if skipped else "") + f" in {secs}s"
    return "\n".join(lines + [summary])


def _m_uv_add(args: list[str]) -> str:
    """{{uv_add RESOLVED pkg==1.0 …}}"""
    resolved, pkgs = args[0], args[1:]
    return "\n".join([f"Resolved {resolved} packages in 38{len(pkgs)}ms",
                      f"Prepared {len(pkgs)} packages in 1.2{len(pkgs)}s",
                      f"Installed {len(pkgs)} packages in 1{len(pkgs)}ms"]
                     + [f" + {p}" for p in pkgs])


def _m_pip(args: list[str]) -> str:
    """{{pip pkg==1.0 …}}: pip install output."""
    out = []
    for p in args:
        name, _, ver = p.partition("==")
        out.append(f"Collecting {name}")
        out.append(f"  Downloading {name.replace('-', '_')}-{ver}-py3-none-any.whl (1{len(name)}1 kB)")
    out.append("Installing collected packages: " + ", ".join(p.partition("==")[0] for p in args))
    out.append("Successfully installed " + " ".join(p.replace("==", "-") for p in args))
    return "\n".join(out)


def _m_cargo(args: list[str]) -> str:
    """{{cargo CRATE VERSION SECONDS [profile]}}: cargo build output's last lines."""
    crate, ver, secs = args[0], args[1], args[2]
    profile = args[3] if len(args) > 3 else "dev"
    kind = "unoptimized + debuginfo" if profile in ("dev", "test") else "optimized"
    return (f"   Compiling {crate} v{ver} ({{ROOT}})\n"
            f"    Finished `{profile}` profile [{kind}] target(s) in {secs}s")


def _m_bun_install(args: list[str]) -> str:
    """{{bun_install PACKAGES SECONDS}}"""
    return (f"bun install v1.1.38 (bf2f153f)\n\n{args[0]} packages installed [{args[1]}s]")


_MACROS = {"pytest": _m_pytest, "uv_add": _m_uv_add, "pip": _m_pip, "cargo": _m_cargo,
           "bun_install": _m_bun_install}


def expand_macros(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        name, args = m.group(1), m.group(2).split()
        if name.startswith("secret"):
            return m.group(0)  # filled in at load time (see fill)
        if name not in _MACROS:
            raise DataError(f"unknown macro {{{{{name}}}}}")
        return _MACROS[name](args)

    return _MACRO.sub(one, text)


# --- fake secrets (right-shaped, generated from a seeded RNG; never in the repository) ------

_ALNUM = string.ascii_letters + string.digits


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_SECRETS = {
    "github": lambda r: "ghp_" + _pick(r, _ALNUM, 36),
    "aws_key": lambda r: "AKIA" + _pick(r, string.ascii_uppercase + "234567", 16),
    "aws_secret": lambda r: _pick(r, _ALNUM + "+/", 40),
    "stripe": lambda r: "sk_" + "live_" + _pick(r, _ALNUM, 24),
    "stripe_whsec": lambda r: "whsec_" + _pick(r, _ALNUM, 32),
    "openai": lambda r: "sk-proj-" + _pick(r, _ALNUM, 48),
    "slack_webhook": lambda r: "https://hooks.slack.com/services/T" + _pick(r, string.ascii_uppercase + string.digits, 8)
    + "/B" + _pick(r, string.ascii_uppercase + string.digits, 8) + "/" + _pick(r, _ALNUM, 24),
    "password": lambda r: "Pw" + _pick(r, _ALNUM, 18) + "9x",
    "django": lambda r: "django-insecure-" + _pick(r, string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50),
    "npm": lambda r: "npm_" + _pick(r, _ALNUM, 36),
    "hex40": lambda r: _pick(r, "0123456789abcdef", 40),
}


def fill(value: Any, root: str, secrets: dict[str, str]) -> Any:
    """``value`` with ``{ROOT}`` and ``{{secret KIND NAME}}`` placeholders filled in."""
    if isinstance(value, str):
        value = value.replace(ROOT, root)
        if "{{secret" in value:
            value = re.sub(r"\{\{secret (\w+) (\w+)\}\}", lambda m: secrets[f"{m.group(1)}/{m.group(2)}"], value)
        return value
    if isinstance(value, list):
        return [fill(v, root, secrets) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, root, secrets) for k, v in value.items()}
    return value


def secrets_for(events: list[Event], seed: int = SECRET_SEED) -> dict[str, str]:
    """One fake secret per ``{{secret KIND NAME}}`` placeholder, the same on every load."""
    names: set[tuple[str, str]] = set()
    for e in events:
        for m in re.finditer(r"\{\{secret (\w+) (\w+)\}\}", json.dumps(e.payload)):
            names.add((m.group(1), m.group(2)))
    rng = random.Random(seed)
    out: dict[str, str] = {}
    for kind, name in sorted(names):
        if kind not in _SECRETS:
            raise DataError(f"unknown secret kind {kind!r}")
        out[f"{kind}/{name}"] = _SECRETS[kind](rng)
    return out


def payload(event: Event, session: Session, root: str, secrets: dict[str, str]) -> dict[str, Any]:
    """The JSON a Claude Code hook would get on stdin for ``event`` in a checkout at ``root``."""
    cwd = root + ("/" + session.cwd if session.cwd else "")
    slug = re.sub(r"[^A-Za-z0-9]", "-", root)
    base = {
        "session_id": session.uuid,
        "transcript_path": f"/home/dev/.claude/projects/{slug}/{session.uuid}.jsonl",
        "cwd": cwd,
        "hook_event_name": event.hook,
    }
    out: dict[str, Any] = {**base, **fill(event.payload, root, secrets)}
    return out


# --- questions ----------------------------------------------------------------------------

_PATTERN = re.compile(r"^(cmd|file|text)~(.+)$")


def _resolve(refs: list[str], project: Project, events: dict[str, Event], where: str) -> list[str]:
    out: list[str] = []
    for ref in refs:
        m = _PATTERN.match(ref)
        if m:
            kind, rx = m.group(1), re.compile(m.group(2))
            found = []
            for e in project.events():
                if not e.stored:
                    continue
                if (kind == "cmd" and e.tool == "Bash" and rx.search(e.command)) or (
                        kind == "file" and e.tool in ("Read", "Edit", "Write") and rx.search(e.path)) or (
                        kind == "text" and rx.search(e.text)):
                    found.append(e.key)
            if not found:
                raise DataError(f"{where}: pattern {ref!r} matches no event")
            out.extend(k for k in found if k not in out)
            continue
        if ref not in events:
            raise DataError(f"{where}: gold event {ref!r} does not exist")
        if not events[ref].stored:
            raise DataError(f"{where}: gold event {ref!r} leaves no memory (a {events[ref].hook})")
        if events[ref].label.startswith("@"):
            raise DataError(f"{where}: gold must name a written label, not {ref!r}")
        if ref not in out:
            out.append(ref)
    return out


def _variants(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def parse_questions(text: str, project: Project, events: dict[str, Event]) -> list[Question]:
    data = tomllib.loads(text)
    out = []
    for item in data.get("q", []):
        qid = str(item.get("id", ""))
        where = f"{project.name}.questions.toml {qid or '?'}"
        unknown = set(item) - {"id", "category", "q", "gold", "superseded", "answer", "answer_re",
                               "old_answer", "old_answer_re", "block", "note"}
        if unknown:
            raise DataError(f"{where}: unknown fields {sorted(unknown)}")
        category = str(item.get("category", ""))
        if category not in CATEGORIES:
            raise DataError(f"{where}: category {category!r} is not one of {CATEGORIES}")
        q = Question(
            id=qid, project=project.name, part=project.part, category=category,
            text=str(item.get("q", "")).strip(),
            gold=_resolve([str(g) for g in item.get("gold", [])], project, events, where),
            superseded=_resolve([str(g) for g in item.get("superseded", [])], project, events, where),
            answer=_variants(item.get("answer")), answer_re=str(item.get("answer_re", "")),
            old_answer=_variants(item.get("old_answer")),
            old_answer_re=str(item.get("old_answer_re", "")), block=bool(item.get("block", False)),
            note=str(item.get("note", "")),
        )
        out.append(q)
    return out


def folder(part: str) -> Path:
    """The folder that holds ``part`` (``dev``, ``heldout`` and ``all``: the main set's)."""
    return FOLDERS.get(part, DATA)


def load(root: Path = DATA) -> DataSet:
    meta = tomllib.loads((root / "projects.toml").read_text(encoding="utf-8"))
    projects: dict[str, Project] = {}
    own = [part for part, where in FOLDERS.items() if root.resolve() == where.resolve()]
    allowed = tuple(own) or PARTS
    for item in meta["project"]:
        p = Project(str(item["name"]), str(item["part"]), str(item.get("summary", "")))
        if p.part not in allowed:
            raise DataError(f"project {p.name}: part {p.part!r} is not one of {allowed}")
        p.sessions = parse_sessions((root / f"{p.name}.sessions").read_text(encoding="utf-8"), p.name)
        projects[p.name] = p
    events = {e.key: e for p in projects.values() for e in p.events()}
    questions: list[Question] = []
    for p in projects.values():
        qfile = root / f"{p.name}.questions.toml"
        if qfile.exists():
            questions.extend(parse_questions(qfile.read_text(encoding="utf-8"), p, events))
    return DataSet(projects, questions)


MINIMUMS = {"projects_per_part": 2, "sessions_per_project": 12, "questions_per_part": 150,
            "no_answer_per_part": 10, "block_per_part": 40, "knowledge_updates_per_part": 6,
            "questions_per_project": 0}
# Each part's minimums; a part without an entry (dev-extra) has none, not even the events per
# session.  heldout-2 is four projects so that a gain can be read project by project (the
# per-project spread of a gain is several points), each with enough questions of its own;
# heldout-3 and heldout-4 the same, with at least four knowledge updates per project (16 in all);
# dev-3 too (tuned on, but held to the held-out parts' minimums), dev-4 (written like dev-3 as
# stop 26's fresh yardstick, tuned on since stop 27) and dev-5 (written like dev-4 as stop 27's
# fresh yardstick, tuned on since stop 27's second session and in coding_ablate's "tunable" group), and dev-6
# (written like dev-5 as the fresh yardstick of stop 27's second session, tuned on since stop 28, in "tunable" too), and dev-7 (written like dev-6 as stop 28's fresh
# yardstick, tuned on since stop 29, in "tunable" too), and dev-8 (written like dev-7 as stop 29's fresh
# yardstick, tuned on since stop 30, in "tunable" too), and dev-9 (written like dev-8 as stop 30's
# fresh yardstick, tuned on since stop 31, in "tunable" too), and dev-10 (written like dev-9 as stop
# 31's fresh yardstick, nobody tunes on in that stop: not in "tunable").
_FOUR_PROJECTS = {**MINIMUMS, "projects_per_part": 4, "questions_per_part": 160,
                  "questions_per_project": 40}
PART_MINIMUMS: dict[str, dict[str, int]] = {
    "dev": MINIMUMS, "heldout": MINIMUMS,
    HELDOUT2_PART: _FOUR_PROJECTS,
    HELDOUT3_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                    "knowledge_updates_per_project": 4},
    HELDOUT4_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                    "knowledge_updates_per_project": 4},
    DEV3_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV4_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV5_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV6_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV7_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV8_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV9_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                "knowledge_updates_per_project": 4},
    DEV10_PART: {**_FOUR_PROJECTS, "knowledge_updates_per_part": 16,
                 "knowledge_updates_per_project": 4},
}
EVENTS_PER_SESSION = (10, 60)
# Right-shaped secrets must never be written into the data files (they are generated at load).
_LITERAL_SECRETS = re.compile(
    r"ghp_[A-Za-z0-9]{36}|AKIA[A-Z2-7]{16}|sk_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{16,}"
    r"|sk-proj-[A-Za-z0-9]{20,}|xox[abp]-[A-Za-z0-9-]{10,}|npm_[A-Za-z0-9]{36}"
    r"|django-insecure-\S{20,}|hooks\.slack\.com/services/T\w+")


def validate(data: DataSet, *, minimums: bool = True) -> list[str]:
    """Everything wrong with the set, as readable lines (empty when it is sound)."""
    errors: list[str] = []
    events = data.events()
    seen: set[str] = set()
    for q in data.questions:
        where = f"{q.id} ({q.project})"
        if not q.id or q.id in seen:
            errors.append(f"{where}: missing or repeated id")
        seen.add(q.id)
        if not q.text:
            errors.append(f"{where}: no question text")
        if q.category == "no-answer":
            if q.gold or q.superseded or q.answer or q.answer_re or q.block:
                errors.append(f"{where}: a no-answer question names gold events or answers")
            continue
        if not q.gold:
            errors.append(f"{where}: no gold events")
            continue
        gold_text = [events[k].text for k in q.gold]
        if (q.answer or q.answer_re) and not any(q.answered_by(t) for t in gold_text):
            errors.append(f"{where}: no gold event holds the short answer {q.answer or q.answer_re}")
        if (q.answer or q.answer_re) and q.answered_by(q.text):
            errors.append(f"{where}: the question itself holds its answer")
        if q.block and not (q.answer or q.answer_re):
            errors.append(f"{where}: a block question needs a short answer")
        if q.block and q.category not in BLOCK_CATEGORIES:
            errors.append(f"{where}: category {q.category} is not a block category")
        if q.category == "knowledge-update":
            if not q.superseded or not (q.old_answer or q.old_answer_re):
                errors.append(f"{where}: a knowledge update names superseded events and answers")
            else:
                if set(q.gold) & set(q.superseded):
                    errors.append(f"{where}: an event is both current and superseded")
                newest_old = max(events[k].at for k in q.superseded)
                if min(events[k].at for k in q.gold) <= newest_old:
                    errors.append(f"{where}: a current event is not newer than every superseded one")
                if not any(q.shows_old(events[k].text) for k in q.superseded):
                    errors.append(f"{where}: no superseded event holds the old answer")
        elif q.superseded or q.old_answer or q.old_answer_re:
            errors.append(f"{where}: only knowledge updates name superseded events")
        if q.category == "tool-output-only":
            project = data.projects[q.project]
            if any(events[k].kind != "tool" for k in q.gold):
                errors.append(f"{where}: a tool-output-only question's gold must be tool events")
            said = [e for e in project.events() if e.kind in ("prompt", "stop")]
            if (q.answer or q.answer_re) and any(q.answered_by(e.text) for e in said):
                errors.append(f"{where}: the answer is also in a prompt or an assistant message")
        if q.category == "multi-session" and len(q.gold_sessions) < 2:
            errors.append(f"{where}: a multi-session question needs gold in two sessions")
    for p in data.projects.values():
        last = 0
        least = PART_MINIMUMS.get(p.part) if minimums else None
        for s in p.sessions:
            if s.started <= last:
                errors.append(f"{s.name}: sessions are not in time order")
            times = [e.at for e in s.events]
            if times != sorted(times):
                errors.append(f"{s.name}: events are not in time order")
            last = max(times)
            if least and not EVENTS_PER_SESSION[0] <= len(s.events) <= EVENTS_PER_SESSION[1]:
                errors.append(f"{s.name}: {len(s.events)} events (want 10-60)")
        for e in p.events():
            if _LITERAL_SECRETS.search(json.dumps(e.payload)):
                errors.append(f"{e.key}: a literal secret in the data (use {{{{secret KIND NAME}}}})")
    if minimums:
        for part, c in counts(data).items():
            least = PART_MINIMUMS.get(part)
            if not least:
                continue
            if len(c["projects"]) < least["projects_per_part"]:
                errors.append(f"{part}: {len(c['projects'])} projects")
            if c["questions"] < least["questions_per_part"]:
                errors.append(f"{part}: {c['questions']} questions")
            if c["by_category"]["no-answer"] < least["no_answer_per_part"]:
                errors.append(f"{part}: {c['by_category']['no-answer']} no-answer questions")
            if c["block"] < least["block_per_part"]:
                errors.append(f"{part}: {c['block']} block questions")
            if c["knowledge_updates"] < least["knowledge_updates_per_part"]:
                errors.append(f"{part}: {c['knowledge_updates']} knowledge updates")
            for cat, n in c["by_category"].items():
                if n == 0:
                    errors.append(f"{part}: no {cat} questions")
        for p in data.projects.values():
            least = PART_MINIMUMS.get(p.part)
            if not least:
                continue
            if len(p.sessions) < least["sessions_per_project"]:
                errors.append(f"{p.name}: {len(p.sessions)} sessions")
            asked = sum(1 for q in data.questions if q.project == p.name)
            if asked < least["questions_per_project"]:
                errors.append(f"{p.name}: {asked} questions")
            updates = sum(1 for q in data.questions
                          if q.project == p.name and q.category == "knowledge-update")
            if updates < least.get("knowledge_updates_per_project", 0):
                errors.append(f"{p.name}: {updates} knowledge updates")
    return errors


def counts(data: DataSet) -> dict[str, Any]:
    """Projects, sessions, events and questions per part and category."""
    out: dict[str, Any] = {}
    present = {p.part for p in data.projects.values()}
    for part in PARTS if present <= set(PARTS) else sorted(present):
        sub = data.part(part)
        cats = {c: sum(1 for q in sub.questions if q.category == c) for c in CATEGORIES}
        out[part] = {
            "projects": sorted(sub.projects),
            "sessions": sum(len(p.sessions) for p in sub.projects.values()),
            "events": sum(len(s.events) for p in sub.projects.values() for s in p.sessions),
            "questions": len(sub.questions),
            "by_category": cats,
            "block": sum(1 for q in sub.questions if q.block),
            "knowledge_updates": sum(1 for q in sub.questions if q.category == "knowledge-update"),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Counts and problems of the coding-session set.")
    parser.add_argument("--part", choices=("all", *FOLDERS), default="all",
                        help="all: the main set (dev, heldout), then each part in a folder of its own")
    args = parser.parse_args(argv)
    folders = [DATA, *FOLDERS.values()] if args.part == "all" else [folder(args.part)]
    problems = 0
    for where in folders:
        loaded = load(where)
        print(f"== {where.relative_to(DATA.parent)}")
        print(json.dumps(counts(loaded), indent=2))
        for line in validate(loaded):
            print(line)
            problems += 1
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

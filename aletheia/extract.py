"""The offline rule extractor: a session's memories → facts a coding agent can use later,
a session summary, and the project summary.

Deterministic and stdlib-only.  It reads what the capture hooks store (``prompt``,
``tool_event`` with ``input: {json}\\n\\noutput:\\n…``, ``response``) and looks for five things:
commands that worked, errors and what fixed them, decisions and causes stated by the
assistant, conventions stated by the user, and what files are for.  Work is cut into
windows (≤ 20 items, ≤ 12,000 characters); the state that spans windows (an error waiting
for its fix) lives in ``RuleExtractor``.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import sqlite3
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from aletheia import ids

WINDOW_ITEMS = 20
WINDOW_CHARS = 12_000
SUMMARY_KINDS = ("summary", "project_summary")
FACT_TEXT_CAP = 420
_SIGNATURE_CAP = 160
_SNIPPET_CAP = 70


# --- items and windows --------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One memory as the extractor sees it."""

    id: str
    kind: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    files: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    created_at: int = 0
    tool: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row | dict[str, Any]) -> Item:
        data = dict(row)

        def _list(value: Any) -> tuple[str, ...]:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    return ()
            return tuple(v for v in value or () if isinstance(v, str))

        return cls(
            id=str(data["id"]), kind=str(data["kind"]), title=str(data.get("title") or ""),
            subtitle=str(data.get("subtitle") or ""), narrative=str(data.get("narrative") or ""),
            files=_list(data.get("files")), concepts=_list(data.get("concepts")),
            created_at=int(data.get("created_at") or 0), tool=data.get("tool"),
        )

    @property
    def size(self) -> int:
        return len(self.title) + len(self.subtitle) + len(self.narrative)


def clip(item: Item, max_chars: int) -> Item:
    """Fit one item into ``max_chars`` by cutting the middle of its narrative: the head says
    what ran, the tail how it ended (the error, the test summary)."""
    if item.size <= max_chars:
        return item
    room = max(0, max_chars - len(item.title) - len(item.subtitle) - 40)
    head, tail = room * 3 // 5, room - room * 3 // 5
    cut = len(item.narrative) - head - tail
    narrative = item.narrative[:head] + f"\n[… {cut} characters cut …]\n" + (
        item.narrative[-tail:] if tail else ""
    )
    return replace(item, narrative=narrative)


def windows(
    items: Sequence[Item], max_items: int = WINDOW_ITEMS, max_chars: int = WINDOW_CHARS
) -> list[list[Item]]:
    """Consecutive windows of at most ``max_items`` items and ``max_chars`` characters."""
    out: list[list[Item]] = []
    current: list[Item] = []
    used = 0
    for raw in items:
        item = clip(raw, max_chars)
        if current and (len(current) >= max_items or used + item.size > max_chars):
            out.append(current)
            current, used = [], 0
        current.append(item)
        used += item.size
    if current:
        out.append(current)
    return out


# --- parsing tool events --------------------------------------------------------------------

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "run_shell_command", "local_shell"})
EDIT_TOOLS = frozenset({
    "edit", "multiedit", "write", "notebookedit", "replace", "write_file", "apply_patch",
    "edit_file", "str_replace_editor", "str_replace_based_edit_tool", "create_file",
})
READ_TOOLS = frozenset({"read", "read_file", "view", "read_many_files", "notebookread"})
_OUTPUT_SEP = "\n\noutput:\n"
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


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
                found.extend(p.strip() for p in _PATCH_FILE.findall(patch) if p.strip() not in found)
        elif isinstance(self.input, str) and self.name == "apply_patch":
            found.extend(p.strip() for p in _PATCH_FILE.findall(self.input))
        return found


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
    tool = item.subtitle or item.title.split(":", 1)[0].split(" ", 1)[0] or "tool"
    failed = "error" in item.concepts or item.title.endswith("(failed)")
    return ToolCall(item=item, tool=tool, input=parsed, output=output, failed=failed)


# --- commands --------------------------------------------------------------------------------

_RUNNER = r"(?:(?:uv run|poetry run|pipenv run|pdm run|hatch run|rye run|npx|pnpm exec|bunx)\s+)?"
_PY = r"(?:python3?(?:\.\d+)?\s+-m\s+)?"
CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("test", _RUNNER + _PY + r"(?:pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|rspec|phpunit|ctest)\b"
                 r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|go\s+test\b|cargo\s+(?:test|nextest)\b"
                 r"|make\s+(?:test|check)\b|(?:mvn|\./mvnw|gradle|\./gradlew)\s+\S*test|dotnet\s+test\b"
                 r"|mix\s+test\b|(?:bundle\s+exec\s+)?rake\s+test\b"),
        ("format", _RUNNER + _PY + r"(?:black|isort|ruff\s+format|prettier|gofmt|rustfmt|cargo\s+fmt)\b"
                   r"|(?:npm|pnpm|yarn)\s+run\s+(?:format|fmt)\b"),
        ("lint", _RUNNER + _PY + r"(?:ruff(?:\s+check)?|flake8|pylint|eslint|golangci-lint|shellcheck|rubocop|biome)\b"
                 r"|cargo\s+clippy\b|(?:npm|pnpm|yarn)\s+run\s+lint\b|make\s+lint\b"),
        ("typecheck", _RUNNER + _PY + r"(?:mypy|pyright|tsc|vue-tsc|pytype)\b"
                      r"|(?:npm|pnpm|yarn)\s+run\s+(?:typecheck|type-check|types)\b"),
        ("setup", _PY + r"pip3?\s+install\b|uv\s+(?:sync|pip\s+install|add)\b|poetry\s+(?:install|add)\b"
                  r"|(?:npm|pnpm|yarn|bun)\s+(?:install|ci|i|add)\b|bundle\s+install\b"
                  r"|go\s+mod\s+(?:tidy|download)\b|cargo\s+(?:add|fetch)\b|pipx\s+install\b"),
        ("build", r"make\b|cargo\s+build\b|go\s+build\b|(?:npm|pnpm|yarn|bun)\s+run\s+build\b"
                  r"|python3?\s+-m\s+build\b|docker\s+build\b|(?:mvn|gradle|\./gradlew)\s+(?:package|build)\b"),
        ("run", _RUNNER + r"(?:python3?(?:\.\d+)?\s+(?!-c\b)(?:-m\s+)?[\w./-]+|node\s+\S+|cargo\s+run\b|go\s+run\b"
                r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:start|dev|serve)\b|uvicorn\b|flask\s+run\b|\./[\w.-]+)"),
        ("vcs", r"git\s+(?:commit|push|merge|rebase|tag)\b"),
    )
)
# Looking around is not worth a fact: these never become "commands that worked".
_NOISE = re.compile(
    r"(?:ls|ll|cat|head|tail|less|more|grep|rg|ag|find|fd|cd|pwd|echo|printf|sed|awk|wc|which|"
    r"type|whereis|tree|file|stat|du|df|env|printenv|export|true|false|sleep|ps|kill|touch|mkdir|"
    r"cp|mv|rm|chmod|diff|sort|uniq|xargs|jq|curl|wget|date|clear|history|man|open|code|"
    r"git\s+(?:status|diff|log|show|branch|add|stash|checkout|switch|restore|fetch|remote|blame|rev-parse|config))\b"
)
_CD_PREFIX = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_PLUMBING = re.compile(r"\s*(?:2>&1|\|\s*(?:tail|head)(?:\s+-n)?\s*-?\d*|\|\s*cat)\s*$")
_ENV_ASSIGN = re.compile(r"^(?:export\s+)?[A-Z_][A-Z0-9_]*=\S*\s*(?:&&|;)?\s*")
_SELECTIVE_TEST = re.compile(r"\s-k\s|::|\s--lf\b|\s-m\s|\s\S+\.(?:py|ts|js|tsx|jsx|go|rs)\b|\s--grep\b|\s-t\s")


def normalize_command(command: str, root: str | None = None) -> str:
    """One line, without ``cd <dir> &&``, leading env assignments, ``2>&1`` or ``| tail``;
    the project root becomes a relative path."""
    cmd = " ".join(command.strip().splitlines()[0].split()) if command.strip() else ""
    for _ in range(3):
        before = cmd
        cmd = _CD_PREFIX.sub("", cmd)
        cmd = _ENV_ASSIGN.sub("", cmd)
        cmd = _PLUMBING.sub("", cmd)
        if cmd == before:
            break
    if root and root.startswith("/"):
        cmd = cmd.replace(root.rstrip("/") + "/", "").replace(root.rstrip("/"), ".")
    return cmd.strip()


def split_command(command: str) -> list[str]:
    """``a && b`` → ``[a, b]`` (a pipeline or ``;`` chain stays whole: its parts are not runs)."""
    return [part.strip() for part in re.split(r"\s&&\s", command) if part.strip()]


def category(command: str) -> str | None:
    if _NOISE.match(command):
        return None
    for name, pattern in CATEGORIES:
        if pattern.match(command):
            return name
    return None


def _program(command: str) -> str:
    """A key for "the same command again": category, else the first two words."""
    cat = category(command)
    if cat in ("test", "lint", "typecheck", "format", "build"):
        return cat
    return " ".join(command.split()[:3 if command.startswith(("python", "uv run", "npx")) else 2])


# --- outcomes and error signatures -----------------------------------------------------------

_FAIL = re.compile(
    r"^=+ .*\b\d+ (?:failed|errors?)\b.*=+$|^FAILED |^ERROR (?:collecting|at|tests?/)|"
    r"\b\d+ failed(?:,| in )|Traceback \(most recent call last\)|^E {2,}\S|"
    r"^Found \d+ errors?\b|^\S+?:\d+(?::\d+)?: (?:error|E\d{3}|F\d{3}|W\d{3})\b|\berror TS\d+|"
    r"^npm ERR!|command not found|No module named |^(?:fatal|error|Error|ERROR)(?:\[\w+\])?: |"
    r"[Ee]xit (?:code|status) [1-9]|exited with (?:code|status) [1-9]|Segmentation fault|"
    r"^FAIL\s|make: \*\*\*|panicked at|BUILD FAILED|^error\[E\d+\]",
    re.M,
)
_PASSED = re.compile(
    r"\b\d+ passed\b|All checks passed|Success: no issues found|Successfully installed|"
    r"^OK(?: \(|$)|^ok\s+\S+|test result: ok|\b0 errors?\b|[Bb]uild succeeded|"
    r"Compiled successfully|files? already formatted|Tests:\s+\d+ passed",
    re.M,
)
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - (.+))?$", re.M)
_E_LINE = re.compile(r"^E\s{2,}(\S.*)$", re.M)
_EXC_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|NotFound))(?::\s*(.*))?$",
    re.M,
)
# mypy / ruff / flake8 / gcc: ``path:line[:col]: error: msg`` or ``path:line:col: F401 msg``.
_DIAG_LINE = re.compile(r"^(\S+?:\d+(?::\d+)?): (?:error: |fatal error: )?((?<=error: )\S.*|[EFW]\d{3}\b.*|(?<=fatal error: )\S.*)$", re.M)
_TS_LINE = re.compile(r"^(\S+\(\d+,\d+\)): (error TS\d+: .*)$", re.M)
_GENERIC = re.compile(
    r"^(?:npm ERR! .*|.*command not found.*|.*No module named .*|(?:fatal|error|Error|ERROR)(?:\[\w+\])?: .*|"
    r"error\[E\d+\].*|.*panicked at .*)$",
    re.M,
)
_EXIT_PREFIX = re.compile(r"^(?:Error: )?[Ee]xit code \d+\s*\n?")


def _clean_output(output: str) -> str:
    return _EXIT_PREFIX.sub("", output.replace("\r\n", "\n"))


def outcome(call: ToolCall) -> str:
    """``fail`` (the host said so, or the output shows an error), ``pass`` (the output shows
    success) or ``ok`` (no sign either way: nothing went wrong)."""
    if call.failed:
        return "fail"
    text = _clean_output(call.output)
    if _FAIL.search(text):
        return "fail"
    if _PASSED.search(text):
        return "pass"
    return "ok"


def _cap(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def error_signature(output: str) -> tuple[str, list[str]]:
    """The line that says what went wrong, and the failing test ids (pytest)."""
    text = _clean_output(output)
    tests: list[str] = []
    message = ""
    for test_id, msg in _PYTEST_FAILED.findall(text):
        if "::" in test_id or test_id.endswith(".py"):
            tests.append(test_id)
            message = message or (msg or "")
    if not message:
        e_lines = _E_LINE.findall(text)
        exc = [e for e in e_lines if _EXC_LINE.match(e)]
        message = (exc or e_lines or [""])[0]
    if not message:
        found = _EXC_LINE.findall(text)
        if found:
            name, msg = found[-1]
            message = f"{name}: {msg}" if msg else name
    if not message:
        m = _TS_LINE.search(text) or _DIAG_LINE.search(text)
        if m:
            message = f"{m.group(1)}: {m.group(2)}"
    if not message:
        m = _GENERIC.search(text)
        if m:
            message = m.group(0)
    if not message:
        lines = [line for line in text.splitlines() if line.strip()]
        message = lines[-1] if lines else "failed"
    # The signature is shown inside backticks: its own backticks would end the span early.
    return _cap(message.strip().replace("`", "'"), _SIGNATURE_CAP), tests


# --- text cues ------------------------------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#{1,6})\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
USER_CONVENTION = re.compile(
    r"\b(?:always|never|don'?t|do not|(?:must|should)(?:n'?t| not)? (?:always|never|use|go|live|stay|be run|pass)|"
    r"prefer|instead of|rather than|"
    r"make sure|avoid|we use|we're using|our convention|by convention|only use|keep (?:it|them|the|all|each)|"
    r"use \S+ (?:for|to|instead|when|rather))\b",
    re.I,
)
DECISION = re.compile(
    r"\b(?:I (?:chose|decided|opted|went with|picked|kept|switched|preferred|settled on)|decided to|"
    r"chose to|opted (?:to|for)|went with|in favou?r of|instead of|rather than|trade-?off)\b",
    re.I,
)
CAUSE = re.compile(
    r"\b(?:root cause|the (?:bug|issue|problem|failure|error|culprit|regression) (?:was|is|came from)|"
    r"caused by|was failing because|were failing because|failed because|fails because)\b",
    re.I,
)
CAVEAT = re.compile(
    r"^(?:note|heads[- ]up|caveat|gotcha|warning)\b[:,]?|\bonly works (?:after|when|if|with)\b|"
    r"\bmust be run\b|\bhas to be run\b|\bneeds to be run\b",
    re.I,
)
_LABEL = re.compile(r"^(?:note|heads[- ]up|caveat|gotcha|warning)\b[:,]?\s*", re.I)
_VAGUE_START = re.compile(r"^(?:this|that|it|these|those)\b", re.I)


def sentences(text: str) -> list[str]:
    text = _CODE_BLOCK.sub(" ", text)
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).replace("**", "").strip()
        if not line:
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def _sentence_facts(item: Item, user: bool) -> list[tuple[str, str]]:
    """(kind, text) for the sentences in a prompt, note or response that state something
    durable."""
    found: list[tuple[str, str]] = []
    parts = sentences(item.narrative or item.title)
    for i, sentence in enumerate(parts):
        if len(sentence) < 25 or len(sentence) > 320 or sentence.endswith("?"):
            continue
        text = sentence
        if _VAGUE_START.match(sentence) and i > 0 and len(parts[i - 1]) + len(sentence) < 360:
            text = f"{parts[i - 1]} {sentence}"  # "This …" needs the sentence it points at
        if user:
            if USER_CONVENTION.search(sentence):
                found.append(("convention", f"Convention: {text}"))
        elif CAUSE.search(sentence):
            found.append(("error_fix", f"Cause: {text}"))
        elif DECISION.search(sentence):
            found.append(("decision", f"Decision: {text}"))
        elif CAVEAT.search(sentence):
            found.append(("fact", f"Note: {_LABEL.sub('', text, count=1).strip()}"))
        elif USER_CONVENTION.search(sentence) and re.search(r"\b(?:project|repo|codebase|tests?)\b", sentence, re.I):
            found.append(("convention", f"Convention: {text}"))
        if len(found) >= 5:
            break
    return found


# --- file roles -----------------------------------------------------------------------------

_LINE_NO = re.compile(r"^\s*\d+(?:→|\t)", re.M)
_DOCSTRING = re.compile(r'^[rRuU]?("""|\'\'\')\s*(.*?)(?:\1|$)', re.S)
_COMMENT_STYLES = {
    "#": (".sh", ".bash", ".zsh", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".rb", ".pl", ".r",
          ".conf", ".mk", "makefile", "dockerfile", ".py", ".env", ".txt"),
    "//": (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".c", ".h", ".cc",
           ".cpp", ".hpp", ".cs", ".swift", ".kt", ".scala", ".dart", ".php"),
    "--": (".sql", ".lua", ".hs"),
}
_BORING = re.compile(
    r"^(?:!|-\*-|type:|noqa|pylint|eslint|@ts-|copyright|\(c\)|spdx|license|licensed|todo|fixme|"
    r"auto-?generated|generated by|do not edit|vim:|coding[:=]|prettier-ignore|frozen_string_literal)",
    re.I,
)


def _content_of(call: ToolCall) -> str:
    """The file text a Read returned (or a Write wrote)."""
    if isinstance(call.input, dict) and call.name in ("write", "write_file", "create_file"):
        content = call.input.get("content") or call.input.get("file_text")
        if isinstance(content, str):
            return content
    text = call.output
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        inner = data.get("file") if isinstance(data.get("file"), dict) else data
        content = inner.get("content") if isinstance(inner, dict) else None
        if isinstance(content, str):
            text = content
    return _LINE_NO.sub("", text)


def describe_file(path: str, content: str) -> str | None:
    """A file's own first line about itself: module docstring, header comment or heading."""
    lower = path.lower()
    base = lower.rsplit("/", 1)[-1]
    lines = content.lstrip("\ufeff").splitlines()
    if lower.endswith((".md", ".rst", ".markdown")):
        for line in lines[:5]:
            if line.startswith("#") and line.strip("# ").strip():
                return _first_sentence(line.strip("# "))
        return None
    if lower.endswith((".py", ".pyi")):
        body = "\n".join(
            line for line in lines[:40]
            if not (line.startswith("#!") or re.match(r"#.*coding[:=]", line))
        ).lstrip()
        m = _DOCSTRING.match(body)
        if m:
            return _first_sentence(m.group(2))
    for marker, exts in _COMMENT_STYLES.items():
        if not (lower.endswith(exts) or base in exts):
            continue
        comment: list[str] = []
        for line in lines[:30]:
            s = line.strip()
            if not s and not comment:
                continue
            if s.startswith("#!") and not comment:
                continue
            if marker == "//" and s.startswith(("/*", "*", "*/")):
                s = s.lstrip("/*").rstrip("*/").strip()
                if s:
                    comment.append(s)
                if line.strip().endswith("*/"):
                    break
                continue
            if s.startswith(marker):
                s = s[len(marker):].lstrip("!/ ").strip()
                if s and not _BORING.match(s):
                    comment.append(s)
                elif comment:
                    break
                continue
            break
        if comment:
            return _first_sentence(" ".join(comment))
    return None


def _first_sentence(text: str) -> str | None:
    text = " ".join(text.split()).strip()
    if not text or _BORING.match(text):
        return None
    m = re.search(r"(?<=[.!?])\s", text)
    if m and m.start() >= 15:
        text = text[: m.start()]
    text = re.sub(r"^(?:Package|Module) \w+ ", "", text)
    if len(text) < 8:
        return None
    return _cap(text, 200)


_TEST_NAME = re.compile(r"^(?:test_(.+)\.py|(.+)_test\.(?:py|go)|(.+)\.(?:test|spec)\.[jt]sx?|(.+)Test\.java)$")


def _test_target(path: str) -> str | None:
    m = _TEST_NAME.match(path.rsplit("/", 1)[-1])
    if not m:
        return None
    return next(g for g in m.groups() if g)


def _config_facts(path: str, content: str) -> list[tuple[str, str]]:
    """What pyproject.toml / package.json tell an agent: tools configured, line length,
    Python version, scripts."""
    base = path.rsplit("/", 1)[-1]
    found: list[tuple[str, str]] = []
    if base == "pyproject.toml":
        try:
            data = tomllib.loads(content)
        except (tomllib.TOMLDecodeError, ValueError):
            return found
        tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
        assert isinstance(tool, dict)
        tools = [name for name in tool if name not in ("setuptools", "hatch", "poetry", "pdm")]
        if tools:
            found.append(("file_role", f"`{path}` configures {', '.join(sorted(tools)[:8])}."))
        ruff = tool.get("ruff")
        if isinstance(ruff, dict) and isinstance(ruff.get("line-length"), int):
            found.append(("convention", f"Ruff line length is {ruff['line-length']} (`{path}` [tool.ruff])."))
        black = tool.get("black")
        if isinstance(black, dict) and isinstance(black.get("line-length"), int):
            found.append(("convention", f"Black line length is {black['line-length']} (`{path}` [tool.black])."))
        pytest_cfg = tool.get("pytest")
        ini = pytest_cfg.get("ini_options") if isinstance(pytest_cfg, dict) else None
        if isinstance(ini, dict):
            details = []
            if ini.get("testpaths"):
                details.append(f"testpaths = {', '.join(map(str, ini['testpaths']))}")
            if ini.get("addopts"):
                details.append(f"addopts = {ini['addopts'] if isinstance(ini['addopts'], str) else ' '.join(ini['addopts'])}")
            found.append(("convention", f"pytest is configured in `{path}` [tool.pytest.ini_options]"
                          + (f" ({'; '.join(details)})." if details else ".")))
        mypy_cfg = tool.get("mypy")
        if isinstance(mypy_cfg, dict) and mypy_cfg.get("strict") is True:
            found.append(("convention", f"mypy runs in strict mode (`{path}` [tool.mypy])."))
        project = data.get("project") if isinstance(data.get("project"), dict) else {}
        assert isinstance(project, dict)
        if isinstance(project.get("requires-python"), str):
            found.append(("convention", f"The project requires Python {project['requires-python']} (`{path}`)."))
        scripts = project.get("scripts")
        if isinstance(scripts, dict):
            for name, target in list(scripts.items())[:3]:
                found.append(("file_role", f"Console script `{name}` runs `{target}` (`{path}`)."))
    elif base == "package.json":
        try:
            data = json.loads(content)
        except ValueError:
            return found
        scripts = data.get("scripts") if isinstance(data, dict) else None
        if isinstance(scripts, dict):
            for name in ("test", "build", "lint", "typecheck", "dev", "start", "format"):
                value = scripts.get(name)
                if isinstance(value, str):
                    found.append(("command", f"`npm run {name}` runs `{_cap(value, 120)}` (`{path}`)."))
    return found


# --- the extractor --------------------------------------------------------------------------


@dataclass
class Draft:
    """A fact before the fact store sees it."""

    kind: str
    text: str
    source_ids: list[str]


@dataclass
class _Error:
    command: str
    key: str
    signature: str
    tests: list[str]
    source_ids: list[str]
    edits: list[tuple[str, str]] = field(default_factory=list)  # (path, change)
    fix_commands: list[str] = field(default_factory=list)
    resolved_by: str = ""


@dataclass
class CommandRun:
    command: str
    category: str | None
    result: str  # pass / ok / fail
    item_id: str


_COMMAND_PHRASES = {
    "test": "Run the tests with `{cmd}`.",
    "lint": "Lint with `{cmd}`.",
    "format": "Check formatting with `{cmd}`.",
    "typecheck": "Type-check with `{cmd}`.",
    "build": "Build with `{cmd}`.",
}
_PROJECT_INSTALL = re.compile(
    r"(?:pip3?|uv pip) install (?:-e|--editable)\b|uv sync\b|poetry install\b|(?:npm|pnpm|yarn|bun) (?:install|ci|i)$|"
    r"bundle install\b|go mod (?:tidy|download)\b|pip3? install -r\b"
)


def _change(old: str, new: str) -> str:
    before = [line.strip() for line in old.splitlines() if line.strip()]
    after = [line.strip() for line in new.splitlines() if line.strip()]
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag == "replace":
            return f"`{_cap(before[i1], _SNIPPET_CAP)}` → `{_cap(after[j1], _SNIPPET_CAP)}`"
        if tag == "delete":
            return f"removed `{_cap(before[i1], _SNIPPET_CAP)}`"
        if tag == "insert":
            return f"added `{_cap(after[j1], _SNIPPET_CAP)}`"
    return ""


def _edit_change(call: ToolCall) -> str:
    data = call.input if isinstance(call.input, dict) else {}
    edits = data.get("edits")
    if isinstance(edits, list) and edits and isinstance(edits[0], dict):
        data = edits[0]
    old, new = data.get("old_string", data.get("old_str")), data.get("new_string", data.get("new_str"))
    if isinstance(old, str) and isinstance(new, str):
        return _change(old, new)
    return ""


class RuleExtractor:
    """Walks a session in order.  ``prime`` replays items already extracted by an earlier job
    (state only: an error seen then can be fixed now); ``feed`` takes one window;
    ``finish`` returns the drafts, merged by text, in order of first evidence."""

    def __init__(self, project: str) -> None:
        self.root = project if project.startswith("/") else None
        self._drafts: dict[str, Draft] = {}
        self._emit_enabled = True
        self.open_errors: dict[str, _Error] = {}
        self.fixed: list[_Error] = []
        self.commands: list[CommandRun] = []
        self.changed: dict[str, str] = {}  # path → first item id that changed it
        self.read: dict[str, str] = {}
        self.roles: dict[str, tuple[str, str]] = {}  # path → (description, item id)
        self.prompts: list[Item] = []
        self.responses: list[Item] = []
        self.items = 0
        self.commits: list[str] = []
        self.fed = False

    # public ---------------------------------------------------------------------------
    def prime(self, items: Iterable[Item]) -> None:
        self._emit_enabled = False
        try:
            for item in items:
                self._take(item)
        finally:
            self._emit_enabled = True

    def feed(self, window: Iterable[Item]) -> None:
        self.fed = True
        for item in window:
            self._take(item)

    def finish(self) -> list[Draft]:
        if self.fed:  # facts about the whole session only when rules extracted some of it
            self._pair_tests()
        return [
            Draft(d.kind, _cap(d.text, FACT_TEXT_CAP), d.source_ids) for d in self._drafts.values()
        ]

    def rel(self, path: str) -> str:
        if self.root and path.startswith(self.root.rstrip("/") + "/"):
            return path[len(self.root.rstrip("/")) + 1:]
        return path[2:] if path.startswith("./") else path

    def in_project(self, path: str) -> bool:
        rel = self.rel(path)
        return not rel.startswith(("/", "..", "~")) and "site-packages" not in rel

    # internals --------------------------------------------------------------------------
    def _emit(self, kind: str, text: str, source_ids: Iterable[str]) -> None:
        if not self._emit_enabled:
            return
        if self.root:
            # Facts outlive checkouts: paths inside the project are said relative to it.
            text = text.replace(self.root.rstrip("/") + "/", "")
        key = text.casefold()
        draft = self._drafts.get(key)
        if draft is None:
            self._drafts[key] = Draft(kind, text, list(dict.fromkeys(source_ids)))
        else:
            draft.source_ids.extend(s for s in source_ids if s not in draft.source_ids)

    def _take(self, item: Item) -> None:
        self.items += 1
        if item.kind in SUMMARY_KINDS:
            return
        if item.kind == "tool_event":
            call = parse_tool(item)
            if call is not None:
                self._tool(call)
            return
        user = item.kind in ("prompt", "note")
        if item.kind == "prompt":
            self.prompts.append(item)
        elif item.kind == "response":
            self.responses.append(item)
        elif not user:
            return
        for kind, text in _sentence_facts(item, user):
            self._emit(kind, text, [item.id])

    def _tool(self, call: ToolCall) -> None:
        if call.is_shell:
            self._shell(call)
        elif call.is_edit:
            change = _edit_change(call)
            for path in call.paths:
                if not self.in_project(path):
                    continue
                rel = self.rel(path)
                self.changed.setdefault(rel, call.item.id)
                for err in self.open_errors.values():
                    err.edits.append((rel, change))
                    err.source_ids.append(call.item.id)
                self._describe(rel, call)
        elif call.is_read:
            for path in call.paths:
                if self.in_project(path):
                    rel = self.rel(path)
                    self.read.setdefault(rel, call.item.id)
                    self._describe(rel, call)

    def _describe(self, rel: str, call: ToolCall) -> None:
        content = _content_of(call)
        if not content.strip():
            return
        for kind, text in _config_facts(rel, content):
            self._emit(kind, text, [call.item.id])
        if rel in self.roles:
            return
        about = describe_file(rel, content)
        if about:
            self.roles[rel] = (about, call.item.id)
            self._emit("file_role", f"`{rel}` — {about}", [call.item.id])

    def _shell(self, call: ToolCall) -> None:
        whole = normalize_command(call.command, self.root)
        if not whole:
            return
        result = outcome(call)
        parts = split_command(whole)
        for part in parts:
            self.commands.append(CommandRun(part, category(part), result, call.item.id))
        if result == "fail":
            # In ``a && b`` the part that failed is the last one that is a real command.
            failing = next((p for p in reversed(parts) if category(p)), parts[-1])
            self._failed(failing, call)
            return
        for part in parts:
            self._succeeded(part, call)

    def _failed(self, command: str, call: ToolCall) -> None:
        signature, tests = error_signature(call.output)
        key = _program(command)
        current = self.open_errors.get(key)
        if current is not None:
            same = current.signature == signature or (set(current.tests) & set(tests))
            if not same and (not current.tests or not set(current.tests) & set(tests)):
                # A different failure now: the earlier one is gone (fixed by what came between).
                if current.edits or current.fix_commands:
                    current.resolved_by = command
                    current.source_ids.append(call.item.id)
                    self._fixed(current, also_failed=True)
                self.open_errors[key] = _Error(command, key, signature, tests, [call.item.id])
            else:
                current.source_ids.append(call.item.id)
            return
        self.open_errors[key] = _Error(command, key, signature, tests, [call.item.id])

    def _succeeded(self, command: str, call: ToolCall) -> None:
        cat = category(command)
        key = _program(command)
        err = self.open_errors.pop(key, None)
        if err is not None:
            err.resolved_by = command
            err.source_ids.append(call.item.id)
            self._fixed(err)
        elif cat == "setup":
            for other in self.open_errors.values():
                other.fix_commands.append(command)
                other.source_ids.append(call.item.id)
        if cat == "vcs" and command.startswith("git commit"):
            m = re.search(r"-m\s+(?:\"([^\"]+)\"|'([^']+)')", command)
            if m and not self.commits:
                self.commits.append(m.group(1) or m.group(2))
                self._emit("convention", f"Commit message style: `{_cap(m.group(1) or m.group(2), 100)}`.",
                           [call.item.id])
        self._command_fact(command, cat, call)

    def _command_fact(self, command: str, cat: str | None, call: ToolCall) -> None:
        if cat is None or cat == "vcs":
            return
        if cat == "test" and _SELECTIVE_TEST.search(" " + command + " "):
            return  # a run of one test is not how to run the tests
        if cat in _COMMAND_PHRASES:
            self._emit("command", _COMMAND_PHRASES[cat].format(cmd=command), [call.item.id])
        elif cat == "setup":
            if _PROJECT_INSTALL.search(command):
                self._emit("command", f"Install the project for development with `{command}`.", [call.item.id])
            else:
                self._emit("command", f"Dependency installed with `{command}`.", [call.item.id])
        elif cat == "run":
            first = next((line.strip() for line in _clean_output(call.output).splitlines() if line.strip()), "")
            shown = f" (prints `{first}`)" if first and len(first) <= 60 else ""
            self._emit("command", f"Run with `{command}`{shown}.", [call.item.id])
        m = re.search(r"platform \S+ -- Python (\d+\.\d+(?:\.\d+)?), pytest-(\d+\.\d+(?:\.\d+)?)", call.output)
        if m:
            self._emit("fact", f"Tests run on Python {m.group(1)} with pytest {m.group(2)}.", [call.item.id])

    def _fixed(self, err: _Error, *, also_failed: bool = False) -> None:
        self.fixed.append(err)
        text = fix_text(err, also_failed=also_failed)
        self._emit("error_fix", text, err.source_ids)

    def _pair_tests(self) -> None:
        touched = list(dict.fromkeys([*self.changed, *self.read]))
        by_stem: dict[str, list[str]] = {}
        for path in touched:
            if _test_target(path) is None:
                name = path.rsplit("/", 1)[-1]
                by_stem.setdefault(name.rsplit(".", 1)[0], []).append(path)
        for path in touched:
            target = _test_target(path)
            if target and target in by_stem:
                for module in by_stem[target][:1]:
                    sources = [self.changed.get(path) or self.read[path],
                               self.changed.get(module) or self.read[module]]
                    self._emit("file_role", f"`{path}` holds the tests for `{module}`.", sources)
        src = [p for p in touched if p.startswith("src/") and p.count("/") >= 2]
        if src:
            source = self.changed.get(src[0]) or self.read[src[0]]
            self._emit("convention", f"The code uses a src layout (`src/{src[0].split('/')[1]}/`).",
                       [source])


def fix_text(err: _Error, *, also_failed: bool = False) -> str:
    where = ""
    if err.tests:
        where = f" in {err.tests[0]}" + (f" (+{len(err.tests) - 1} more)" if len(err.tests) > 1 else "")
    head = f"`{err.command}` failed with `{err.signature}`{where}"
    fixes: list[str] = []
    if err.fix_commands:
        fixes.append("running " + ", ".join(f"`{c}`" for c in dict.fromkeys(err.fix_commands)))
    if err.edits:
        files = list(dict.fromkeys(path for path, _ in err.edits))
        changes = [c for _, c in err.edits if c]
        # An added import is rarely the fix itself: show the first other change.
        change = next((c for c in changes if "`import " not in c and "`from " not in c),
                      changes[0] if changes else "")
        fixes.append("editing " + ", ".join(files[:3]) + (f" ({change})" if change and len(files) == 1 else ""))
    if not fixes:
        return f"{head}; it passed on a re-run with no change in between (flaky?)."
    tail = (f"then `{err.resolved_by}` no longer showed it" if also_failed
            else f"then `{err.resolved_by}` passed")
    return f"{head}. Fixed by {' and '.join(fixes)}; {tail}."


def extract_rules(
    project: str, new_items: Sequence[Item], *, context: Sequence[Item] = ()
) -> tuple[list[Draft], RuleExtractor]:
    """Rule facts for ``new_items`` (cut into windows), with ``context`` (earlier items of
    the same session) replayed first so fixes can refer to errors seen before."""
    extractor = RuleExtractor(project)
    extractor.prime(context)
    for window in windows(new_items):
        extractor.feed(window)
    return extractor.finish(), extractor


# --- session summary ------------------------------------------------------------------------


@dataclass
class SummaryDraft:
    title: str
    narrative: str
    files: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


def _first_sentences(text: str, limit: int = 400) -> str:
    parts = sentences(text)
    out = ""
    for part in parts:
        if len(out) + len(part) + 1 > limit:
            break
        out = f"{out} {part}".strip()
    return out or _cap(text, limit)


def session_summary(
    project: str, items: Sequence[Item], *, facts: Sequence[str] = (), model_summary: str = "",
    seen: RuleExtractor | None = None,
) -> SummaryDraft:
    """The request, what was done (files changed, commands run, errors met and fixed) and how
    it ended, built from every memory of the session.  ``seen``: an extractor that has
    already walked exactly ``items`` (its state is reused instead of walking them again)."""
    ex = seen
    if ex is None:
        ex = RuleExtractor(project)
        ex.prime(items)
    request = _cap(ex.prompts[0].narrative or ex.prompts[0].title, 300) if ex.prompts else ""
    lines = [f"Request: {request or '(no prompt captured)'}"]
    follow = [_cap(p.narrative or p.title, 160) for p in ex.prompts[1:6]]
    if follow:
        lines.append("Follow-ups: " + " | ".join(follow))
    if model_summary:
        lines.append(f"Summary: {_cap(model_summary, 600)}")
    if ex.changed:
        lines.append("Files changed: " + ", ".join(list(ex.changed)[:20]))
    read_only = [p for p in ex.read if p not in ex.changed]
    if read_only:
        lines.append("Files read: " + ", ".join(read_only[:12]))
    runs: dict[str, list[str]] = {}
    for run in ex.commands:
        if run.category is None:
            continue
        runs.setdefault(run.command, []).append(run.result)
    if runs:
        shown = []
        for cmd, results in list(runs.items())[:12]:
            last = "failed" if results[-1] == "fail" else "passed" if results[-1] == "pass" else "ok"
            count = f" ×{len(results)}" if len(results) > 1 else ""
            shown.append(f"`{cmd}`{count} (last: {last})")
        lines.append("Commands: " + "; ".join(shown))
    for err in ex.fixed[:6]:
        lines.append("Fixed: " + fix_text(err).rstrip("."))
    for err in list(ex.open_errors.values())[:4]:
        lines.append(f"Unresolved: `{err.command}` fails with `{err.signature}`")
    if ex.responses:
        lines.append("Outcome: " + _first_sentences(ex.responses[-1].narrative or ex.responses[-1].title))
    elif ex.commands:
        final = ex.commands[-1]
        verdict = "failed" if final.result == "fail" else "succeeded"
        lines.append(f"Outcome: last command `{final.command}` {verdict}")
    stamps = [i.created_at for i in items if i.created_at]
    tools = sum(1 for i in items if i.kind == "tool_event")
    span = f" between {ids.iso(min(stamps))} and {ids.iso(max(stamps))}" if stamps else ""
    lines.append(f"Events: {len(items)} ({len(ex.prompts)} prompts, {tools} tool events){span}")
    concepts = ["summary"] + sorted({r.category for r in ex.commands if r.category})
    if ex.fixed or ex.open_errors:
        concepts.append("error")
    narrative = "\n".join(lines)
    if ex.root:
        narrative = narrative.replace(ex.root.rstrip("/") + "/", "")
    return SummaryDraft(
        title=_cap(f"Session summary: {request or 'session'}", 200),
        narrative=narrative,
        files=list(ex.changed)[:50],
        concepts=concepts,
        facts=list(facts)[:20],
    )


# --- project summary ------------------------------------------------------------------------

_RECENT_SESSIONS = """
SELECT id, first_request, last_event_at FROM session
WHERE project = ? AND first_request IS NOT NULL ORDER BY last_event_at DESC, id LIMIT ?
"""
_SESSION_COUNT = "SELECT count(*) FROM session WHERE project = ?"
_TOP_FACTS = """
SELECT text FROM fact WHERE project = ? AND status = 'active' AND kind = ?
ORDER BY json_array_length(source_ids) DESC, confidence DESC, created_at DESC, rowid DESC LIMIT ?
"""
_PROJECT_SECTIONS = (
    ("command", "How to work here", 8),
    ("convention", "Conventions", 8),
    ("decision", "Decisions", 6),
    ("error_fix", "Errors seen and fixed", 6),
    ("file_role", "Files", 12),
    ("fact", "Notes", 6),
)


def project_summary(conn: sqlite3.Connection, project: str) -> SummaryDraft:
    """The project at a glance, from its sessions and its best-evidenced active facts."""
    from aletheia.project import project_name

    name = project_name(project)
    count = int(conn.execute(_SESSION_COUNT, (project,)).fetchone()[0])
    lines = [f"Project: {name} ({project})", f"Sessions: {count}"]
    recent = conn.execute(_RECENT_SESSIONS, (project, 8)).fetchall()
    if recent:
        lines.append("Recent requests:")
        lines.extend(f"- {ids.iso(r['last_event_at'])[:10]} {_cap(r['first_request'], 140)}" for r in recent)
    all_facts: list[str] = []
    for kind, heading, limit in _PROJECT_SECTIONS:
        texts = [r[0] for r in conn.execute(_TOP_FACTS, (project, kind, limit))]
        if texts:
            lines.append(f"{heading}:")
            lines.extend(f"- {_cap(t, 240)}" for t in texts)
            all_facts.extend(texts)
    return SummaryDraft(
        title=f"Project summary: {name}",
        narrative="\n".join(lines),
        concepts=["project_summary"],
        facts=all_facts[:20],
    )

"""Outcomes of tool runs and error signatures: did it pass or fail, what line says what went
wrong, and the text of an error with what fixed it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aletheia.extract.commands import quiet
from aletheia.extract.items import cap
from aletheia.extract.tools import ToolCall

SIGNATURE_CAP = 160

_FAIL = re.compile(
    r"^=+ .*\b\d+ (?:failed|errors?)\b.*=+$|^FAILED |^ERROR (?:collecting|at|tests?/)|"
    r"\b\d+ failed(?:,| in )|Traceback \(most recent call last\)|^E {2,}\S|"
    r"^Found \d+ errors?\b|^\S+?:\d+(?::\d+)?: (?:error|E\d{3}|F\d{3}|W\d{3})\b|\berror TS\d+|"
    r"^npm ERR!|command not found|No module named |^(?:fatal|error|Error|ERROR)(?:\[\w+\])?: |"
    r"[Ee]xit (?:code|status) [1-9]|exited with (?:code|status) [1-9]|Segmentation fault|"
    r"^FAIL\s|make: \*\*\*|panicked at|BUILD FAILED|^error\[E\d+\]|"
    # ExUnit, RSpec, minitest, XCTest: "34 tests, 1 failure", "Executed 16 tests, with 2 failures"
    r"\b\d+ (?:tests?|examples?|runs?|properties|doctests?),(?: with)? (?:\d+ \w+, )*[1-9]\d* (?:failures?|errors?)\b",
    re.M,
)
_PASSED = re.compile(
    r"\b\d+ passed\b|All checks passed|Success: no issues found|Successfully installed|"
    r"^OK(?: \(|$)|^ok\s+\S+|test result: ok|\b0 errors?\b|[Bb]uild succeeded|"
    r"Compiled successfully|files? already formatted|Tests:\s+\d+ passed|"
    r"\b\d+ (?:tests?|examples?|runs?|properties|doctests?),(?: with)? (?:\d+ \w+, )*0 failures\b",
    re.M,
)
# What a test run prints when it ends, whatever the runner: "6 tests, 14 assertions, 0 failures",
# "Tests Passed: 6, Failed: 0", "12 passed in 0.4s", "test result: ok.", "Ran 9 tests in",
# "OK (12 tests", "Tests run: 9, Failures: 0".
TEST_SUMMARY = re.compile(
    r"\b\d+ (?:tests?|examples?|specs?|runs?),(?: with)? (?:\d+ \w+, )*\d+ (?:failures?|errors?)\b|"
    r"^\s*Tests? (?:Passed|passed|run):? \d+, (?:Failed|Failures|failed):? \d+|^\s*Tests:\s+\d+ (?:passed|failed)|"
    r"^=+ (?:\d+ (?:failed|errors?), )?\d+ passed\b|test result: (?:ok|FAILED)\. \d+ passed|"
    r"^Ran \d+ tests? in |^OK \(\d+ tests?, ",
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
_ELIXIR_EXC = re.compile(r"^\*\* \(([A-Z][\w.]*)\) (\S.*)$", re.M)
_RESULT_FIELDS = re.compile(r'^\{"(?:interrupted|isImage|returnCodeInterpretation|noOutputExpected)"')
_EXIT_PREFIX = re.compile(r"^(?:Error: )?[Ee]xit code \d+\s*\n?")


def clean_output(output: str) -> str:
    return _EXIT_PREFIX.sub("", output.replace("\r\n", "\n"))


def outcome(call: ToolCall) -> str:
    """``fail`` (the host said so, or the output shows an error), ``pass`` (the output shows
    success) or ``ok`` (no sign either way: nothing went wrong)."""
    if call.failed:
        return "fail"
    text = clean_output(call.output)
    if _FAIL.search(text):
        return "fail"
    if _PASSED.search(text):
        return "pass"
    return "ok"



def error_signature(output: str) -> tuple[str, list[str]]:
    """The line that says what went wrong, and the failing test ids (pytest)."""
    text = clean_output(output)
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
        m = _ELIXIR_EXC.search(text)  # ExUnit / Erlang: "** (DBConnection.OwnershipError) cannot find …"
        if m:
            message = f"{m.group(1)}: {m.group(2)}"
    if not message:
        m = _TS_LINE.search(text) or _DIAG_LINE.search(text)
        if m:
            message = f"{m.group(1)}: {m.group(2)}"
    if not message:
        m = _GENERIC.search(text)
        if m:
            message = m.group(0)
    if not message:
        # (not the line of the host's own result fields: `{"interrupted": false, "isImage": false}`)
        lines = [line for line in text.splitlines() if line.strip() and not _RESULT_FIELDS.match(line)]
        message = lines[-1] if lines else "failed"
    # The signature is shown inside backticks: its own backticks would end the span early.
    return cap(message.strip().replace("`", "'"), SIGNATURE_CAP), tests


@dataclass
class OpenError:
    command: str
    key: str
    signature: str
    tests: list[str]
    source_ids: list[str]
    edits: list[tuple[str, str]] = field(default_factory=list)  # (path, change)
    fix_commands: list[str] = field(default_factory=list)
    resolved_by: str = ""



def fix_text(err: OpenError, *, also_failed: bool = False) -> str:
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


def test_run_in(parts: list[str], categories: list[str | None], output: str) -> int | None:
    """Which of a command's ``parts`` ran the tests, told by its output alone: when none says so
    by its words (``lein kaocha``, ``pwsh -c 'Invoke-Pester ./tests'``) but the output ends as a
    test run does, the one part that does something (no part that looks around or commits)."""
    if any(c in ("test", "e2e") for c in categories) or not TEST_SUMMARY.search(clean_output(output)):
        return None
    unknown = [i for i, (p, c) in enumerate(zip(parts, categories, strict=True)) if c is None and not quiet(p)]
    return unknown[0] if len(unknown) == 1 else None

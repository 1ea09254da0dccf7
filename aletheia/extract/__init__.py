"""The offline rule extractor: a session's memories → facts a coding agent can use later,
a session summary, and the project summary.

Deterministic and stdlib-only.  It reads what the capture hooks store (``prompt``,
``tool_event`` with ``input: {json}\\n\\noutput:\\n…``, ``response``) and looks for five things:
commands that worked (``commands``), errors and what fixed them (``errors``), decisions and
causes stated by the assistant and conventions stated by the user (``statements``), and what
files are for (``files``).  Work is cut into windows (``items``); the state that spans windows
(an error waiting for its fix) lives in ``rules.RuleExtractor``.  ``session`` and ``project``
write the summaries.
"""

from __future__ import annotations

from aletheia.changes import sentences
from aletheia.extract.commands import category, normalize_command, split_command
from aletheia.extract.errors import error_signature, fix_text, outcome
from aletheia.extract.files import describe_file
from aletheia.extract.items import WINDOW_CHARS, WINDOW_ITEMS, Item, clip, windows
from aletheia.extract.project import project_summary
from aletheia.extract.rules import CommandRun, Draft, RuleExtractor, extract_rules
from aletheia.extract.session import SummaryDraft, session_summary
from aletheia.extract.tools import ToolCall, parse_tool

__all__ = [
    "WINDOW_CHARS", "WINDOW_ITEMS", "CommandRun", "Draft", "Item", "RuleExtractor",
    "SummaryDraft", "ToolCall", "category", "clip", "describe_file", "error_signature",
    "extract_rules", "fix_text", "normalize_command", "outcome", "parse_tool", "project_summary",
    "sentences", "session_summary", "split_command", "windows",
]

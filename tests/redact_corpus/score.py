"""Score the corpus through the real CLI: ``aletheia redact --jsonl`` in its own process.

A positive is caught only if no fragment of FRAGMENT characters of any of its secrets survives
anywhere in the output; a negative counts as changed if one byte differs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.redact_corpus.case import Case, leak

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "aletheia", "redact", "--jsonl"]


def run_cli(cases: Sequence[Case], cmd: Sequence[str] = CLI, timeout: float = 300) -> dict[str, str]:
    """Each case's text through one ``aletheia redact --jsonl`` process; {id: output}."""
    lines = "".join(json.dumps({"id": c.id, "text": c.text}, ensure_ascii=False) + "\n" for c in cases)
    proc = subprocess.run(list(cmd), input=lines.encode(), capture_output=True, timeout=timeout,
                          cwd=REPO, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    out: dict[str, str] = {}
    for line in proc.stdout.decode().splitlines():
        item = json.loads(line)
        out[item["id"]] = item["text"]
    return out


@dataclass
class Tally:
    positives: int = 0
    caught: int = 0
    negatives: int = 0
    changed: int = 0

    @property
    def recall(self) -> float:
        return self.caught / self.positives if self.positives else 1.0

    @property
    def changed_rate(self) -> float:
        return self.changed / self.negatives if self.negatives else 0.0


@dataclass
class Report:
    total: Tally = field(default_factory=Tally)
    families: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    kinds: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    misses: list[tuple[Case, str, str]] = field(default_factory=list)  # case, fragment, output
    changed: list[tuple[Case, str]] = field(default_factory=list)


def score(cases: Sequence[Case], outputs: dict[str, str]) -> Report:
    report = Report()
    for case in cases:
        out = outputs[case.id]
        tallies = (report.total, report.families[case.family], report.kinds[f"{case.family}/{case.kind}"])
        if case.positive:
            fragment = leak(case, out)
            for t in tallies:
                t.positives += 1
                t.caught += fragment is None
            if fragment is not None:
                report.misses.append((case, fragment, out))
        else:
            for t in tallies:
                t.negatives += 1
                t.changed += out != case.text
            if out != case.text:
                report.changed.append((case, out))
    return report


def _row(name: str, t: Tally) -> str:
    pos = f"{t.caught:>4}/{t.positives:<4} {100 * t.recall:6.1f}%" if t.positives else " " * 17
    neg = f"{t.changed:>3}/{t.negatives:<4} {100 * t.changed_rate:5.1f}%" if t.negatives else ""
    return f"  {name:<44} {pos}   {neg}"


def format_report(report: Report, *, kinds: bool = True, misses: int = 0) -> str:
    head = f"  {'':<44} {'caught/cases  recall':<20} {'changed/ordinary':<16}"
    lines = ["per family", head]
    lines += [_row(name, t) for name, t in sorted(report.families.items())]
    lines.append(_row("ALL", report.total))
    if kinds:
        lines += ["", "per kind", head]
        lines += [_row(name, t) for name, t in sorted(report.kinds.items())]
    for case, fragment, out in report.misses[:misses]:
        lines.append(f"\nMISS {case.id} ({case.family}) fragment {fragment!r}\n  in:  {case.text[:300]!r}\n  out: {out[:300]!r}")
    for case, out in report.changed[:misses]:
        lines.append(f"\nCHANGED {case.id} ({case.family})\n  in:  {case.text[:300]!r}\n  out: {out[:300]!r}")
    return "\n".join(lines)

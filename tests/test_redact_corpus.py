"""The whole redaction corpus through the CLI a user runs (``aletheia redact --jsonl``, a real
process): recall and ordinary snippets changed, as issue 13 asks, and per family."""

from __future__ import annotations

import pytest

from tests.redact_corpus import build
from tests.redact_corpus.score import Report, format_report, run_cli, score

CASES = build()


@pytest.fixture(scope="module")
def report() -> Report:
    return score(CASES, run_cli(CASES))


def test_recall_is_at_least_99_percent(report: Report) -> None:
    assert report.total.recall >= 0.99, format_report(report, kinds=False, misses=30)


def test_at_most_2_percent_of_ordinary_snippets_change(report: Report) -> None:
    assert report.total.changed_rate <= 0.02, format_report(report, kinds=False, misses=30)


def test_every_family_is_covered(report: Report) -> None:
    """No family falls far behind the total (a rule lost for a whole family shows here)."""
    weak = {name: t.recall for name, t in report.families.items() if t.positives and t.recall < 0.95}
    assert not weak, format_report(report, kinds=False, misses=30)


def test_a_second_seed_scores_the_same_forms(report: Report) -> None:
    """The same forms with other random secrets: the rules hold for the shapes, not the strings."""
    other = build(seed=7)
    again = score(other, run_cli(other))
    assert again.total.recall >= 0.985, format_report(again, kinds=False, misses=30)
    assert again.total.changed_rate <= 0.02, format_report(again, kinds=False, misses=30)

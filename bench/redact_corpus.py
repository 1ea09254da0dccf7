"""Redaction coverage on the corpus, through the CLI a user runs (``aletheia redact --jsonl``).

Prints recall (a case is caught only if no 8-character fragment of its secret survives) and the
share of ordinary snippets changed, per family and per kind, for one or more seeds (the same
forms with other random secrets). The corpus is written from the families of issue 13; the
figures that decide are re-measured on corpora written by others.

    python bench/redact_corpus.py [--seed 20240514 ...] [--misses 20] [--no-kinds]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.redact_corpus import SEED, build  # noqa: E402
from tests.redact_corpus.score import format_report, run_cli, score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, action="append", help=f"corpus seed (default {SEED})")
    parser.add_argument("--misses", type=int, default=0, help="print this many misses and changes")
    parser.add_argument("--no-kinds", action="store_true", help="families only")
    args = parser.parse_args()
    for seed in args.seed or [SEED]:
        cases = build(seed)
        start = time.perf_counter()
        outputs = run_cli(cases)
        took = time.perf_counter() - start
        report = score(cases, outputs)
        positives = [c for c in cases if c.positive]
        print(f"seed {seed}: {len(positives)} positive cases, {len({c.kind for c in positives})} kinds, "
              f"{len({c.family for c in positives})} families, {len(cases) - len(positives)} ordinary "
              f"snippets; one `aletheia redact --jsonl` process, {took:.2f} s")
        print(format_report(report, kinds=not args.no_kinds, misses=args.misses))
        print()


if __name__ == "__main__":
    main()

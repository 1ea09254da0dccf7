"""Ablation on the coding-session set: each ranking mechanism of ``aletheia.search`` switched
off (or a candidate switched on) in turn, on one store, beside the full ranking and plain BM25.

    .venv/bin/python bench/coding_ablate.py [--part dev|heldout|heldout-2|dev-extra|tunable]
        [--compress]
        [--by-project] [--variants NAME,...]

Fit on ``dev`` (the default) and ``dev-extra`` (the small projects of other stacks);
``tunable`` runs both (one store each) and reads a mechanism on all their projects at once.
``heldout`` and ``heldout-2`` (the second held-out part, four projects of other stacks) are
for reporting a decision already taken on the tunable parts and LoCoMo's halves, never for
choosing one.  Variants are the same switches as ``bench/locomo.py
--ablate`` (``locomo.ABLATIONS`` and ``locomo.CANDIDATES``), so one decision reads both sets.
``--compress`` runs the offline worker first (facts and summaries in the store: the product's
real state).

``--by-project`` adds a row per project and, per variant, the spread of its gain over plain
BM25 across projects (Hit@5: projects better / worse, mean and standard deviation).  A gain
that a few projects carry while others lose is what a two-project held-out read does not
reproduce: read the spread, not only the mean.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_data as cd  # noqa: E402
import coding_recall as recall  # noqa: E402
import coding_replay as cr  # noqa: E402
import locomo  # noqa: E402

PARTS = {"dev": ["dev"], "heldout": ["heldout"], cd.EXTRA_PART: [cd.EXTRA_PART],
         "tunable": ["dev", cd.EXTRA_PART], cd.HELDOUT2_PART: [cd.HELDOUT2_PART]}


def row(name: str, summary: dict[str, Any], who: str = "ours") -> str:
    a = summary["all"][who]
    ku = summary.get("knowledge-update", {}).get(who, {})
    tool = summary.get("tool-output-only", {}).get(who, {})
    return (f"{name:<30} Hit@5 {a['hit5']:5.1f}  MRR {a['mrr']:.3f}  sess@5 {a['sess5']:5.1f}  "
            f"ans@5 {a.get('ans5', 0.0):5.1f}  newest-first {ku.get('newest_first', 0.0):5.1f}  "
            f"tool-output Hit@5 {tool.get('hit5', 0.0):5.1f}")


def spread(per: dict[str, dict[str, Any]]) -> str:
    """How a variant's Hit@5 and MRR gains over plain BM25 spread across projects."""
    dh = [s["all"]["ours"]["hit5"] - s["all"]["bm25"]["hit5"] for s in per.values()]
    dm = [s["all"]["ours"]["mrr"] - s["all"]["bm25"]["mrr"] for s in per.values()]
    sd = statistics.stdev(dh) if len(dh) > 1 else 0.0
    return (f"{'':<30} over BM25 in {len(dh)} projects: Hit@5 better {sum(d > 0 for d in dh)} / "
            f"worse {sum(d < 0 for d in dh)}, mean {statistics.fmean(dh):+.1f} (sd {sd:.1f}); "
            f"MRR better {sum(d > 0 for d in dm)} / worse {sum(d < 0 for d in dm)}, "
            f"mean {statistics.fmean(dm):+.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--part", choices=tuple(PARTS), default="dev")
    parser.add_argument("--by-project", action="store_true",
                        help="a row per project, and the spread of each variant's gain")
    parser.add_argument("--variants", default="", help="comma-separated names (default: all)")
    parser.add_argument("--compress", action="store_true",
                        help="run the offline worker first (facts and summaries)")
    parser.add_argument("--semantic", action="store_true",
                        help="embed every memory and fuse semantic search (the [embed] extra)")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, Any]] = {"full ranking": {}, **locomo.ABLATIONS,
                                           **locomo.CANDIDATES}
    if args.variants:
        variants = {k: v for k, v in variants.items() if k in args.variants.split(",")}
    # results[variant][part] = every question's outcome
    results: dict[str, dict[str, list[recall.Scored]]] = {name: {} for name in variants}
    for part in PARTS[args.part]:
        data = cr.load_checked(part)
        questions = [q for q in data.questions if q.part == part]
        with cr.workdir(cr.default_tmp(), "aletheia-coding-ablate-", False) as root:
            replay, _meta = cr.build(data, root, "inprocess", jobs=1, restamp_times=True,
                                     run_compress=args.compress)
            if args.semantic:
                import os

                from aletheia import db, embed

                os.environ[embed.ENV_SWITCH] = "1"
                conn = db.connect()
                print(f"embedded {embed.embed_pending(conn)} memories ({embed.model_name()})")
                conn.close()
            for name, overrides in variants.items():
                with locomo.patched(overrides):
                    results[name][part] = recall.ask(replay, questions, 20)
    state = " (compressed)" if args.compress else ""
    first = True
    for name, by_part in results.items():
        per: dict[str, dict[str, Any]] = {}
        for part, scored in by_part.items():
            if first:
                print(f"part {part}{state}: {len(scored)} questions")
            summary = recall.summarise(scored)
            if first:
                print(row(f"plain BM25 ({part})", summary, "bm25"))
            print(row(name if len(by_part) == 1 else f"{name} ({part})", summary), flush=True)
            if args.by_project:
                for p in sorted({s.question.project for s in scored}):
                    per[p] = recall.summarise([s for s in scored if s.question.project == p])
                    if first:
                        print(row(f"  {p} plain BM25", per[p], "bm25"))
                    print(row(f"  {p}", per[p]))
        if per:
            print(spread(per), flush=True)
        first = False
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

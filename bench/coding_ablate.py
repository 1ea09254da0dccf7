"""Ablation on the coding-session set: each ranking mechanism of ``aletheia.search`` switched
off (or a candidate switched on) in turn, on one store, beside the full ranking and plain BM25.

    .venv/bin/python bench/coding_ablate.py [--part dev|heldout] [--compress] [--variants NAME,...]

Fit on ``dev`` (the default); ``heldout`` is for reporting a decision already taken on dev and
LoCoMo's halves, never for choosing one.  Variants are the same switches as
``bench/locomo.py --ablate`` (``locomo.ABLATIONS``), so one decision reads both sets.
``--compress`` runs the offline worker first (facts and summaries in the store: the product's
real state).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_recall as recall  # noqa: E402
import coding_replay as cr  # noqa: E402
import locomo  # noqa: E402


def row(name: str, summary: dict[str, Any], who: str = "ours") -> str:
    a = summary["all"][who]
    ku = summary.get("knowledge-update", {}).get(who, {})
    tool = summary.get("tool-output-only", {}).get(who, {})
    return (f"{name:<30} Hit@5 {a['hit5']:5.1f}  MRR {a['mrr']:.3f}  sess@5 {a['sess5']:5.1f}  "
            f"ans@5 {a.get('ans5', 0.0):5.1f}  newest-first {ku.get('newest_first', 0.0):5.1f}  "
            f"tool-output Hit@5 {tool.get('hit5', 0.0):5.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--part", choices=("dev", "heldout"), default="dev")
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
    data = cr.load_checked()
    questions = [q for q in data.questions if q.part == args.part]
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
        first = True
        for name, overrides in variants.items():
            with locomo.patched(overrides):
                summary = recall.summarise(recall.ask(replay, questions, 20))
            if first:
                print(f"part {args.part}{' (compressed)' if args.compress else ''}: "
                      f"{len(questions)} questions")
                print(row("plain BM25", summary, "bm25"))
                first = False
            print(row(name, summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

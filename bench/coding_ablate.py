"""Ablation on the coding-session set: each ranking mechanism of ``aletheia.search`` switched
off (or a candidate switched on) in turn, on one store, beside the full ranking and plain BM25.

    .venv/bin/python bench/coding_ablate.py [--part dev|heldout|heldout-2|heldout-3|heldout-4|dev-extra|dev-3|dev-4|dev-5|dev-6|dev-7|dev-8|dev-9|dev-10|tunable]
        [--compress] [--by-project] [--variants NAME,...] [--set NAME=VALUE,...]
    .venv/bin/python bench/coding_ablate.py --part tunable --lopo [--variants NAME,...]

Fit on ``dev`` (the default), ``dev-extra`` (the small projects of other stacks), ``dev-3``,
``dev-4``, ``dev-5``, ``dev-6``, ``dev-7``, ``dev-8`` and ``dev-9`` (four projects each, written
as hard as real sessions); ``tunable`` runs all nine (one store each) and reads a mechanism on
all their projects at once.
``heldout``, ``heldout-2``, ``heldout-3`` and ``heldout-4`` (held-out parts of four projects of other stacks) are
for reporting a decision already taken on the tunable parts and LoCoMo's halves, never for
choosing one; so is ``dev-10``, stop 31's fresh yardstick, in that stop.  Variants are the same switches as ``bench/locomo.py
--ablate`` (``locomo.ABLATIONS`` and ``locomo.CANDIDATES``), so one decision reads both sets.
``--compress`` runs the offline worker first (facts and summaries in the store: the product's
real state).

``--by-project`` adds a row per project and, per variant, the spread of its gain over plain
BM25 across projects (Hit@5: projects better / worse, mean and standard deviation).  A gain
that a few projects carry while others lose is what a two-project held-out read does not
reproduce: read the spread, not only the mean.

``--lopo`` (with ``--part tunable``) runs both states (without and with ``--compress``) and
reads the variants leave-one-project-out: for each project, the variant with the best gain
over plain BM25 on the *other* projects (mean over projects and both states of the Hit@5 gain
plus 100 x the MRR gain) is chosen, then read on the project left out.  The per-project reads
of those choices (wins / losses against BM25, and the mean) say what choosing among these
variants is worth on a project it was not fitted on; a variant that the choice keeps picking
is one that generalises.  ``--set NAME=VALUE,...`` applies constants to every variant (a new
base to read the others against).  ``--talk-only`` keeps each session's prompts and answers
(bench/coding_talk.py: the shape an outside evaluation replays).  ``--moved`` lists, per variant,
the questions whose first answering hit or newest-first outcome differs from the first variant's
(the full ranking unless ``--variants`` says otherwise), with plain BM25's rank beside: a gain
of one point is often one question, and this says which (read it on the tunable parts only).
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
from coding_talk import talk_only  # noqa: E402

STATES = {"plain": False, "compressed": True}
PARTS = {"dev": ["dev"], "heldout": ["heldout"], cd.EXTRA_PART: [cd.EXTRA_PART],
         cd.DEV3_PART: [cd.DEV3_PART], cd.DEV4_PART: [cd.DEV4_PART], cd.DEV5_PART: [cd.DEV5_PART],
         cd.DEV6_PART: [cd.DEV6_PART], cd.DEV7_PART: [cd.DEV7_PART],
         cd.DEV8_PART: [cd.DEV8_PART], cd.DEV9_PART: [cd.DEV9_PART],
         cd.DEV10_PART: [cd.DEV10_PART],
         "tunable": list(cd.TUNABLE_PARTS),
         cd.HELDOUT2_PART: [cd.HELDOUT2_PART],
         cd.HELDOUT3_PART: [cd.HELDOUT3_PART], cd.HELDOUT4_PART: [cd.HELDOUT4_PART]}


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
    parser.add_argument("--lopo", action="store_true",
                        help="both states, and a leave-one-project-out read of the choice")
    parser.add_argument("--set", default="", help="NAME=VALUE,... applied to every variant")
    parser.add_argument("--talk-only", action="store_true",
                        help="the sessions' prompts and answers only (bench/coding_talk.py)")
    parser.add_argument("--moved", action="store_true",
                        help="list the questions each variant moves against the first variant")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, Any]] = {"full ranking": {}, **locomo.ABLATIONS,
                                           **locomo.CANDIDATES,
                                           **(locomo.HYBRID_ABLATIONS if args.semantic else {}),
                                           **(locomo.HYBRID_CANDIDATES if args.semantic else {})}
    if args.variants:
        try:
            variants = locomo.pick(variants, args.variants)
        except ValueError as exc:
            parser.error(str(exc))
    base = _settings(args.set)
    variants = {k: {**base, **v} for k, v in variants.items()}
    if args.lopo:
        if args.part != "tunable":
            parser.error("--lopo reads the tunable projects: use --part tunable")
        return lopo(variants, args.semantic, args.talk_only)
    # results[variant][part] = every question's outcome
    results: dict[str, dict[str, list[recall.Scored]]] = {name: {} for name in variants}
    for part in PARTS[args.part]:
        data = cr.load_checked(part)
        if args.talk_only:
            data = talk_only(data)
        questions = [q for q in data.questions if q.part == part]
        with cr.workdir(cr.default_tmp(), "aletheia-coding-ablate-", False) as root:
            replay, _meta = cr.build(data, root, "inprocess", jobs=1, restamp_times=True,
                                     run_compress=args.compress)
            if args.semantic:
                _embed_store()
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
    if args.moved:
        print_moved(results)
    return 0


def print_moved(results: dict[str, dict[str, list[recall.Scored]]]) -> None:
    """Each variant's questions whose outcome differs from the first variant's."""
    names = list(results)
    if len(names) < 2:
        return
    print(f"\nquestions moved against {names[0]} (first answering rank, newest-first; plain BM25):")
    for name in names[1:]:
        for part, scored in results[name].items():
            base = {s.question.id: s.ours for s in results[names[0]][part]}
            for s in scored:
                was = base[s.question.id]
                if (was.first, was.newest_first) != (s.ours.first, s.ours.newest_first):
                    nf = (f" newest-first {was.newest_first} -> {s.ours.newest_first}"
                          if s.question.category == "knowledge-update" else "")
                    print(f"  {name[:34]:<34} {s.question.id:<8} {s.question.category:<17} "
                          f"{was.first} -> {s.ours.first}{nf} (bm25 {s.bm25.first})  "
                          f"{s.question.text[:70]}")


def _embed_store() -> None:
    """Embed every memory of the current store and switch semantic search on (the extra)."""
    import os

    from aletheia import db, embed

    os.environ[embed.ENV_SWITCH] = "1"
    conn = db.connect()
    print(f"embedded {embed.embed_pending(conn)} memories ({embed.model_name()})", flush=True)
    conn.close()


def _settings(text: str) -> dict[str, Any]:
    """``NAME=VALUE,...`` (values as Python literals) → constants of ``aletheia.search``."""
    import ast

    out: dict[str, Any] = {}
    for item in filter(None, (t.strip() for t in text.split(";" if ";" in text else ","))):
        name, _, value = item.partition("=")
        out[name.strip()] = ast.literal_eval(value.strip())
    return out


def run_states(variants: dict[str, dict[str, Any]], talk: bool = False, semantic: bool = False
               ) -> dict[str, dict[str, list[recall.Scored]]]:
    """results[variant][state]: every tunable question's outcome, in both states."""
    results: dict[str, dict[str, list[recall.Scored]]] = {n: {} for n in variants}
    for state, compressed in STATES.items():
        for part in PARTS["tunable"]:
            data = cr.load_checked(part)
            if talk:
                data = talk_only(data)
            questions = [q for q in data.questions if q.part == part]
            with cr.workdir(cr.default_tmp(), "aletheia-coding-lopo-", False) as root:
                replay, _meta = cr.build(data, root, "inprocess", jobs=1, restamp_times=True,
                                         run_compress=compressed)
                if semantic:
                    _embed_store()
                for name, overrides in variants.items():
                    with locomo.patched(overrides):
                        results[name].setdefault(state, []).extend(
                            recall.ask(replay, questions, 20))
    return results


def gains(scored: list[recall.Scored]) -> dict[str, tuple[float, float]]:
    """Per project: (Hit@5 gain over plain BM25 in points, MRR gain)."""
    out = {}
    for p in sorted({s.question.project for s in scored}):
        a = recall.summarise([s for s in scored if s.question.project == p])["all"]
        out[p] = (a["ours"]["hit5"] - a["bm25"]["hit5"], a["ours"]["mrr"] - a["bm25"]["mrr"])
    return out


def merit(g: dict[str, dict[str, tuple[float, float]]], projects: list[str]) -> float:
    """The choice's criterion: mean over ``projects`` and both states of the Hit@5 gain plus
    100 x the MRR gain (a point of Hit@5 weighs as much as 0.01 of MRR)."""
    vals = [g[state][p][0] + 100 * g[state][p][1] for state in g for p in projects]
    return statistics.fmean(vals)


def lopo(variants: dict[str, dict[str, Any]], semantic: bool = False, talk: bool = False) -> int:
    results = run_states(variants, talk, semantic)
    g = {name: {state: gains(scored) for state, scored in by_state.items()}
         for name, by_state in results.items()}
    projects = sorted(next(iter(next(iter(g.values())).values())))
    print("Hit@5 / MRR gain over plain BM25 per project (plain | compressed):")
    print(f"{'variant':<34}" + "".join(f"{p[:10]:>22}" for p in projects) + "   merit")
    for name, by_state in g.items():
        cells = "".join(
            f"{by_state['plain'][p][0]:>+6.1f}/{by_state['plain'][p][1]:+.3f}"
            f"|{by_state['compressed'][p][0]:>+5.1f}" for p in projects)
        print(f"{name[:34]:<34}{cells}   {merit(by_state, projects):+6.2f}")
    print("mean gain over plain BM25 across the projects, per state (projects with a lower Hit@5):")
    for name, by_state in g.items():
        print(f"  {name[:34]:<35}" + "; ".join(
            f"{state} Hit@5 {statistics.fmean(by_state[state][p][0] for p in projects):+5.2f} "
            f"MRR {statistics.fmean(by_state[state][p][1] for p in projects):+.4f} "
            f"({sum(by_state[state][p][0] < 0 for p in projects)} lower)" for state in STATES))
    for state in STATES:
        base = results[next(iter(results))][state]
        print(f"plain BM25 ({state}): " + ", ".join(
            f"{p} {recall.summarise([s for s in base if s.question.project == p])['all']['bm25']['hit5']:.1f}"
            f"/{recall.summarise([s for s in base if s.question.project == p])['all']['bm25']['mrr']:.3f}"
            for p in projects))
    print("\nleave-one-project-out: chosen on the other projects, read on the one left out")
    reads: dict[str, list[tuple[float, float]]] = {state: [] for state in STATES}
    for p in projects:
        rest = [x for x in projects if x != p]
        best = max(g, key=lambda n: (merit(g[n], rest), n == "full ranking"))
        line = []
        for state in STATES:
            dh, dm = g[best][state][p]
            reads[state].append((dh, dm))
            line.append(f"{state} Hit@5 {dh:+5.1f} MRR {dm:+.3f}")
        print(f"  {p:<12} chose {best[:34]:<34} " + "; ".join(line))
    for state, rs in reads.items():
        dh = [r[0] for r in rs]
        dm = [r[1] for r in rs]
        print(f"  {state:<11} held-out reads: Hit@5 better {sum(d > 0 for d in dh)} / worse "
              f"{sum(d < 0 for d in dh)}, mean {statistics.fmean(dh):+.1f}; MRR better "
              f"{sum(d > 0 for d in dm)} / worse {sum(d < 0 for d in dm)}, mean "
              f"{statistics.fmean(dm):+.3f}")
    chosen = max(g, key=lambda n: (merit(g[n], projects), n == "full ranking"))
    print(f"chosen on all {len(projects)}: {chosen}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

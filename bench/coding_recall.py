"""Recall on the coding-session set (bench/data/coding/): the questions a later session of a
project asks, through the one search service, beside plain FTS5 BM25 in the same run.

    .venv/bin/python bench/coding_recall.py [--part dev|heldout|all|dev-extra|dev-3|heldout-2|heldout-3|heldout-4] [--hooks]
        [--compress]
        [--json]

1. All four projects' sessions go into a fresh ALETHEIA_HOME (a temp dir; /dev/shm when it
   exists), each project in its own git repository so the project key is what the hook
   resolves.  Capture (``--capture``):
   - ``inprocess`` (default, a few seconds): the capture pipeline the hook runs
     (``aletheia.capture.ingest``) per event, in this process — the same adapter, redaction
     and write code as the hook process, without the process shell and its start;
   - ``cli`` (``--hooks``, ~1-2 min): a real ``aletheia hook claude-code <Event>`` process
     per event, several projects side by side;
   - ``installed``: the command ``aletheia install claude-code --project`` writes, via ``sh -c``.
   Then the spool is replayed, every gold event is found in the store (by session, order and
   content; a missing one stops the run), and memories get their event's time from the data
   (``--no-restamp`` keeps capture time).  ``--compress`` runs ``aletheia compress`` (offline).
2. Every question of the chosen part is asked through ``aletheia.search.search`` scoped to its
   project (the call ``aletheia search`` makes), and through plain BM25 (bench/plain_bm25.py)
   over the same memories.  A fact hit counts for the memories it was extracted from.

Figures per part and category (answerable questions; ``no-answer`` ones only report how often
something came back anyway):
- Hit@5: a gold event among the top 5 hits;  MRR over the top ``--depth`` hits;
- sess@5: a hit from a gold session in the top 5 (the coarser figure);
- ans@5 (questions with a short answer): the answer's words are in the top 5 hits' text.  Gold
  names the events that settle a question, not every event that mentions the answer in
  passing, so ans@5 is the lenient twin of Hit@5;
- newest-first (knowledge updates): the best-ranked current event is in the top 5 and above
  every superseded one (with how many questions only one of the two ranks so: ``--misses``
  names them, with each ranking's rank of the first current and first superseded hit);
  all@5 (multi-session): every gold session has a gold event in the top 5.
- plain BM25 ahead: the questions where the baseline has what we do not (a gold event in its
  top 5, or newest-first), and of them those where plain BM25 over the project's memories alone
  is not ahead: those it won on the other projects' word counts in the store, which a
  project-scoped search never reads (it ranks on the project's own statistics by design).

The dev part (ledgerline, pulseboard) may be tuned on; the held-out part (tidewatch,
stockroom) is only reported on.  ``--misses`` writes per-question outcomes: read them for dev.
``--part dev-extra``, ``--part dev-3``, ``--part heldout-2``, ``--part heldout-3`` and ``--part
heldout-4`` replay the folder of that part alone (its projects in their own store): dev-extra,
dev-3, dev-4, dev-5, dev-6, dev-7, dev-8 and dev-9 (four projects each, written as hard as real
sessions) are tuned on like dev;
heldout-2, heldout-3 and heldout-4 (four more projects of other stacks each) are a second, a third
and a fourth held-out part, report-only like heldout: never tune on them or read their misses.
dev-10 is stop 31's fresh yardstick: in that stop nobody tunes on it or reads its misses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_data as cd  # noqa: E402
import coding_replay as cr  # noqa: E402
from coding_talk import talk_only  # noqa: E402

TOP = 5


@dataclass
class Outcome:
    """One question's result under one ranking."""

    first: int | None  # 1-based rank of the first hit holding a gold event
    session_hit: bool
    newest_first: bool | None = None  # knowledge updates only
    old: int | None = None  # knowledge updates: 1-based rank of the first superseded hit
    answer_seen: bool | None = None  # the short answer is in the top hits' text (if it has one)
    all_sessions: bool | None = None  # multi-session only
    returned: int = 0
    ms: float = 0.0

    @property
    def hit(self) -> bool:
        return self.first is not None and self.first <= TOP

    @property
    def rr(self) -> float:
        return 1.0 / self.first if self.first else 0.0


@dataclass
class Scored:
    question: cd.Question
    ours: Outcome
    bm25: Outcome
    ours_top: list[str] = field(default_factory=list)
    bm25_top: list[str] = field(default_factory=list)
    # Plain BM25 over the project's own memories alone (its statistics too): what the baseline
    # finds without other projects' word counts, which a project-scoped search never reads.
    bm25_own: Outcome | None = None

    @property
    def lost(self) -> bool:
        """Plain BM25 has what we do not: a gold event in its top 5 where ours has none, or
        (knowledge updates) the current answer first where ours has not."""
        return _ahead(self.bm25, self.ours)

    @property
    def lost_to_statistics(self) -> bool:
        """``lost``, and plain BM25 over the project's own memories is not ahead: its win
        came from the other projects' word counts (IDF, mean lengths) in the store."""
        return self.lost and self.bm25_own is not None and not _ahead(self.bm25_own, self.ours)

    def row(self) -> dict[str, Any]:
        """The question's outcome as ``--misses`` writes it (one JSON line)."""
        q = self.question
        return {"id": q.id, "part": q.part, "category": q.category, "q": q.text,
                "ours_first": self.ours.first, "bm25_first": self.bm25.first,
                "newest_first": self.ours.newest_first,
                "bm25_newest_first": self.bm25.newest_first,
                "ours_old": self.ours.old, "bm25_old": self.bm25.old, "lost": self.lost,
                "bm25_own_first": self.bm25_own.first if self.bm25_own else None,
                "lost_to_statistics": self.lost_to_statistics,
                "ours_top": self.ours_top, "bm25_top": self.bm25_top}


def _ahead(base: Outcome, ours: Outcome) -> bool:
    return (base.hit and not ours.hit) or (bool(base.newest_first) and not ours.newest_first)


def _first(ranked: list[set[str]], wanted: set[str]) -> int | None:
    for i, ids in enumerate(ranked, 1):
        if ids & wanted:
            return i
    return None


def score(q: cd.Question, ranked: list[set[str]], sessions: list[str | None],
          replay: cr.Replay, ms: float) -> Outcome:
    """``ranked``: the memory ids each hit stands for, best first; ``sessions``: each hit's
    session id."""
    m = replay.memory_of
    gold = {m[k] for k in q.gold}
    sess_uuid = {s.name: s.uuid for p in replay.data.projects.values() for s in p.sessions}
    gold_sessions = {sess_uuid[name] for name in q.gold_sessions}
    out = Outcome(_first(ranked, gold), any(s in gold_sessions for s in sessions[:TOP]),
                  returned=len(ranked), ms=ms)
    if q.category == "knowledge-update":
        current = _first(ranked, gold)
        old = _first(ranked, {m[k] for k in q.superseded})
        out.newest_first = current is not None and current <= TOP and (old is None or current < old)
        out.old = old
    if q.category == "multi-session":
        top = set().union(*ranked[:TOP]) if ranked else set()
        by_session: dict[str, set[str]] = defaultdict(set)
        for k in q.gold:
            by_session[k.split(":", 1)[0]].add(m[k])
        out.all_sessions = all(ids & top for ids in by_session.values())
    return out


def _field(hit: Any, name: str) -> Any:
    """A hit's field, whether the service returns objects or dicts."""
    return hit.get(name) if isinstance(hit, dict) else getattr(hit, name, None)


def ask(replay: cr.Replay, questions: list[cd.Question], depth: int) -> list[Scored]:
    from plain_bm25 import PlainBM25

    from aletheia import db
    from aletheia.search import SearchQuery, search

    conn = db.connect()
    plain = PlainBM25.from_store(conn)
    own: dict[str, PlainBM25] = {}
    mem_session = dict(conn.execute("SELECT id, session_id FROM memory").fetchall())
    mem_text = {r[0]: f"{r[1]}\n{r[2]}" for r in conn.execute("SELECT id, title, narrative FROM memory")}
    out: list[Scored] = []
    try:
        for q in questions:
            key = replay.keys[q.project]
            start = time.perf_counter()
            hits = search(conn, SearchQuery(q=q.text, project=key, limit=depth))
            ms = (time.perf_counter() - start) * 1000
            ranked = [{_field(h, "id")} if _field(h, "type") == "memory"
                      else set(_field(h, "source_ids") or []) for h in hits]
            sessions = [_field(h, "session_id") for h in hits]
            ours = score(q, ranked, sessions, replay, ms) if q.gold else \
                Outcome(None, False, returned=len(hits), ms=ms)
            if q.answer or q.answer_re:
                shown = [mem_text.get(str(_field(h, "id")), "") if _field(h, "type") == "memory"
                         else str(_field(h, "title")) for h in hits[:TOP]]
                ours.answer_seen = q.answered_by("\n".join(shown))
            start = time.perf_counter()
            ids = plain.search(q.text, key, depth)
            ms = (time.perf_counter() - start) * 1000
            base = score(q, [{i} for i in ids], [mem_session.get(i) for i in ids], replay, ms) \
                if q.gold else Outcome(None, False, returned=len(ids), ms=ms)
            if q.answer or q.answer_re:
                base.answer_seen = q.answered_by("\n".join(mem_text.get(i, "") for i in ids[:TOP]))
            own_base = None
            if q.gold:
                if key not in own:
                    own[key] = PlainBM25.from_store(conn, key)
                own_ids = own[key].search(q.text, key, depth)
                own_base = score(q, [{i} for i in own_ids], [mem_session.get(i) for i in own_ids],
                                 replay, 0.0)
            out.append(Scored(q, ours, base, [str(_field(h, "title"))[:80] for h in hits[:TOP]],
                              [mem_text.get(i, "").split("\n", 1)[0][:80] for i in ids[:TOP]],
                              own_base))
    finally:
        plain.close()
        for p in own.values():
            p.close()
        conn.close()
    return out


def _pct(values: list[bool]) -> float:
    return round(100 * statistics.fmean(1.0 if v else 0.0 for v in values), 1) if values else 0.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))] if ordered else 0.0


def summarise(scored: list[Scored]) -> dict[str, Any]:
    groups: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        groups[s.question.category].append(s)
        if s.question.category != "no-answer":
            groups["all"].append(s)
    rows: dict[str, Any] = {}
    for name in (*cd.CATEGORIES, "all"):
        items = groups.get(name, [])
        if not items:
            continue
        row: dict[str, Any] = {"n": len(items)}
        for who in ("ours", "bm25"):
            outs = [getattr(s, who) for s in items]
            if name == "no-answer":
                row[who] = {"returned_any": _pct([o.returned > 0 for o in outs])}
                continue
            row[who] = {
                "hit5": _pct([o.hit for o in outs]),
                "mrr": round(statistics.fmean(o.rr for o in outs), 3),
                "sess5": _pct([o.session_hit for o in outs]),
            }
            seen = [o.answer_seen for o in outs if o.answer_seen is not None]
            if seen:
                row[who]["ans5"] = _pct(seen)
                row[who]["ans5_n"] = len(seen)
            ku = [o.newest_first for o in outs if o.newest_first is not None]
            if ku:
                row[who]["newest_first"] = _pct(ku)
            ms = [o.all_sessions for o in outs if o.all_sessions is not None]
            if ms:
                row[who]["all5"] = _pct(ms)
        rows[name] = row
    ku_all = [s for s in scored if s.question.category == "knowledge-update"]
    if ku_all:
        rows["all"]["ours"]["newest_first"] = _pct([bool(s.ours.newest_first) for s in ku_all])
        rows["all"]["bm25"]["newest_first"] = _pct([bool(s.bm25.newest_first) for s in ku_all])
        # (where the two disagree: the questions to read, not only the shares)
        rows["knowledge-update"]["only"] = {
            "ours": sum(bool(s.ours.newest_first) and not s.bm25.newest_first for s in ku_all),
            "bm25": sum(bool(s.bm25.newest_first) and not s.ours.newest_first for s in ku_all)}
    ms_ours = [s.ours.ms for s in scored]
    ms_bm25 = [s.bm25.ms for s in scored]
    rows["ms_per_query"] = {
        "ours": {"mean": round(statistics.fmean(ms_ours), 2), "p95": round(_p95(ms_ours), 2)},
        "bm25": {"mean": round(statistics.fmean(ms_bm25), 2), "p95": round(_p95(ms_bm25), 2)},
    }
    return rows


def print_table(part: str, info: dict[str, Any], rows: dict[str, Any]) -> None:
    print(f"\n== part {part}: {', '.join(info['projects'])} — {info['sessions']} sessions, "
          f"{info['events']} events, {info['questions']} questions ==")
    print(f"{'category':<18} {'n':>4}  {'Hit@5 ours':>10} {'bm25':>6}  {'MRR ours':>8} {'bm25':>6}"
          f"  {'sess@5 ours':>11} {'bm25':>6}  {'ans@5 ours':>10} {'bm25':>6}  extra (ours / bm25)")
    for name in (*cd.CATEGORIES, "all"):
        row = rows.get(name)
        if row is None:
            continue
        o, b = row["ours"], row["bm25"]
        if name == "no-answer":
            print(f"{name:<18} {row['n']:>4}  returned something anyway: "
                  f"{o['returned_any']:.1f}% / {b['returned_any']:.1f}%")
            continue
        extra = []
        if "newest_first" in o:
            extra.append(f"newest-first {o['newest_first']:.1f}% / {b['newest_first']:.1f}%")
        if "only" in row:
            extra.append(f"(only ours {row['only']['ours']}, only bm25 {row['only']['bm25']})")
        if "all5" in o:
            extra.append(f"all@5 {o['all5']:.1f}% / {b['all5']:.1f}%")
        label = "all answerable" if name == "all" else name
        ans = (f"{o['ans5']:>9.1f}% {b['ans5']:>5.1f}%" if "ans5" in o else f"{'-':>10} {'-':>6}")
        print(f"{label:<18} {row['n']:>4}  {o['hit5']:>9.1f}% {b['hit5']:>5.1f}%  {o['mrr']:>8.3f} "
              f"{b['mrr']:>6.3f}  {o['sess5']:>10.1f}% {b['sess5']:>5.1f}%  {ans}  {'; '.join(extra)}")
    t = rows["ms_per_query"]
    print(f"ms/query: ours mean {t['ours']['mean']:.2f} p95 {t['ours']['p95']:.2f}; "
          f"bm25 mean {t['bm25']['mean']:.2f} p95 {t['bm25']['p95']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Recall on the coding-session set, beside plain BM25 (see the module doc).")
    parser.add_argument("--part", choices=("dev", "heldout", "all", *cd.FOLDERS),
                        default="all",
                        help="dev-extra: the small projects of other stacks, dev-3, dev-4, "
                             "dev-5, dev-6, dev-7, dev-8, dev-9: four projects each as hard as "
                             "real sessions (all tuned on like dev); "
                             "heldout-2, heldout-3, heldout-4: the second to fourth held-out parts "
                             "(report only); dev-10: stop 31's fresh yardstick (not tuned on "
                             "in that stop)")
    parser.add_argument("--capture", choices=cr.MODES, default="inprocess",
                        help="inprocess (default: the hook's capture pipeline in this "
                             "process, seconds); "
                             "cli (a real `aletheia hook claude-code <Event>` process per "
                             "event); installed (the command `aletheia install` writes)")
    parser.add_argument("--hooks", action="store_const", const="cli", dest="capture",
                        help="same as --capture cli: real hook processes in git repositories")
    parser.add_argument("--jobs", type=int, default=3, help="projects captured side by side "
                        "with hook processes (default 3)")
    parser.add_argument("--compress", action="store_true", help="run `aletheia compress` first")
    parser.add_argument("--no-restamp", action="store_true",
                        help="keep capture times instead of the sessions' own (weeks apart)")
    parser.add_argument("--depth", type=int, default=20, help="hits read per question (MRR@depth)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--misses", type=Path, default=None,
                        help="write each question's outcome here (JSON lines; read dev only)")
    parser.add_argument("--tmp", default=cr.default_tmp(), help="where the temp store goes")
    parser.add_argument("--keep", action="store_true", help="keep the temp store and print its path")
    parser.add_argument("--talk-only", action="store_true",
                        help="prompts and assistant answers only, no tool events (the shape of "
                             "an outside evaluation; see bench/coding_talk.py)")
    args = parser.parse_args(argv)

    parts = ["dev", "heldout"] if args.part == "all" else [args.part]
    try:
        data = cr.load_checked(args.part)
        if args.talk_only:
            data = talk_only(data)
        questions = [q for q in data.questions if q.part in parts]
        with cr.workdir(args.tmp, "aletheia-coding-", args.keep) as root:
            replay, meta = cr.build(data, root, args.capture, jobs=args.jobs,
                                    restamp_times=not args.no_restamp,
                                    run_compress=args.compress)
            meta["depth"] = args.depth
            from aletheia import db, embed

            conn = db.connect()
            meta["semantic"] = bool(embed.enabled(conn))
            conn.close()
            scored = ask(replay, questions, args.depth)
    except cr.ReplayError as exc:
        print(f"coding_recall: {exc}", file=sys.stderr)
        return 1
    counts = cd.counts(data)
    result: dict[str, Any] = {"meta": meta, "parts": {}}
    for part in parts:
        result["parts"][part] = summarise([s for s in scored if s.question.part == part])
    if args.misses:
        with args.misses.open("w", encoding="utf-8") as fh:
            for s in scored:
                fh.write(json.dumps(s.row()) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"capture: {args.capture} ({meta['events_sent']} hook events in {meta['capture_s']} s); "
          f"store: {meta['store']['memories']} memories, {meta['store']['facts']} facts; "
          f"compress: {'yes' if args.compress else 'no'}; semantic: {meta['semantic']}; "
          f"times: {'from the data' if not args.no_restamp else 'capture time'}")
    for part in parts:
        print_table(part, counts[part], result["parts"][part])
        lost = [s for s in scored if s.question.part == part and s.lost]
        stats = [s.question.id for s in lost if s.lost_to_statistics]
        print(f"plain BM25 ahead (a gold event in its top 5, or newest-first, and not ours): "
              f"{len(lost)}{': ' + ' '.join(s.question.id for s in lost) if lost else ''}")
        print(f"  of them, not ahead over the project's own memories (won on other projects' "
              f"word counts): {len(stats)}{': ' + ' '.join(stats) if stats else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

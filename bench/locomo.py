"""LoCoMo retrieval benchmark: every turn stored through the real write API, every question
through the real search service, the top 5 scored against the gold evidence turns.

    .venv/bin/python bench/locomo.py [--data PATH] [--mode keyword|hybrid|both] [--facts]
    .venv/bin/python bench/locomo.py --split [--ablate] [--mode both]

``--split`` reports conversations 0–4 and 5–9 separately (fit on one half, read the other),
each beside plain FTS5 BM25 in the same run (same tokenizer, stop words out, OR of the words,
bm25() with equal column weights, the conversation as a filter); ``--ablate`` adds one row per
ranking mechanism switched off, so a mechanism stays only if it helps both halves.

Each conversation is one project in one store (a fresh ALETHEIA_HOME in a temp dir), each of
its sessions one session.  A turn is stored the way a capture of a chat turn would store it:
the words as the title, ``Speaker: words`` (plus the caption of a shared image, which is what a
captioning capture would keep) as the narrative, the speaker as a concept and in the subtitle
with the session's date, and the session's time as ``created_at``.  No gold answer, question or
annotation is stored.

Figures (questions that have evidence; LoCoMo's own definitions):
- evidence fraction  = mean over questions of |gold evidence ∩ top 5| / |gold evidence|
                       (LoCoMo's ``recall_acc``);
- any-hit            = share of questions with at least one gold evidence turn in the top 5;
- ms/query           = wall time of ``search()``, mean and p95.
Gold evidence ids are normalised to ``D<session>:<turn>`` (a few are written "D8:6; D9:17",
"D30:05" or "D:11:26" in the file); an id that names no turn counts as missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def default_data() -> Path:
    """``LOCOMO_DATA``, else ``shared/data/locomo/locomo10.json`` beside a parent folder (the
    main checkout and the worktrees sit at different depths under /work)."""
    env = os.environ.get("LOCOMO_DATA")
    if env:
        return Path(env)
    for parent in REPO.parents:
        candidate = parent / "shared" / "data" / "locomo" / "locomo10.json"
        if candidate.exists():
            return candidate
    return REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"


TOP_K = 5
CATEGORIES = (1, 2, 3, 4, 5)
_SESSION_KEY = re.compile(r"session_(\d+)$")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Question:
    project: str
    text: str
    category: int
    evidence: list[str]
    conversation: int = 0  # its index in the file: 0–4 is the first half, 5–9 the second


@dataclass
class Loaded:
    questions: list[Question] = field(default_factory=list)
    memory_to_dia: dict[str, str] = field(default_factory=dict)
    turns: int = 0
    write_s: float = 0.0


def parse_session_time(value: str) -> int:
    """LoCoMo session stamps look like '1:56 pm on 8 May, 2023'."""
    dt = datetime.strptime(" ".join(value.split()), "%I:%M %p on %d %B, %Y")
    return int(dt.replace(tzinfo=UTC).timestamp() * 1000)


def normalise_evidence(raw: list[str]) -> list[str]:
    out: list[str] = []
    for item in raw:
        for s, t in _EVIDENCE.findall(str(item)):
            dia = f"D{int(s)}:{int(t)}"
            if dia not in out:
                out.append(dia)
    return out


def turn_memory(project: str, sample: str, number: int, when: int, index: int,
                turn: dict[str, Any]) -> Any:
    from aletheia.store import MemoryIn

    speaker = str(turn["speaker"])
    text = " ".join(str(turn.get("text", "")).split())
    narrative = f"{speaker}: {text}"
    caption = turn.get("blip_caption")
    if caption:
        narrative += f"\n[{speaker} shared an image: {caption}]"
    day = datetime.fromtimestamp(when / 1000, tz=UTC).strftime("%-d %B %Y")
    return MemoryIn(
        project=project,
        kind="turn",
        title=text or f"[{speaker} shared an image]",
        subtitle=f"{speaker} on {day}",
        narrative=narrative,
        concepts=[speaker],
        session_id=f"{sample}/session_{number}",
        tool="locomo",
        source="import:locomo",
        created_at=when + index * 1000,  # keep the turns in order within a session
        event_key=str(turn["dia_id"]),
    )


def load(conn: Any, data: list[dict[str, Any]], *, prefix: str = "locomo/",
         write: bool = True) -> Loaded:
    """Every turn of every conversation, each conversation its own project ``prefix + id``.
    ``write=False``: the turns are already stored (a kept store); only map them back."""
    from aletheia.store import project_name, session_key, write_memories

    out = Loaded()
    for number_in_file, sample in enumerate(data):
        sample_id = str(sample["sample_id"])
        project = f"{prefix}{sample_id}"
        conv = sample["conversation"]
        items = []
        dias = []
        for key, turns in conv.items():
            m = _SESSION_KEY.match(key)
            if not m or not isinstance(turns, list):
                continue
            number = int(m.group(1))
            when = parse_session_time(conv[f"session_{number}_date_time"])
            for index, turn in enumerate(turns):
                items.append(turn_memory(project, sample_id, number, when, index, turn))
                dias.append(str(turn["dia_id"]))
        start = time.perf_counter()
        if write:
            stored = [r.id for r in write_memories(conn, items)]
        else:
            stored = [
                str(conn.execute("SELECT id FROM memory WHERE project = ? AND session_id = ? "
                                 "AND created_at = ?",
                                 (project_name(m.project), session_key(m.session_id),
                                  m.created_at)).fetchone()[0])
                for m in items
            ]
        out.write_s += time.perf_counter() - start
        out.turns += len(items)
        for memory_id, dia in zip(stored, dias, strict=True):
            out.memory_to_dia[memory_id] = dia
        for qa in sample["qa"]:
            evidence = normalise_evidence(qa.get("evidence") or [])
            if not qa.get("evidence"):
                continue  # four questions have no gold evidence: nothing to score
            out.questions.append(Question(project, str(qa["question"]), int(qa["category"]),
                                          evidence, number_in_file))
    return out


@dataclass
class Score:
    fraction: float
    any_hit: bool
    ms: float


def score(q: Question, loaded: Loaded, found_ids: list[str], ms: float) -> Score:
    found: list[str] = []
    for i in found_ids:
        dia = loaded.memory_to_dia.get(i)
        if dia and dia not in found:
            found.append(dia)
    top = set(found[:TOP_K])
    got = sum(1 for e in q.evidence if e in top)
    return Score(got / len(q.evidence), got > 0, ms)


def run(conn: Any, loaded: Loaded, *, semantic: bool, facts: bool) -> list[tuple[Question, Score]]:
    from aletheia.search import SearchQuery, search

    out = []
    for q in loaded.questions:
        query = SearchQuery(q=q.text, project=q.project, limit=TOP_K, semantic=semantic,
                            include_facts=facts)
        start = time.perf_counter()
        hits = search(conn, query)
        ms = (time.perf_counter() - start) * 1000
        found: list[str] = []
        for h in hits:
            found.extend([h.id] if h.type == "memory" else h.source_ids)
        out.append((q, score(q, loaded, found, ms)))
    return out


# --- plain FTS5 BM25, the baseline every figure is printed beside -----------------------------

_PLAIN_FIELDS = "title, subtitle, narrative, facts, concepts"


def plain_index(conn: Any) -> None:
    """A connection-private FTS5 copy of the memories: same tokenizer, no extra column, no
    re-ranking; nothing is written to hub.db."""
    conn.execute("DROP TABLE IF EXISTS temp.plain_fts")
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.plain_fts USING fts5({_PLAIN_FIELDS}, id UNINDEXED, "
        "project UNINDEXED, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(f"INSERT INTO temp.plain_fts({_PLAIN_FIELDS}, id, project) "
                 f"SELECT {_PLAIN_FIELDS}, id, project FROM memory")


def plain_search(conn: Any, text: str, project: str | None, limit: int) -> list[str]:
    """Stop words out, the OR of the remaining words, FTS5's bm25() with equal weights."""
    from aletheia.search import content_words

    words = content_words(text)
    if not words:
        return []
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    where, params = ("AND project = ?", [project]) if project else ("", [])
    rows = conn.execute(
        f"SELECT id FROM temp.plain_fts WHERE plain_fts MATCH ? {where} "
        "ORDER BY bm25(plain_fts) LIMIT ?", (match, *params, limit)).fetchall()
    return [str(r[0]) for r in rows]


def run_plain(conn: Any, loaded: Loaded) -> list[tuple[Question, Score]]:
    out = []
    for q in loaded.questions:
        start = time.perf_counter()
        found = plain_search(conn, q.text, q.project, TOP_K)
        out.append((q, score(q, loaded, found, (time.perf_counter() - start) * 1000)))
    return out


# --- ablation: each ranking mechanism switched off, one at a time -----------------------------

# name → the search module's constants that switch the mechanism off.
ABLATIONS: dict[str, dict[str, Any]] = {
    "no neighbour bonus": {"NEIGHBOUR_OFFSETS": ()},
    "no date bonus": {"DATE_BONUS": 0.0},
    "no coverage bonus": {"COVER_BONUS": 0.0},
    "no term frequency": {"TF_POOL": 0, "BM25_B": 0.5},  # (b as it was without counts)
    "all re-rankers off": {"NEIGHBOUR_OFFSETS": (), "DATE_BONUS": 0.0, "COVER_BONUS": 0.0},
    # Only where the worker has run (coding_ablate.py --compress): superseded facts' evidence.
    "no superseded-fact re-rank": {"STALE_SHARE": 1.0, "SUCCESSOR_SHARE": 0.0},
    "no replaced-value old answers": {"REPLACED_VALUES": False},
    "no edited values": {"EDITED_VALUES": False},
    "no measure changes": {"MEASURES": False},
    "no change said since": {"SAID_SINCE": False},
    "said since: any sentence of the older": {"SAID_SINCE_SENTENCE": False},
    "no edited measures": {"EDITED_MEASURES": False},
    "no swapped dependencies": {"SWAPPED_NAMES": False},
    "no later rerun first": {"RERUN_LATER": False},
    "no named slot first": {"SLOT_FIRST": False},
    "no revert lift": {"REVERTED": False},
    "no slot claims": {"SLOT_CLAIMS": False},
    "no set again": {"SET_AGAIN": False},
    "no session set": {"SESSION_SET": False},
    # (a question for a measured value, where tool events are kept: no neighbour gain)
    "neighbours for measured questions": {"OBSERVED_NEIGHBOURS": 1.0},
    "neighbours over every kind": {"NEIGHBOURS_AMONG_TALK": False},
    "stems asked as stems": {"MATCH_TYPED": False},  # (FTS5 stems them again)
}
# Mechanisms tried and not (yet) on: a row each, to be read on both halves and the coding set.
CANDIDATES: dict[str, dict[str, Any]] = {
    "recency 0.3": {"RECENCY_BONUS": 0.3},
    "recency 1.0": {"RECENCY_BONUS": 1.0},
    "b 0.5": {"BM25_B": 0.5},
    "b 0.75": {"BM25_B": 0.75},
    "summaries with the coverage bonus": {"SUMMARY_COVER": True},
    "min scope 1000": {"MIN_SCOPE": 1000},
    "min scope 3000": {"MIN_SCOPE": 3000},
    "neighbours before a match only": {"NEIGHBOUR_OFFSETS": ((-1, 0.35), (-2, 0.25))},
    "change near 0.2": {"CHANGE_NEAR": 0.2},
    "change near 0.5": {"CHANGE_NEAR": 0.5},
    "no stated changes": {"STATED_CHANGES": False},


    "stale match 0": {"STALE_MATCH": 0.0},
    "stale match 0.3": {"STALE_MATCH": 0.3},
    "stale match 0.4": {"STALE_MATCH": 0.4},
    "stale match 0.8": {"STALE_MATCH": 0.8},
    "measured questions: neighbours 0.5": {"OBSERVED_NEIGHBOURS": 0.5},
    "tf pool 120": {"TF_POOL": 120},
    "tf pool 30": {"TF_POOL": 30},
    "tf pool 20": {"TF_POOL": 20},
    "tf text 800": {"TF_TEXT": 800},
    "tf text 4000": {"TF_TEXT": 4000},
    "neighbours half": {"NEIGHBOUR_OFFSETS": ((-1, 0.18), (1, 0.18), (-2, 0.12), (2, 0.12))},
    "neighbours +-1": {"NEIGHBOUR_OFFSETS": ((-1, 0.35), (1, 0.35))},
    "every kind a neighbour": {"NEIGHBOUR_SKIP": ()},
    "summaries are no neighbours": {"NEIGHBOUR_SKIP": ("summary", "project_summary")},
    "tool events are no neighbours": {"NEIGHBOUR_SKIP": ("tool_event",)},
    "cover 0.25": {"COVER_BONUS": 0.25},
    "cover 1.0": {"COVER_BONUS": 1.0},
    "facts at half their score": {"FACT_SHARE": 0.5},
    "no facts": {"FACT_SHARE": 0.0},
    "facts b 0.9": {"FACT_B": 0.9},
    "no expansion": {"EXPAND_WEIGHT": 0.0},
    "expansion 0.2": {"EXPAND_WEIGHT": 0.2},
    "expansion 0.4": {"EXPAND_WEIGHT": 0.4},
    "expansion 1.0": {"EXPAND_WEIGHT": 1.0},
    "expansion without synonyms": {"EXPAND_SYNONYMS": False},
    "expansion covers nothing": {"EXPAND_COVERS": False},
    "no phrase expansion": {"EXPAND_PHRASES": False},
    "expansion of 2 words": {"MAX_EXPANSIONS": 2},
    "expansion of 8 words": {"MAX_EXPANSIONS": 8},
    "expansion 0.6": {"EXPAND_WEIGHT": 0.6},
    "observed 0.25": {"OBSERVED_BONUS": 0.25},
    "observed 0": {"OBSERVED_BONUS": 0.0},
    "observed 1.0": {"OBSERVED_BONUS": 1.0},
    "min scope 100": {"MIN_SCOPE": 100},
    "min scope 300": {"MIN_SCOPE": 300},
}
# Hybrid only: the semantic fusion weights.
HYBRID_ABLATIONS: dict[str, dict[str, Any]] = {
    "no semantic re-rank": {"SEMANTIC_RERANK": 0.0},
    "no semantic-only finds": {"SEMANTIC_WEIGHT": 0.0},
    "keyword only": {"SEMANTIC_RERANK": 0.0, "SEMANTIC_WEIGHT": 0.0},
}
# Hybrid only: other strengths of the semantic re-rank (bench/coding_ablate.py --semantic too).
HYBRID_CANDIDATES: dict[str, dict[str, Any]] = {
    "re-rank 4": {"SEMANTIC_RERANK": 4.0},
    "re-rank 8": {"SEMANTIC_RERANK": 8.0},
}


def pick(rows: dict[str, dict[str, Any]], names: str) -> dict[str, dict[str, Any]]:
    """The rows named in ``names`` (comma-separated), in their own order."""
    wanted = names.split(",")
    unknown = [w for w in wanted if w not in rows]
    if unknown:
        raise ValueError(f"unknown variants: {', '.join(unknown)}")
    return {k: v for k, v in rows.items() if k in wanted}


class patched:
    """Set constants of ``aletheia.search`` for the duration of a ``with`` block."""

    def __init__(self, overrides: dict[str, Any]) -> None:
        self.overrides = overrides
        self.saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        from aletheia import search as S

        for name, value in self.overrides.items():
            if not hasattr(S, name):
                raise SystemExit(f"aletheia.search has no constant {name}: update ABLATIONS")
            self.saved[name] = getattr(S, name)
            setattr(S, name, value)

    def __exit__(self, *exc: object) -> None:
        from aletheia import search as S

        for name, value in self.saved.items():
            setattr(S, name, value)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def figures(scored: list[tuple[Question, Score]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Score]] = defaultdict(list)
    for q, s in scored:
        groups["all"].append(s)
        groups[f"cat{q.category}"].append(s)
        if q.category in (1, 2, 3, 4):
            groups["cat1-4"].append(s)
    out: dict[str, dict[str, float]] = {}
    for g in ["all", "cat1-4", *[f"cat{c}" for c in CATEGORIES]]:
        items = groups.get(g, [])
        if items:
            out[g] = {
                "n": len(items),
                "evidence": round(100 * statistics.fmean(s.fraction for s in items), 1),
                "any_hit": round(100 * statistics.fmean(1.0 if s.any_hit else 0.0 for s in items),
                                 1),
            }
    ms = [s.ms for _, s in scored]
    out["ms"] = {"mean": round(statistics.fmean(ms), 3), "p95": round(p95(ms), 3)}
    return out


def report(name: str, scored: list[tuple[Question, Score]]) -> dict[str, Any]:
    rows = figures(scored)
    print(f"\n{name}")
    print(f"{'group':<8} {'n':>5} {'evidence':>9} {'any-hit':>8}")
    for g, row in rows.items():
        if g != "ms":
            print(f"{g:<8} {int(row['n']):>5} {row['evidence']:>8.1f}% {row['any_hit']:>7.1f}%")
    print(f"ms/query: mean {rows['ms']['mean']:.2f}  p95 {rows['ms']['p95']:.2f}")
    return rows


HALVES = (("convs 0-4", range(0, 5)), ("convs 5-9", range(5, 10)))


def halves(scored: list[tuple[Question, Score]]) -> list[dict[str, dict[str, float]]]:
    return [figures([(q, s) for q, s in scored if q.conversation in convs])
            for _, convs in HALVES]


def split_table(systems: dict[str, list[tuple[Question, Score]]], *, group: str = "all",
                base: str = "plain BM25") -> dict[str, Any]:
    """One row per system: evidence and any-hit on each half, and the gap to ``base``."""
    per = {name: halves(scored) for name, scored in systems.items()}
    head = "".join(f" | {h:^31}" for h, _ in HALVES)
    print(f"\n{'questions: ' + group:<30}{head}")
    print(f"{'':<30}" + " | evidence (Δ)    any-hit (Δ)    " * len(HALVES))
    for name, hs in per.items():
        cells = []
        for i, h in enumerate(hs):
            if group not in h:
                cells.append(f"{'—':^31}")
                continue
            ev, ah = h[group]["evidence"], h[group]["any_hit"]
            b = per[base][i][group]
            cells.append(f"{ev:5.1f} ({ev - b['evidence']:+5.1f})  {ah:5.1f} ({ah - b['any_hit']:+5.1f})")
        print(f"{name:<30} | " + " | ".join(cells))
    return per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=None, help="locomo10.json")
    parser.add_argument("--mode", choices=("keyword", "hybrid", "both"), default="keyword")
    parser.add_argument("--split", action="store_true",
                        help="report conversations 0-4 and 5-9 apart, beside plain BM25")
    parser.add_argument("--ablate", action="store_true",
                        help="with --split: one row per ranking mechanism switched off (and per candidate)")
    parser.add_argument("--variants", default="",
                        help="with --ablate: only these rows (comma-separated names)")
    parser.add_argument("--facts", action="store_true", help="also run with extracted facts")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--misses", type=Path, default=None, help="write missed questions here")
    args = parser.parse_args(argv)

    data = json.loads((args.data or default_data()).read_text())
    with tempfile.TemporaryDirectory(prefix="aletheia-locomo-") as home:
        os.environ["ALETHEIA_HOME"] = home
        from aletheia import db

        conn = db.connect()
        loaded = load(conn, data)
        print(f"stored {loaded.turns} turns of {len(data)} conversations in "
              f"{loaded.write_s:.1f} s; {len(loaded.questions)} questions with evidence")
        out: dict[str, Any] = {}
        modes = ["keyword", "hybrid"] if args.mode == "both" else [args.mode]
        if "hybrid" in modes:
            from aletheia import embed

            start = time.perf_counter()
            n = embed.embed_pending(conn)
            print(f"embedded {n} memories in {time.perf_counter() - start:.1f} s "
                  f"({embed.model_name()})")
        plain_index(conn)
        plain = run_plain(conn, loaded)
        systems: dict[str, list[tuple[Question, Score]]] = {"plain BM25": plain}
        if not args.split:
            out["plain BM25"] = report(f"plain FTS5 BM25 (top {TOP_K})", plain)
        for mode in modes:
            scored = run(conn, loaded, semantic=mode == "hybrid", facts=False)
            systems[mode] = scored
            if not args.split:
                out[mode] = report(f"{mode} (top {TOP_K})", scored)
            if args.misses and mode == modes[0]:
                with args.misses.open("w") as fh:
                    for q, s in scored:
                        if s.fraction < 1:
                            fh.write(json.dumps({"cat": q.category, "q": q.text, "ev": q.evidence,
                                                 "frac": s.fraction, "project": q.project}) + "\n")
            if args.split and args.ablate:
                extra = dict(ABLATIONS, **CANDIDATES,
                             **(HYBRID_ABLATIONS if mode == "hybrid" else {}),
                             **(HYBRID_CANDIDATES if mode == "hybrid" else {}))
                if args.variants:
                    try:
                        extra = pick(extra, args.variants)
                    except ValueError as exc:
                        parser.error(str(exc))
                for name, overrides in extra.items():
                    with patched(overrides):
                        systems[f"{mode}: {name}"] = run(conn, loaded, semantic=mode == "hybrid",
                                                         facts=False)
        if args.split:
            for group in ("all", "cat1-4", *[f"cat{c}" for c in CATEGORIES]):
                out[group] = split_table(systems, group=group)
            for name, scored in systems.items():
                ms = figures(scored)["ms"]
                print(f"{name:<30} ms/query mean {ms['mean']:.2f} p95 {ms['p95']:.2f}")
        if args.facts and add_facts(conn):
            for mode in modes:
                scored = run(conn, loaded, semantic=mode == "hybrid", facts=True)
                out[f"{mode}+facts"] = report(f"{mode} + facts (top {TOP_K})", scored)
        conn.close()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


def add_facts(conn: Any) -> int:
    """Run our compression pipeline (the offline rule extractor) over every session, the way
    the worker would after each session's stop event; returns the facts it added."""
    try:
        from aletheia.tasks.compress import JobRunner, drain
    except ImportError:
        print("facts: tasks.compress is not available; skipped")
        return 0
    from aletheia.store import queue_stop

    before = conn.execute("SELECT count(*) FROM fact").fetchone()[0]
    for sid, project in conn.execute("SELECT id, project FROM session ORDER BY id").fetchall():
        queue_stop(conn, sid, project, "locomo")
    start = time.perf_counter()
    summary = drain(conn, JobRunner(use_provider=False))
    added = int(conn.execute("SELECT count(*) FROM fact").fetchone()[0] - before)
    print(f"facts: {summary.jobs} sessions compressed in {time.perf_counter() - start:.1f} s, "
          f"{added} facts added")
    return added


if __name__ == "__main__":
    raise SystemExit(main())

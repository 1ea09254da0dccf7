"""LoCoMo retrieval benchmark: every turn stored through the real write API, every question
through the real search service, the top 5 scored against the gold evidence turns.

    .venv/bin/python bench/locomo.py [--data PATH] [--mode keyword|hybrid|both] [--facts]

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

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"
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


def load(conn: Any, data: list[dict[str, Any]]) -> Loaded:
    from aletheia.store import write_memories

    out = Loaded()
    for sample in data:
        sample_id = str(sample["sample_id"])
        project = f"locomo/{sample_id}"
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
        results = write_memories(conn, items)
        out.write_s += time.perf_counter() - start
        out.turns += len(items)
        for result, dia in zip(results, dias, strict=True):
            out.memory_to_dia[result.id] = dia
        for qa in sample["qa"]:
            evidence = normalise_evidence(qa.get("evidence") or [])
            if not qa.get("evidence"):
                continue  # four questions have no gold evidence: nothing to score
            out.questions.append(Question(project, str(qa["question"]), int(qa["category"]), evidence))
    return out


@dataclass
class Score:
    fraction: float
    any_hit: bool
    ms: float


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
            ids = [h.id] if h.type == "memory" else h.source_ids
            for i in ids:
                dia = loaded.memory_to_dia.get(i)
                if dia and dia not in found:
                    found.append(dia)
        top = set(found[:TOP_K])
        got = sum(1 for e in q.evidence if e in top)
        out.append((q, Score(got / len(q.evidence), got > 0, ms)))
    return out


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def report(name: str, scored: list[tuple[Question, Score]]) -> dict[str, Any]:
    groups: dict[str, list[Score]] = defaultdict(list)
    for q, s in scored:
        groups["all"].append(s)
        groups[f"cat{q.category}"].append(s)
        if q.category in (1, 2, 3, 4):
            groups["cat1-4"].append(s)
    rows = {}
    print(f"\n{name}")
    print(f"{'group':<8} {'n':>5} {'evidence':>9} {'any-hit':>8}")
    for g in ["all", "cat1-4", *[f"cat{c}" for c in CATEGORIES]]:
        items = groups.get(g, [])
        if not items:
            continue
        frac = 100 * statistics.fmean(s.fraction for s in items)
        anyh = 100 * statistics.fmean(1.0 if s.any_hit else 0.0 for s in items)
        rows[g] = {"n": len(items), "evidence": round(frac, 1), "any_hit": round(anyh, 1)}
        print(f"{g:<8} {len(items):>5} {frac:>8.1f}% {anyh:>7.1f}%")
    ms = [s.ms for _, s in scored]
    rows["ms_mean"] = round(statistics.fmean(ms), 3)
    rows["ms_p95"] = round(p95(ms), 3)
    print(f"ms/query: mean {rows['ms_mean']:.2f}  p95 {rows['ms_p95']:.2f}")
    return rows


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--mode", choices=("keyword", "hybrid", "both"), default="keyword")
    parser.add_argument("--facts", action="store_true", help="also run with extracted facts")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--misses", type=Path, default=None, help="write missed questions here")
    args = parser.parse_args(argv)

    data = json.loads(args.data.read_text())
    with tempfile.TemporaryDirectory(prefix="aletheia-locomo-") as home:
        os.environ["ALETHEIA_HOME"] = home
        from aletheia import db

        conn = db.connect()
        loaded = load(conn, data)
        print(f"stored {loaded.turns} turns of {len(data)} conversations in "
              f"{loaded.write_s:.1f} s; {len(loaded.questions)} questions with evidence")
        figures: dict[str, Any] = {}
        modes = ["keyword", "hybrid"] if args.mode == "both" else [args.mode]
        if "hybrid" in modes:
            from aletheia import embed

            start = time.perf_counter()
            n = embed.embed_pending(conn)
            print(f"embedded {n} memories in {time.perf_counter() - start:.1f} s "
                  f"({embed.model_name()})")
        for mode in modes:
            scored = run(conn, loaded, semantic=mode == "hybrid", facts=False)
            figures[mode] = report(f"{mode} (top {TOP_K})", scored)
            if args.misses and mode == modes[0]:
                with args.misses.open("w") as fh:
                    for q, s in scored:
                        if s.fraction < 1:
                            fh.write(json.dumps({"cat": q.category, "q": q.text, "ev": q.evidence,
                                                 "frac": s.fraction, "project": q.project}) + "\n")
        if args.facts and add_facts(conn):
            for mode in modes:
                scored = run(conn, loaded, semantic=mode == "hybrid", facts=True)
                figures[f"{mode}+facts"] = report(f"{mode} + facts (top {TOP_K})", scored)
        conn.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

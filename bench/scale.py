"""Scale benchmark: stores of 50,000 and 1,000,000 memories over 20 projects.

    .venv/bin/python bench/scale.py [--corpus realistic|synthetic] [--sizes 50000,1000000]
                                    [--queries 200] [--repeat 3] [--keep DIR]
                                    [--state unread|read|both]

Fixed seed.  ``realistic`` (the default): memories of several hundred characters cut from real
text — the coding-session set's prompts, commands, tool output, file contents and answers
(bench/data/coding's tunable parts only: ``coding_data.TUNABLE_PARTS``), LoCoMo's conversation
turns (prose) and this repository's own source (code) — mixed the way a captured session mixes
them (prompts, tool events, answers, notes).
``synthetic``: words drawn from a Zipf-distributed made-up vocabulary (it flatters the index:
no word is as common as real text's).  Sessions of about 40 memories, each project's own.
Memories go in through the real write API (``prepare`` + ``insert_rows``, redaction included)
in batches of 2,000.  Queries: 1–3 content words of a random stored memory (so they have
answers), half of them with a stop word mixed in, as a user types them.  Prints, per size:
insert throughput, database size, search p50/p95 project-scoped and across all projects, and
context build p50/p95, as wall time and as this process's CPU time (each query timed as the
best of ``--repeat`` runs: on a shared machine the best run is the code's own cost), with
``uptime``'s load beside them.  Beside the search figures: plain FTS5 BM25 (bench/plain_bm25.py)
on the same memories and queries, timed query by query in the same loop, and the search
service's CPU percentiles as a ratio to it (the figure to compare across runs: the machine's
load moves both).

``--state``: ``unread`` (the default) measures the store as the hooks leave it, before any
worker ran (search then works out what the best unread prompts and answers say they changed);
``read`` measures it after the real worker (offline, as ``aletheia compress``) has read every
session, the state of a store with ``honcho start`` running: facts, summaries, the changes it
recorded (~2.5 min more at 50,000; a second store, the same memories and queries); ``both``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

SEED = 20261201
PROJECTS = 20
VOCAB = 30_000
SESSION_LEN = 40
BATCH = 2000
KINDS = ("prompt", "tool_event", "tool_event", "tool_event", "response", "note")
TOOLS = ("claude-code", "codex", "gemini")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_FILLER = ("the", "a", "of", "to", "in", "and", "is", "for", "with", "on", "when", "why")


def make_vocab(rng: random.Random, n: int) -> list[str]:
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < n:
        w = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 10)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class RealText:
    """Pieces of real text (coding sessions, conversation turns, source code), mixed into
    memories the way a captured session holds them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.coding = _coding_pieces()
        self.prose = _prose_pieces()
        self.code = _code_pieces()
        if not (self.coding and self.prose and self.code):
            raise SystemExit("realistic corpus: a source is missing (bench/data/coding, "
                             "LoCoMo in shared/data, aletheia/*.py); use --corpus synthetic")
        self.own = {p: f"project{p:02d}" for p in range(PROJECTS)}

    def memory(self, kind: str, project: int) -> tuple[str, str]:
        """(title, narrative) of one memory of ``kind``."""
        rng = self.rng
        if kind == "prompt":
            body = " ".join(rng.choice(self.prose) for _ in range(rng.randint(1, 3)))
            if rng.random() < 0.5:
                body = rng.choice(self.coding)[0][:300]
            return body[:200], body
        if kind == "tool_event":
            title, text = rng.choice(self.coding)
            cut = rng.randint(200, 900)
            start = rng.randrange(max(1, len(text) - cut)) if len(text) > cut else 0
            narrative = text[start:start + cut]
            if rng.random() < 0.3:
                narrative += "\n" + rng.choice(self.code)
            return title, narrative
        if kind == "response":
            parts = [rng.choice(self.prose) for _ in range(rng.randint(2, 4))]
            if rng.random() < 0.5:
                parts.append(rng.choice(self.coding)[1][:300])
            body = " ".join(parts)
            return body.split(". ")[0][:200], body
        code = rng.choice(self.code)  # a note: a line of prose about a piece of code
        line = f"{rng.choice(self.prose)[:150]} ({self.own[project]})"
        return line, line + "\n" + code


def _coding_pieces() -> list[tuple[str, str]]:
    """(title, text) of every event of the coding-session set that says something."""
    try:
        sys.path.insert(0, str(REPO / "bench"))
        import coding_data as cd
    except ImportError:
        return []
    out = []
    # The tunable parts only (coding_data's list, one place): a profiling corpus tunes the code
    # too, so it must never hold the held-out parts' text (nor a fresh yardstick's).
    projects = [p for part in cd.TUNABLE_PARTS for p in cd.load(cd.folder(part)).part(part)
                .projects.values()]
    for project in projects:
        root = f"/home/dev/src/{project.name}"
        for session in project.sessions:
            for ev in session.events:
                if not ev.text.strip():
                    continue
                text = re.sub(r"\{\{secret [^}]*\}\}", "[redacted]", ev.text.replace("{ROOT}", root))
                first = text.strip().splitlines()[0][:120]
                title = f"{ev.tool}: {first}" if ev.tool else first
                out.append((title, text[:4000]))
    return out


def _prose_pieces() -> list[str]:
    try:
        sys.path.insert(0, str(REPO / "bench"))
        import locomo
        data = json.loads(locomo.default_data().read_text())
    except (ImportError, OSError, ValueError):
        return []
    out = []
    for sample in data:
        for turns in sample["conversation"].values():
            if isinstance(turns, list):
                out.extend(" ".join(str(t.get("text", "")).split()) for t in turns)
    return [t for t in out if len(t) > 20]


def _code_pieces() -> list[str]:
    out = []
    for path in sorted((REPO / "aletheia").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i in range(0, len(lines), 12):
            chunk = "\n".join(lines[i:i + 12]).strip()
            if len(chunk) > 80:
                out.append(chunk)
    return out


class Text:
    """Zipf(1.1) word draws from a fixed vocabulary."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vocab = make_vocab(rng, VOCAB)
        weights = [1.0 / (i + 1) ** 1.1 for i in range(VOCAB)]
        total = 0.0
        self.cum: list[float] = []
        for w in weights:
            total += w
            self.cum.append(total)
        self.own = {p: make_vocab(rng, 50) for p in range(PROJECTS)}

    def words(self, n: int, project: int) -> list[str]:
        out = self.rng.choices(self.vocab, cum_weights=self.cum, k=n)
        if self.rng.random() < 0.3:
            out[self.rng.randrange(n)] = self.rng.choice(self.own[project])
        return out


def build(conn: Any, rows: int, rng: random.Random,
          text: Text | RealText) -> tuple[float, list[tuple[int, str]]]:
    """Insert ``rows`` memories; returns (seconds, samples of (project, memory text))."""
    from aletheia.store import MemoryIn, insert_rows, prepare

    start_ms = 1_750_000_000_000
    samples: list[tuple[int, str]] = []
    spent = 0.0
    batch: list[MemoryIn] = []
    made = 0
    session = 0
    while made < rows:
        project = rng.randrange(PROJECTS)
        session += 1
        tool = rng.choice(TOOLS)
        for _ in range(min(SESSION_LEN, rows - made)):
            kind = rng.choice(KINDS)
            if isinstance(text, RealText):
                title, narrative = text.memory(kind, project)
            else:
                title = " ".join(text.words(rng.randint(5, 12), project))
                narrative = " ".join(text.words(rng.randint(20, 120), project))
            batch.append(MemoryIn(
                project=f"/work/project-{project:02d}", kind=kind, title=title,
                narrative=narrative, session_id=f"s{session}", tool=tool, source="hook",
                created_at=start_ms + made * 1000, event_key=str(made),
            ))
            if rng.random() < 0.002:
                samples.append((project, f"{title} {narrative}"))
            made += 1
            if len(batch) >= BATCH:
                t = time.perf_counter()
                insert_rows(conn, [prepare(m) for m in batch])
                spent += time.perf_counter() - t
                batch = []
    if batch:
        t = time.perf_counter()
        insert_rows(conn, [prepare(m) for m in batch])
        spent += time.perf_counter() - t
    return spent, samples


def queries(rng: random.Random, samples: list[tuple[int, str]], n: int,
            realistic: bool) -> list[tuple[int, str]]:
    from aletheia.search import content_words

    out = []
    for _ in range(n):
        project, body = rng.choice(samples)
        words = content_words(body) if realistic else body.split()
        if not words:
            continue
        low, high = (1, 3) if realistic else (2, 5)
        picked = rng.sample(words, min(len(words), rng.randint(low, high)))
        if rng.random() < 0.5:
            picked.insert(rng.randrange(len(picked) + 1), rng.choice(_FILLER))
        out.append((project, " ".join(picked)))
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def timed(fns: dict[str, Any], items: list[Any],
          repeat: int = 1) -> dict[str, tuple[list[float], list[float]]]:
    """Per function and item, the best of ``repeat`` runs in ms, as wall time and as this
    process's CPU time (on a shared machine the best run is the code's own cost; the CPU time
    leaves out the time spent waiting for a core).  The functions take turns on each item, so
    a baseline among them sees the same machine load as the code it is read beside."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in fns}
    for item in items:
        for name, fn in fns.items():
            best = best_cpu = float("inf")
            for _ in range(repeat):
                t, c = time.perf_counter(), time.process_time()
                fn(item)
                best = min(best, (time.perf_counter() - t) * 1000)
                best_cpu = min(best_cpu, (time.process_time() - c) * 1000)
            out[name][0].append(best)
            out[name][1].append(best_cpu)
    return out


def read_all(conn: Any) -> float:
    """Every session through the real worker (offline, as ``aletheia compress``); seconds."""
    from aletheia import store
    from aletheia.tasks.compress import JobRunner, drain

    start = time.perf_counter()
    for sid, project, tool in conn.execute(
            "SELECT id, project, tool FROM session WHERE id NOT IN "
            "(SELECT session_id FROM stop_queue)").fetchall():
        store.queue_stop(conn, sid, project, tool)
    drain(conn, JobRunner(use_provider=False))
    return time.perf_counter() - start


def run_size(rows: int, n_queries: int, keep: Path | None, repeat: int,
             corpus: str, state: str = "unread") -> dict[str, Any]:
    from plain_bm25 import PlainBM25

    from aletheia import db
    from aletheia.context import build_block
    from aletheia.search import SearchQuery, search

    rng = random.Random(SEED)
    text: Text | RealText = RealText(rng) if corpus == "realistic" else Text(rng)
    name = f"scale-{corpus}-{rows}" + ("-read" if state == "read" else "")
    home = keep / name if keep else Path(tempfile.mkdtemp(prefix="aletheia-scale-"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["ALETHEIA_HOME"] = str(home)
    path = home / "hub.db"
    fresh = not path.exists()
    conn = db.connect()
    if fresh:
        seconds, samples = build(conn, rows, rng, text)
        if state == "read":
            read_all(conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        throughput = rows / seconds
    else:  # a kept store: re-draw the same samples without inserting
        throughput = 0.0  # not measured: the store was kept from an earlier run
        samples = []
        for r in conn.execute("SELECT project, title || ' ' || narrative FROM memory "
                              "WHERE rowid % 500 = 0 AND source = 'hook' LIMIT 2000"):
            samples.append((int(r[0][-2:]), r[1]))
    count = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    mean_chars = round(conn.execute(
        "SELECT avg(length(title) + length(narrative)) FROM memory").fetchone()[0])
    size_mb = sum(p.stat().st_size for p in home.glob("hub.db*")) / 1e6
    qs = queries(random.Random(SEED + 1), samples, n_queries, corpus == "realistic")

    def scoped(item: tuple[int, str]) -> None:
        search(conn, SearchQuery(q=item[1], project=f"/work/project-{item[0]:02d}"))

    def everywhere(item: tuple[int, str]) -> None:
        search(conn, SearchQuery(q=item[1]))

    # The in-loop baseline: plain FTS5 BM25 (bench/plain_bm25.py: an in-memory copy of the
    # same memories, so it does not move when the store's own index changes), the same queries
    # and page size, timed on each query right beside the search service.  The ratio to it is
    # the figure that compares across hours of a shared machine.
    plain = PlainBM25.from_store(conn)
    limit = SearchQuery(q="").limit

    def plain_scoped(item: tuple[int, str]) -> None:
        plain.search(item[1], f"/work/project-{item[0]:02d}", limit)

    def plain_everywhere(item: tuple[int, str]) -> None:
        plain.search(item[1], None, limit)

    for item in qs[:10]:  # warm the page cache the way a running server would have it
        scoped(item)
        everywhere(item)
        plain_scoped(item)
        plain_everywhere(item)
    runs = timed({"scoped": scoped, "plain_scoped": plain_scoped}, qs, repeat)
    runs.update(timed({"all": everywhere, "plain_all": plain_everywhere}, qs, repeat))
    runs.update(timed(
        {"context": lambda p: build_block(conn, f"/work/project-{p:02d}", host="claude-code")},
        [p for _ in range(5) for p in range(PROJECTS)], repeat))
    plain.close()
    conn.close()
    out: dict[str, Any] = {
        "rows": count, "insert_rows_per_s": round(throughput), "db_mb": round(size_mb, 1),
        "mean_chars": mean_chars, "state": state,
    }
    for name, (wall, cpu) in runs.items():
        for key, values in ((name, wall), (f"{name}_cpu", cpu)):
            out[f"{key}_p50"] = pct(values, 0.5)
            out[f"{key}_p95"] = pct(values, 0.95)
            out[f"{key}_mean"] = statistics.fmean(values)
    return out


def ratio(r: dict[str, Any], name: str, p: int) -> float:
    """The search service's CPU percentile over plain BM25's, timed in the same loop."""
    return float(r[f"{name}_cpu_p{p}"] / max(r[f"plain_{name}_cpu_p{p}"], 1e-6))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="aletheia scale benchmark")
    parser.add_argument("--corpus", choices=("realistic", "synthetic"), default="realistic")
    parser.add_argument("--sizes", default="50000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep (and reuse) the stores under this directory")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per query; the best counts (1: every run counts)")
    parser.add_argument("--state", choices=("unread", "read", "both"), default="unread",
                        help="the store as the hooks leave it, after the worker read every "
                             "session (facts, summaries), or both")
    args = parser.parse_args(argv)
    print(f"corpus: {args.corpus}; {args.queries} queries, best of {args.repeat}; "
          f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{'state':>6} {'rows':>9} {'chars':>5} {'insert/s':>9} {'db MB':>7} | {'scoped p50':>10} "
          f"{'p95':>6} | {'all p50':>7} {'p95':>6} | {'context p50':>11} {'p95':>5}   (ms: wall / cpu)")
    states = ("unread", "read") if args.state == "both" else (args.state,)
    for size in (int(s) for s in args.sizes.split(",")):
        for state in states:
            r = run_size(size, args.queries, args.keep, args.repeat, args.corpus, state)
            for kind, suffix in (("wall", ""), ("cpu", "_cpu")):
                head = (f"{state:>6} {r['rows']:>9} {r['mean_chars']:>5} "
                        f"{r['insert_rows_per_s']:>9} {r['db_mb']:>7}" if kind == "wall"
                        else " " * 40)
                print(f"{head} | {r['scoped' + suffix + '_p50']:>10.2f} "
                      f"{r['scoped' + suffix + '_p95']:>6.2f} | {r['all' + suffix + '_p50']:>7.2f} "
                      f"{r['all' + suffix + '_p95']:>6.2f} | {r['context' + suffix + '_p50']:>11.2f} "
                      f"{r['context' + suffix + '_p95']:>5.2f}   {kind}", flush=True)
            # Plain BM25 timed in the same loop, and the search service's CPU time over it.
            print(f"{'plain BM25 (same loop)':>40} | {r['plain_scoped_cpu_p50']:>10.2f} "
                  f"{r['plain_scoped_cpu_p95']:>6.2f} | {r['plain_all_cpu_p50']:>7.2f} "
                  f"{r['plain_all_cpu_p95']:>6.2f} |                     cpu")
            print(f"{'ratio to plain BM25':>40} | {ratio(r, 'scoped', 50):>9.2f}x "
                  f"{ratio(r, 'scoped', 95):>5.2f}x | {ratio(r, 'all', 50):>6.2f}x "
                  f"{ratio(r, 'all', 95):>5.2f}x |                     cpu", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

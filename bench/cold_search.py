"""A fresh process's first scoped search against a 50k store, as the UserPromptSubmit hook runs
it (one search per process), beside a second search in the same process.

    .venv/bin/python bench/cold_search.py --base DIR [--part dev-5] [--runs 40] [--profile]

``--base``: an ``ALETHEIA_HOME`` that ``bench/scale.py --keep`` made (``DIR/scale-realistic-50000``);
its ``hub.db`` is copied to a temp dir once (so the base is never written).  The part's question
texts (a tunable part of bench/data/coding, one of ``coding_data.TUNABLE_PARTS``) are the
prompts, each scoped to one of the store's projects in turn.  Each run is a new Python process: it imports what the hook imports for a
prompt (inside ``regex_cache.importing("prompt")``, the cache in the temp home), opens the store as the hook does (``db.connect(upgrade=False)``), then times ``search`` (facts included, no
vectors, 20 hits: the hook's query) three times: the first search (cold), the same query again
(second), and the next question's query (other).  Printed: median and p95 of each, wall ms and
this process's CPU ms (the steadier figure on a shared machine), the
ratio of the first to the second, and whether the first and second gave the same ids (they must).
Before timing, one process per project runs every query once (the OS page cache warm, and the
rows a search keeps in the store for unread memories written): what is left is the process's
own coldness.
``--profile``: one extra process prints where its first search's time goes (cProfile).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LIMIT = 20


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def child(spec: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    from aletheia import db
    from aletheia.capture.ingest import import_for_prompt
    import_for_prompt()  # what the hook imports before its search, through the hook's own list
    from aletheia import search
    from aletheia.search import SearchQuery
    imported = time.perf_counter()
    conn = db.connect(spec["db"], upgrade=False)
    connected = time.perf_counter()

    cpu: list[float] = []

    def one(q: str) -> tuple[float, list[str]]:
        t, c = time.perf_counter(), time.process_time()
        hits = search.search(conn, SearchQuery(q=q[:2000], project=spec["project"], limit=LIMIT, semantic=False))
        cpu.append((time.process_time() - c) * 1000)
        return (time.perf_counter() - t) * 1000, [h.id for h in hits]

    if spec.get("prime"):
        for q in spec["prime"]:
            one(q)
        return {}
    if spec.get("profile"):
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        one(spec["q"])
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
        return {}
    first, first_ids = one(spec["q"])
    second, second_ids = one(spec["q"])
    other, _ = one(spec["other"])
    return {"import": (imported - start) * 1000, "connect": (connected - imported) * 1000,
            "first": first, "second": second, "other": other, "first cpu": cpu[0],
            "second cpu": cpu[1], "other cpu": cpu[2], "same": first_ids == second_ids,
            "ids": first_ids}


def _spawn(spec: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    if spec.get("profile"):
        print(out.stderr)
        return {}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path)
    ap.add_argument("--part", default="dev-5", help="a tunable part (coding_data.TUNABLE_PARTS)")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--ranked", type=Path, help="write each run's first-search ids (JSON lines)")
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    # coding_data is imported here, not for --child: a child times its own imports.
    sys.path.insert(0, str(REPO / "bench"))
    import coding_data as cd

    if args.part not in cd.TUNABLE_PARTS:
        ap.error(f"--part must be a tunable part: {', '.join(cd.TUNABLE_PARTS)}")
    if args.base is None:
        ap.error("--base is required")

    texts = [q.text for q in cd.load(cd.folder(args.part)).part(args.part).questions]
    with tempfile.TemporaryDirectory(prefix="aletheia-cold-") as tmp:
        home = Path(tmp)
        shutil.copyfile(args.base / "hub.db", home / "hub.db")
        import sqlite3
        with sqlite3.connect(home / "hub.db") as src:
            projects = [str(r[0]) for r in src.execute("SELECT DISTINCT project FROM memory ORDER BY project")]
        os.environ["ALETHEIA_HOME"] = str(home)
        specs = [{"db": str(home / "hub.db"), "project": projects[i % len(projects)],
                  "q": texts[i % len(texts)], "other": texts[(i + 1) % len(texts)]}
                 for i in range(args.runs)]
        # Every query once first, in one process: the file into the OS page cache, as a hook
        # finds it, and what a search keeps in the store (aletheia.stated's rows for the unread
        # memories it reads) written, so a first search is not timed writing what later ones read.
        for project in dict.fromkeys(s["project"] for s in specs):
            _spawn({**specs[0], "project": project,
                    "prime": [x for s in specs if s["project"] == project for x in (s["q"], s["other"])]})
        if args.profile:
            _spawn({**specs[0], "profile": True})
            return 0
        rows = [_spawn(s) for s in specs]
    if args.ranked:
        args.ranked.write_text("".join(json.dumps(r["ids"]) + "\n" for r in rows))
    print(f"{args.part}: {len(rows)} fresh processes, 50k store, scoped search ({LIMIT} hits), wall ms; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'':10}{'median':>9}{'p95':>9}")
    for name in ("import", "connect", "first", "second", "other", "first cpu", "second cpu", "other cpu"):
        vals = [float(r[name]) for r in rows]
        print(f"{name:10}{statistics.median(vals):9.2f}{_p95(vals):9.2f}")
    ratio = [float(r["first"]) / max(0.01, float(r["second"])) for r in rows]
    ratio_cpu = [float(r["first cpu"]) / max(0.01, float(r["second cpu"])) for r in rows]
    print(f"first/second: median {statistics.median(ratio):.2f}, p95 {_p95(ratio):.2f} "
          f"(CPU: median {statistics.median(ratio_cpu):.2f}, p95 {_p95(ratio_cpu):.2f}); "
          f"same ids first and second: {sum(bool(r['same']) for r in rows)}/{len(rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

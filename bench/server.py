"""Server benchmark: REST search latency over loopback at 50,000 memories, and POST /v1/events
throughput with concurrent clients (and a count proving nothing was lost).

    .venv/bin/python bench/server.py [--rows 50000] [--queries 300] [--events 4000] [--clients 8]

Fixed seed.  The store is built with bench/scale.py's generator (Zipf vocabulary, sessions of
40, through the real write API); queries are 2–5 words from stored memories.  The server is the
real ``aletheia serve`` (uvicorn) in a subprocess on 127.0.0.1, with the bearer token; each
client keeps one connection alive.  Prints p50/p95 for REST search next to the same searches
in-process (the HTTP + JSON overhead is the difference), then events/s and the stored count,
then what erasing one memory costs at that size.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.scale import PROJECTS, SEED, Text, build, pct, queries  # noqa: E402

_LISTENING = re.compile(r"Uvicorn running on http://([\d.]+):(\d+)")


def start_server(home: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, ALETHEIA_HOME=str(home), PYTHONPATH=str(REPO))
    env.pop("ALETHEIA_API_KEY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "aletheia", "serve", "--port", "0", "--no-access-log"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        m = _LISTENING.search(line)
        if m:
            # Keep draining the pipe so the server never blocks on a full one.
            threading.Thread(target=lambda: [None for _ in proc.stdout or []], daemon=True).start()
            return proc, f"http://{m.group(1)}:{m.group(2)}"
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit("the server did not start")


def rest_search(url: str, token: str, qs: list[tuple[int, str]], *, scoped: bool) -> list[float]:
    import httpx

    out = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as c:
        for project, q in qs[:20]:  # warm the connection and the page cache
            c.get("/v1/search", params={"q": q, "project": f"/work/project-{project:02d}"})
        for project, q in qs:
            params = {"q": q, "limit": 10}
            if scoped:
                params["project"] = f"/work/project-{project:02d}"
            t = time.perf_counter()
            r = c.get("/v1/search", params=params)
            out.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.text
    return out


def local_search(conn: Any, qs: list[tuple[int, str]], *, scoped: bool) -> list[float]:
    from aletheia.search import SearchQuery, search

    out = []
    for project, q in qs:
        query = SearchQuery(q=q, project=f"/work/project-{project:02d}" if scoped else None,
                            limit=10)
        t = time.perf_counter()
        search(conn, query)
        out.append((time.perf_counter() - t) * 1000)
    return out


def post_events(url: str, token: str, events: int, clients: int) -> dict[str, Any]:
    import httpx

    per = events // clients
    statuses: list[list[int]] = [[] for _ in range(clients)]
    inserted = [0] * clients
    latencies: list[list[float]] = [[] for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)

    def client(n: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                          timeout=60) as c:
            c.get("/v1/health")
            barrier.wait()
            for i in range(per):
                body = {"host": "claude-code", "event": "PostToolUse", "project": "/work/bench-events",
                        "payload": {"session_id": f"bench-{n}", "tool_name": "Bash",
                                    "tool_use_id": f"c{n}-{i}",
                                    "tool_input": {"command": f"pytest -q tests/test_{i}.py"},
                                    "tool_response": {"stdout": f"{i % 7 + 1} passed in 0.{i}s"}}}
                t = time.perf_counter()
                r = c.post("/v1/events", json=body)
                latencies[n].append((time.perf_counter() - t) * 1000)
                statuses[n].append(r.status_code)
                if r.status_code == 200 and r.json().get("inserted"):
                    inserted[n] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for th in threads:
        th.start()
    barrier.wait()
    start = time.perf_counter()
    for th in threads:
        th.join()
    seconds = time.perf_counter() - start
    flat = [s for group in statuses for s in group]
    lat = [x for group in latencies for x in group]
    return {"sent": per * clients, "seconds": seconds, "ok": flat.count(200),
            "errors": len(flat) - flat.count(200), "inserted": sum(inserted),
            "p50": statistics.median(lat), "p95": pct(lat, 0.95)}


def rest_erase(url: str, token: str, conn: Any, n: int) -> list[float]:
    """POST /v1/erase of single memories: each one merges the FTS index and checkpoints."""
    import httpx

    picked = [r[0] for r in conn.execute(
        "SELECT id FROM memory WHERE project != '/work/bench-events' ORDER BY id LIMIT ?", (n,))]
    out = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                      timeout=120) as c:
        for memory_id in picked:
            t = time.perf_counter()
            r = c.post("/v1/erase", json={"ids": [memory_id]})
            out.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.text
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--events", type=int, default=4000)
    ap.add_argument("--clients", type=int, default=8)
    args = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="aletheia-bench-server-"))
    os.environ["ALETHEIA_HOME"] = str(home)
    from aletheia import db
    from aletheia.web import security

    rng = random.Random(SEED)
    conn = db.connect()
    t = time.perf_counter()
    _spent, samples = build(conn, args.rows, rng, Text(rng))
    built = time.perf_counter() - t
    qs = queries(rng, samples, args.queries)
    token = security.ensure_token()
    proc, url = start_server(home)
    try:
        rows = [
            ("REST search, project-scoped", rest_search(url, token, qs, scoped=True)),
            ("in-process search, project-scoped", local_search(conn, qs, scoped=True)),
            ("REST search, all projects", rest_search(url, token, qs, scoped=False)),
            ("in-process search, all projects", local_search(conn, qs, scoped=False)),
        ]
        ev = post_events(url, token, args.events, args.clients)
        erase_ms = rest_erase(url, token, conn, 5)
        stored = conn.execute(
            "SELECT count(*) FROM memory WHERE project = '/work/bench-events' AND source = 'rest'"
        ).fetchone()[0]
    finally:
        proc.terminate()
        proc.wait(30)
        conn.close()
        shutil.rmtree(home, ignore_errors=True)

    print(f"store: {args.rows:,} memories in {PROJECTS} projects (built in {built:.1f} s), "
          f"{args.queries} queries, seed {SEED}, server {url}")
    print(f"{'what':38} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for name, values in rows:
        print(f"{name:38} {statistics.median(values):8.2f} {pct(values, 0.95):8.2f} "
              f"{statistics.fmean(values):8.2f}")
    print()
    print(f"POST /v1/events, {args.clients} concurrent clients: {ev['sent']} sent in "
          f"{ev['seconds']:.2f} s = {ev['sent'] / ev['seconds']:.0f} req/s "
          f"(latency p50 {ev['p50']:.1f} ms, p95 {ev['p95']:.1f} ms)")
    print(f"  responses 200: {ev['ok']}, errors: {ev['errors']}, inserted: {ev['inserted']}, "
          f"rows in hub.db: {stored}, lost: {ev['sent'] - stored}")
    print(f"POST /v1/erase of one memory (FTS merge + WAL checkpoint): "
          f"p50 {statistics.median(erase_ms):.0f} ms, max {max(erase_ms):.0f} ms "
          f"({len(erase_ms)} erases)")


if __name__ == "__main__":
    main()

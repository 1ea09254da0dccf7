"""Does the context reach the agent on a saturated machine?  SessionStart and UserPromptSubmit
(per-prompt recall on) run as real hook processes, in the direct form the installers write,
while 2 × nproc CPU-bound loops run beside them.

1. A store is built from the coding-session set (``--part``, dev by default): captured through
   the hook's own code, compressed offline (``aletheia compress``), so the projects hold the
   knowledge, summaries and precomputed blocks a real one would.
2. Reference, no load: each prompt is asked once to learn whether its per-prompt block is
   empty by design (nothing passed the floor); those prompts do not count as "delivered" or not.
3. Under load (``--loops``, default 2 × nproc): ``--runs`` SessionStart runs (each a new
   session, projects in turn) and as many UserPromptSubmit runs (the set's questions in turn,
   each in a new session).  Per event: how many printed their block (and of the prompts that
   should have one, how many did), p50 and p95 wall time, and the same interpreter's
   ``-c pass`` in the same loop as the baseline (p95 ratio).  Blocks the hooks record as
   undelivered are counted too.

4. A large project (``--large``, default 3,000 memories; 0 leaves it out): after compression,
   the first project grows by that many memories copied from its own (its prompts, commands,
   output and answers, in sessions of 40 spread over its weeks), one in 25 a write of a
   ``--large-write-kb`` file (default 100 KB), through the real write API; its precomputed
   block is then stale, as after a day's capture before the worker ran.  Its runs are also
   reported apart, so the hooks' budgets are read on a project of thousands of memories too.

Fixed seed; a temp ALETHEIA_HOME; the loops are this script's own children and are stopped at
the end.  Timing on a shared machine is noisy: the load average is printed beside the figures.

    python bench/context_load.py [--runs 100] [--loops N] [--part dev|heldout|all]
                                 [--large 3000] [--large-write-kb 100] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_data as cd  # noqa: E402
import coding_replay as cr  # noqa: E402

HOOK = [sys.executable, "-I", "-S", str(REPO / "hooks" / "run.py")]
SEED = 12


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def block_of(stdout: str) -> str:
    text = stdout.strip()
    if text.startswith("{"):
        try:
            return str(json.loads(text)["hookSpecificOutput"]["additionalContext"])
        except (ValueError, KeyError, TypeError):
            return ""
    return text


def run(event: str, payload: dict[str, Any], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([*HOOK, "claude-code", event], input=json.dumps(payload).encode(),
                          cwd=cwd, env=env, capture_output=True, timeout=60)
    return time.perf_counter() - start, block_of(done.stdout.decode("utf-8", "replace"))


def baseline(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], env=env, check=False)
    return time.perf_counter() - start


def start_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_loops(loops: list[subprocess.Popen[bytes]]) -> None:
    for p in loops:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in loops:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()


def summary(times: list[float], base: list[float], printed: int, runs: int) -> dict[str, Any]:
    return {"runs": runs, "printed": printed, "p50_ms": round(1000 * statistics.median(times), 1),
            "p95_ms": round(1000 * pct(times, 0.95), 1),
            "baseline_p95_ms": round(1000 * pct(base, 0.95), 1),
            "p95_ratio": round(pct(times, 0.95) / max(1e-9, pct(base, 0.95)), 2)}


SESSION_LEN = 40
WRITE_EVERY = 25


def grow(project: str, memories: int, write_kb: int, rng: random.Random) -> dict[str, Any]:
    """``project`` (a store key) grown by ``memories`` copies of its own memories, in sessions
    of ``SESSION_LEN`` spread over its weeks, one in ``WRITE_EVERY`` a large file write, through
    the write API (``prepare`` + ``insert_rows``: redaction included)."""
    from aletheia import db
    from aletheia.store import MemoryIn, insert_rows, prepare

    conn = db.connect()
    try:
        own = conn.execute("SELECT kind, title, narrative, tool, created_at FROM memory WHERE project = ? "
                           "AND kind IN ('prompt', 'tool_event', 'response') ORDER BY created_at",
                           (project,)).fetchall()
        if not own or memories <= 0:
            return {"memories": 0, "writes": 0}
        first, last = int(own[0]["created_at"]), int(own[-1]["created_at"])
        start = time.perf_counter()
        batch: list[dict[str, Any]] = []
        writes = 0
        for i in range(memories):
            at = first + (last - first) * i // memories
            if i % WRITE_EVERY == WRITE_EVERY - 1:
                body = "\n".join(str(r["narrative"] or "") for r in rng.sample(own, min(len(own), 12)))
                body = (body * (1 + write_kb * 1024 // max(1, len(body))))[: write_kb * 1024]
                path = f"src/generated/part_{i}.txt"
                m = MemoryIn(project=project, kind="tool_event", title=f"Write {path}",
                             narrative=f'input: {json.dumps({"file_path": path, "content": body})}\n\noutput:\nok',
                             session_id=f"large-{i // SESSION_LEN}", tool="claude-code", source="hook",
                             created_at=at, event_key=f"large-{i}")
                writes += 1
            else:
                r = own[rng.randrange(len(own))]
                m = MemoryIn(project=project, kind=str(r["kind"]), title=str(r["title"]),
                             narrative=f"{r['narrative'] or ''}\n(copy {i})",
                             session_id=f"large-{i // SESSION_LEN}", tool=str(r["tool"] or "claude-code"),
                             source="hook", created_at=at, event_key=f"large-{i}")
            batch.append(prepare(m))
            if len(batch) >= 500:
                insert_rows(conn, batch)
                batch = []
        if batch:
            insert_rows(conn, batch)
        total = conn.execute("SELECT count(*) FROM memory WHERE project = ?", (project,)).fetchone()[0]
        return {"memories": memories, "writes": writes, "project_memories": int(total),
                "seconds": round(time.perf_counter() - start, 1)}
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="runs per event under load")
    parser.add_argument("--loops", type=int, default=2 * (os.cpu_count() or 1),
                        help="CPU-bound loops beside the hooks (default 2 × nproc)")
    parser.add_argument("--part", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--large", type=int, default=3000,
                        help="memories the first project grows by after compression (0: none)")
    parser.add_argument("--large-write-kb", type=int, default=100,
                        help="size of the large project's file writes (one memory in 25)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(SEED)
    compileall.compile_dir(str(REPO / "aletheia"), quiet=1)
    compileall.compile_dir(str(REPO / "hooks"), quiet=1)
    data = cd.load().part(args.part)
    with tempfile.TemporaryDirectory(prefix="aletheia-load-") as tmp:
        replay, meta = cr.build(data, Path(tmp), "inprocess", jobs=1, restamp_times=True,
                                run_compress=True)
        env = replay.env()
        projects = list(data.projects)
        large = projects[0] if args.large > 0 else None
        grown = grow(replay.keys[large], args.large, args.large_write_kb,
                                    random.Random(SEED + 1)) if large else {}
        questions = [q for q in data.questions if q.answer or q.answer_re]
        rng.shuffle(questions)
        asked = [questions[i % len(questions)] for i in range(args.runs)]
        # Reference, no load: which prompts have a per-prompt block at all.
        expected: dict[str, bool] = {}
        for q in {q.id: q for q in asked}.values():
            _, text = run("UserPromptSubmit", {"session_id": str(uuid.uuid4()), "prompt": q.text,
                                               "cwd": str(replay.repos[q.project])},
                          replay.repos[q.project], env)
            expected[q.id] = bool(text)
        from aletheia import blocks

        before = len(blocks.undelivered())
        loops = start_loops(args.loops)
        try:
            time.sleep(1.0)
            load = os.getloadavg()
            start_t: list[float] = []
            start_base: list[float] = []
            start_printed = 0
            big_start: list[float] = []
            big_start_printed = 0
            for i in range(args.runs):
                name = projects[i % len(projects)]
                took, text = run("SessionStart", {"session_id": str(uuid.uuid4()), "source": "startup",
                                                  "cwd": str(replay.repos[name])}, replay.repos[name], env)
                start_t.append(took)
                start_base.append(baseline(env))
                start_printed += text.startswith("<aletheia-memory>")
                if name == large:
                    big_start.append(took)
                    big_start_printed += text.startswith("<aletheia-memory>")
            prompt_t: list[float] = []
            prompt_base: list[float] = []
            prompt_printed = prompt_due = prompt_due_printed = 0
            big_prompt: list[float] = []
            big_prompt_printed = 0
            for q in asked:
                took, text = run("UserPromptSubmit", {"session_id": str(uuid.uuid4()), "prompt": q.text,
                                                      "cwd": str(replay.repos[q.project])},
                                 replay.repos[q.project], env)
                prompt_t.append(took)
                prompt_base.append(baseline(env))
                prompt_printed += bool(text)
                if q.project == large:
                    big_prompt.append(took)
                    big_prompt_printed += bool(text)
                if expected[q.id]:
                    prompt_due += 1
                    prompt_due_printed += bool(text)
            load_after = os.getloadavg()
        finally:
            stop_loops(loops)
        out = {
            "part": args.part, "loops": args.loops, "nproc": os.cpu_count(),
            "load_avg_start": [round(x, 1) for x in load], "load_avg_end": [round(x, 1) for x in load_after],
            "store": meta.get("store"),
            "session_start": summary(start_t, start_base, start_printed, args.runs),
            "user_prompt_submit": {**summary(prompt_t, prompt_base, prompt_printed, args.runs),
                                   "with_a_block_expected": prompt_due,
                                   "printed_of_expected": prompt_due_printed},
            "undelivered_recorded": len(blocks.undelivered()) - before,
        }
        if large:
            out["large_project"] = {
                "project": large, **grown,
                "session_start": summary(big_start, start_base, big_start_printed, len(big_start))
                if big_start else None,
                "user_prompt_submit": summary(big_prompt, prompt_base, big_prompt_printed, len(big_prompt))
                if big_prompt else None}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"context under load: {args.loops} CPU-bound loops on {os.cpu_count()} cores "
          f"(load avg {out['load_avg_start']} → {out['load_avg_end']}; a shared machine: noisy)")
    for key, label in (("session_start", "SessionStart"), ("user_prompt_submit", "UserPromptSubmit")):
        r = out[key]
        extra = (f"; of {r['with_a_block_expected']} prompts with a block when idle, "
                 f"{r['printed_of_expected']} printed it" if key == "user_prompt_submit" else "")
        print(f"  {label:17} printed {r['printed']}/{r['runs']}{extra}; p50 {r['p50_ms']} ms, "
              f"p95 {r['p95_ms']} ms (python -c pass p95 {r['baseline_p95_ms']} ms, ratio {r['p95_ratio']})")
    print(f"  undelivered blocks recorded: {out['undelivered_recorded']}")
    big = out.get("large_project")
    if big:
        print(f"  large project {big['project']}: +{big['memories']} memories ({big['writes']} writes of "
              f"{args.large_write_kb} KB; {big.get('project_memories', 0)} in all, written in "
              f"{big.get('seconds', 0)} s)")
        for key, label in (("session_start", "SessionStart"), ("user_prompt_submit", "UserPromptSubmit")):
            r = big[key]
            if r:
                print(f"    {label:15} printed {r['printed']}/{r['runs']}; p50 {r['p50_ms']} ms, "
                      f"p95 {r['p95_ms']} ms (python -c pass p95 {r['baseline_p95_ms']} ms, "
                      f"ratio {r['p95_ratio']})")


if __name__ == "__main__":
    main()

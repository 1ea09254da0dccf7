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

Fixed seed; a temp ALETHEIA_HOME; the loops are this script's own children and are stopped at
the end.  Timing on a shared machine is noisy: the load average is printed beside the figures.

    python bench/context_load.py [--runs 100] [--loops N] [--part dev|heldout|all] [--json]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="runs per event under load")
    parser.add_argument("--loops", type=int, default=2 * (os.cpu_count() or 1),
                        help="CPU-bound loops beside the hooks (default 2 × nproc)")
    parser.add_argument("--part", choices=("dev", "heldout", "all"), default="dev")
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
            for i in range(args.runs):
                name = projects[i % len(projects)]
                took, text = run("SessionStart", {"session_id": str(uuid.uuid4()), "source": "startup",
                                                  "cwd": str(replay.repos[name])}, replay.repos[name], env)
                start_t.append(took)
                start_base.append(baseline(env))
                start_printed += text.startswith("<aletheia-memory>")
            prompt_t: list[float] = []
            prompt_base: list[float] = []
            prompt_printed = prompt_due = prompt_due_printed = 0
            for q in asked:
                took, text = run("UserPromptSubmit", {"session_id": str(uuid.uuid4()), "prompt": q.text,
                                                      "cwd": str(replay.repos[q.project])},
                                 replay.repos[q.project], env)
                prompt_t.append(took)
                prompt_base.append(baseline(env))
                prompt_printed += bool(text)
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


if __name__ == "__main__":
    main()

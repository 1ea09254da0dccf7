"""What the context carries on the coding-session set (bench/data/coding/): the SessionStart
block and the per-prompt block, through the real hooks, after offline compression.

    .venv/bin/python bench/context_recall.py [--part dev|heldout|all|dev-extra|dev-3|heldout-2|heldout-3|heldout-4] [--json]

``--part dev-extra`` replays the small projects of other stacks in ``bench/data/coding/dev-extra/``
instead (tuned on like dev; see its README), ``--part dev-3`` the four projects of
``bench/data/coding/dev-3/`` (tuned on too, written as hard as real sessions).  ``--part
heldout-2``, ``--part heldout-3`` and
``--part heldout-4`` replay the second to fourth held-out parts in ``bench/data/coding/heldout-2/``,
``heldout-3/`` and ``heldout-4/`` (four more projects each): report-only, never tuned on.

1. Every project's sessions are replayed through **real hook processes** in the command form
   ``aletheia install claude-code --project`` writes into the project's git repository
   (``--capture cli`` uses ``aletheia hook claude-code <Event>`` instead); the spool is
   replayed; memories get their event's time from the data (``--no-restamp`` keeps capture
   time); then ``aletheia compress`` runs (offline default).
2. **SessionStart**: the installed SessionStart hook runs in each repository for a new session
   (``--start-runs`` times; an empty run is counted, the first non-empty block is scored).
   The block is read from its JSON output (``hookSpecificOutput.additionalContext``, or plain
   stdout).  Scored: the share of the "what does this project use / prefer / run" questions
   (``block = true``) whose short answer is in the block (case-insensitive, whole word,
   variants accepted); the block's size; for knowledge updates, whether the block shows the
   current answer, the superseded one, and the current one only.  ``aletheia facts --json`` is
   checked the same way for knowledge updates.
3. **Per prompt**: for every question with a short answer, the installed UserPromptSubmit hook
   runs with the question as the prompt in a fresh session, on a fresh copy of the compressed
   store (so earlier questions never become memories); the share whose answer is in the block
   it prints, and the prompts that got no block at all.  Of those, the ones where the hook was
   cut short (it left its prompt in the spool: the watchdog or a lock ended it before the
   write, so it had no chance to print) are counted apart from the ones it completed and
   printed nothing for (no per-prompt recall, or nothing passed its floor).  No-answer
   questions report how many got a block anyway.

Per-prompt recall is reported as it is: where the hook prints nothing, that is "no block".
The dev part (ledgerline, pulseboard) may be tuned on; the held-out part only reported on.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coding_data as cd  # noqa: E402
import coding_replay as cr  # noqa: E402
from coding_talk import talk_only  # noqa: E402


def block_text(stdout: str) -> str:
    """The context a hook printed: ``additionalContext`` from its JSON, or the plain text."""
    text = stdout.strip()
    if not text:
        return ""
    if text.startswith("{"):
        try:
            out = json.loads(text)
        except ValueError:
            return text
        if isinstance(out, dict):
            spec = out.get("hookSpecificOutput")
            if isinstance(spec, dict):
                return str(spec.get("additionalContext") or "")
            return str(out.get("additionalContext") or out.get("systemMessage") or "")
    return text


@dataclass
class StartResult:
    project: str
    block: str
    runs: int
    empty_runs: int
    ms: list[float] = field(default_factory=list)


@dataclass
class PromptResult:
    question: cd.Question
    block: str
    ms: float
    cut_short: bool = False  # the hook spooled its prompt instead of writing it

    @property
    def answered(self) -> bool:
        return bool(self.block) and self.question.answered_by(self.block)


def _hook_command(replay: cr.Replay, project: str, event: str, mode: str) -> list[str] | str:
    if mode == "cli":
        return [*cr.aletheia_cmd(), "hook", cr.HOST, event]
    commands = cr._installed_commands(replay, project)
    if event not in commands:
        raise cr.ReplayError(f"`aletheia install {cr.HOST}` writes no {event} hook")
    return commands[event]


def _fresh(event: str, repo: Path, **fields: str) -> dict[str, Any]:
    sid = str(uuid.uuid4())
    return {"session_id": sid, "transcript_path": f"/home/dev/.claude/projects/x/{sid}.jsonl",
            "cwd": str(repo), "hook_event_name": event, **fields}


def session_start(replay: cr.Replay, project: str, mode: str, runs: int) -> StartResult:
    cmd = _hook_command(replay, project, "SessionStart", mode)
    repo = replay.repos[project]
    out = StartResult(project, "", 0, 0)
    for _ in range(max(1, runs)):
        start = time.perf_counter()
        printed = cr.run_hook_process(cmd, _fresh("SessionStart", repo, source="startup"), repo,
                                      replay.env())
        out.ms.append((time.perf_counter() - start) * 1000)
        out.runs += 1
        block = block_text(printed)
        if not block:
            out.empty_runs += 1
        elif not out.block:
            out.block = block
    return out


def active_facts(replay: cr.Replay, project: str) -> list[str]:
    done = subprocess.run([*cr.aletheia_cmd(), "facts", "--json", "-n", "1000"],
                          cwd=replay.repos[project], env=replay.env(), capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise cr.ReplayError(f"aletheia facts failed: {done.stderr.strip()[-300:]}")
    items = json.loads(done.stdout or "[]")
    return [str(i.get("text", "")) for i in items if isinstance(i, dict)]


class StoreSnapshot:
    """A copy of hub.db to put back before each prompt (a prompt is captured as a memory)."""

    def __init__(self, home: Path) -> None:
        from aletheia import db

        conn = db.connect()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        self.home = home
        self.copy = home.parent / "hub.db.snapshot"
        shutil.copyfile(home / "hub.db", self.copy)

    def spooled(self) -> bool:
        spool = self.home / "spool"
        return spool.is_dir() and any(p.is_file() and p.stat().st_size > 0
                                      for p in spool.iterdir())

    def restore(self) -> None:
        for name in ("hub.db-wal", "hub.db-shm"):
            (self.home / name).unlink(missing_ok=True)
        spool = self.home / "spool"
        if spool.is_dir():
            shutil.rmtree(spool)
        shutil.copyfile(self.copy, self.home / "hub.db")


def per_prompt(replay: cr.Replay, questions: list[cd.Question], mode: str) -> list[PromptResult]:
    snapshot = StoreSnapshot(replay.home)
    commands = {p: _hook_command(replay, p, "UserPromptSubmit", mode)
                for p in {q.project for q in questions}}
    out: list[PromptResult] = []
    env = replay.env()
    for q in questions:
        snapshot.restore()
        repo = replay.repos[q.project]
        start = time.perf_counter()
        printed = cr.run_hook_process(commands[q.project],
                                      _fresh("UserPromptSubmit", repo, prompt=q.text), repo, env)
        ms = (time.perf_counter() - start) * 1000
        out.append(PromptResult(q, block_text(printed), ms, snapshot.spooled()))
    snapshot.restore()
    return out


def _pct(n: int, d: int) -> float:
    return round(100 * n / d, 1) if d else 0.0


def summarise(part: str, data: cd.DataSet, starts: dict[str, StartResult],
              facts: dict[str, list[str]], prompts: list[PromptResult]) -> dict[str, Any]:
    sub = data.part(part)
    block_qs = [q for q in sub.questions if q.block]
    found = [q for q in block_qs if q.answered_by(starts[q.project].block)]
    ku = [q for q in sub.questions if q.category == "knowledge-update"]
    cur = [q for q in ku if q.answered_by(starts[q.project].block)]
    old = [q for q in ku if q.shows_old(starts[q.project].block)]
    only = [q for q in cur if q not in old]
    fact_text = {p: "\n".join(facts.get(p, [])) for p in sub.projects}
    f_cur = [q for q in ku if q.answered_by(fact_text[q.project])]
    f_old = [q for q in ku if q.shows_old(fact_text[q.project])]
    by_cat: dict[str, dict[str, Any]] = {}
    for cat in cd.BLOCK_CATEGORIES:
        qs = [q for q in block_qs if q.category == cat]
        if qs:
            by_cat[cat] = {"n": len(qs), "in_block": _pct(sum(q in found for q in qs), len(qs))}
    out: dict[str, Any] = {
        "session_start": {
            "questions": len(block_qs),
            "answer_in_block": _pct(len(found), len(block_qs)),
            "by_category": by_cat,
            "block_chars": {p: len(starts[p].block) for p in sorted(sub.projects)},
            "empty_runs": {p: f"{starts[p].empty_runs}/{starts[p].runs}" for p in sorted(sub.projects)},
            "hook_ms_median": {p: round(statistics.median(starts[p].ms), 1) for p in sorted(sub.projects)},
            "knowledge_updates": {
                "n": len(ku), "current_shown": _pct(len(cur), len(ku)),
                "superseded_shown": _pct(len(old), len(ku)),
                "current_only": _pct(len(only), len(ku)),
            },
            "facts_knowledge_updates": {
                "active_facts": {p: len(facts.get(p, [])) for p in sorted(sub.projects)},
                "current_shown": _pct(len(f_cur), len(ku)),
                "superseded_shown": _pct(len(f_old), len(ku)),
            },
        },
        "missed_in_block": [q.id for q in block_qs if q not in found],
        "by_project": {},
    }
    for p in sorted(sub.projects):
        mine_b = [q for q in block_qs if q.project == p]
        out["by_project"][p] = {"block_qs": len(mine_b),
                                "in_block": _pct(sum(q in found for q in mine_b), len(mine_b))}
    mine = [r for r in prompts if r.question.part == part]
    for p, row in out["by_project"].items():
        rows = [r for r in mine if r.question.project == p and r.question.category != "no-answer"]
        if rows:
            row["prompts"] = len(rows)
            row["prompt_answered"] = _pct(sum(r.answered for r in rows), len(rows))
            row["prompt_no_block"] = sum(not r.block for r in rows)
            row["no_answer_with_block"] = sum(bool(r.block) for r in mine if r.question.project == p
                                              and r.question.category == "no-answer")
    if mine:
        answerable = [r for r in mine if r.question.category != "no-answer"]
        blank = [r for r in answerable if not r.block]
        out["per_prompt"] = {
            "questions": len(answerable),
            "answer_in_block": _pct(sum(r.answered for r in answerable), len(answerable)),
            "no_block": len(blank),
            "no_block_hook_cut_short": sum(r.cut_short for r in blank),
            "block_chars_median": (round(statistics.median(len(r.block) for r in answerable if r.block))
                                   if len(blank) < len(answerable) else 0),
            "no_answer_questions_with_a_block": sum(bool(r.block) for r in mine
                                                    if r.question.category == "no-answer"),
            "no_answer_questions": sum(r.question.category == "no-answer" for r in mine),
            "hook_ms_median": round(statistics.median(r.ms for r in mine), 1),
            "missed": [r.question.id for r in answerable if not r.answered],
            "no_answer_with_block": [r.question.id for r in mine
                                     if r.question.category == "no-answer" and r.block],
            # knowledge updates asked as the prompt: the block shows the current answer, the
            # superseded one, the current one only
            "knowledge_updates": _prompt_updates([r for r in answerable
                                                  if r.question.category == "knowledge-update"]),
            "by_category": {
                cat: _pct(sum(r.answered for r in answerable if r.question.category == cat),
                          sum(r.question.category == cat for r in answerable))
                for cat in cd.CATEGORIES if cat != "no-answer"
                and any(r.question.category == cat for r in answerable)},
        }
    return out


def _prompt_updates(rows: list[PromptResult]) -> dict[str, Any]:
    cur = [r for r in rows if r.answered]
    old = [r for r in rows if r.question.shows_old(r.block)]
    return {"n": len(rows), "current_shown": _pct(len(cur), len(rows)),
            "superseded_shown": _pct(len(old), len(rows)),
            "current_only": _pct(sum(r not in old for r in cur), len(rows))}


def print_part(part: str, info: dict[str, Any], s: dict[str, Any], by_project: bool = False) -> None:
    print(f"\n== part {part}: {', '.join(info['projects'])} ==")
    st = s["session_start"]
    print(f"SessionStart block: answer in block for {st['answer_in_block']:.1f}% of "
          f"{st['questions']} use/prefer/run questions")
    print("  by category: " + ", ".join(f"{c} {v['in_block']:.0f}% (n={v['n']})"
                                         for c, v in st["by_category"].items()))
    for p, chars in st["block_chars"].items():
        print(f"  {p}: block {chars} chars; empty runs {st['empty_runs'][p]}; "
              f"hook median {st['hook_ms_median'][p]} ms")
    k = st["knowledge_updates"]
    print(f"  knowledge updates (n={k['n']}): current shown {k['current_shown']:.1f}%, "
          f"superseded shown {k['superseded_shown']:.1f}%, current only {k['current_only']:.1f}%")
    f = st["facts_knowledge_updates"]
    print(f"  `aletheia facts` (active: {', '.join(f'{p} {n}' for p, n in f['active_facts'].items())}): "
          f"current shown {f['current_shown']:.1f}%, superseded shown {f['superseded_shown']:.1f}%")
    pp = s.get("per_prompt")
    if pp:
        print(f"Per-prompt block: answer in block for {pp['answer_in_block']:.1f}% of "
              f"{pp['questions']} questions; no block for {pp['no_block']} "
              f"({pp['no_block_hook_cut_short']} of them cut short by the watchdog or a lock); "
              f"median block {pp['block_chars_median']} chars; hook median {pp['hook_ms_median']} ms")
        print(f"  no-answer questions that got a block anyway: "
              f"{pp['no_answer_questions_with_a_block']}/{pp['no_answer_questions']}")
        print("  by category: " + ", ".join(f"{c} {v:.0f}%" for c, v in pp["by_category"].items()))
        k = pp["knowledge_updates"]
        print(f"  knowledge updates (n={k['n']}): current shown {k['current_shown']:.1f}%, "
              f"superseded shown {k['superseded_shown']:.1f}%, current only {k['current_only']:.1f}%")
    if by_project:
        print("by project:")
        for p, row in s["by_project"].items():
            line = f"  {p}: SessionStart {row['in_block']:.1f}% of {row['block_qs']}"
            if "prompts" in row:
                line += (f"; per-prompt {row['prompt_answered']:.1f}% of {row['prompts']}, "
                         f"no block {row['prompt_no_block']}, no-answer with a block "
                         f"{row['no_answer_with_block']}")
            print(line)


def print_misses(prompts: list[PromptResult]) -> None:
    """Each per-prompt miss with the block it got, for reading why the answer is not there."""
    for r in prompts:
        q = r.question
        wrong = q.category == "no-answer" and bool(r.block)
        if not wrong and (q.category == "no-answer" or r.answered):
            continue
        head = "NO-ANSWER GOT A BLOCK" if wrong else "MISS"
        answer = q.answer_re or " | ".join(q.answer)
        print(f"\n### {head} {q.id} [{q.category}] {q.text}\n    answer: {answer}")
        print(r.block if r.block else "    (no block)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="What the SessionStart and per-prompt blocks carry (see the module doc).")
    parser.add_argument("--part", choices=("dev", "heldout", "all", *cd.FOLDERS), default="all",
                        help="dev-extra, dev-3, dev-4, dev-5, dev-6, dev-7, dev-8, dev-9: tuned "
                             "on like dev; heldout-2, heldout-3, heldout-4: the second to fourth "
                             "held-out parts (report only); dev-10: stop 31's fresh yardstick "
                             "(not tuned on in that stop)")
    parser.add_argument("--capture", choices=("installed", "cli"), default="installed",
                        help="hook processes in the form `aletheia install` writes (default) "
                             "or `aletheia hook claude-code <Event>`")
    parser.add_argument("--jobs", type=int, default=3, help="projects replayed side by side")
    parser.add_argument("--start-runs", type=int, default=3, help="SessionStart runs per project")
    parser.add_argument("--no-prompts", action="store_true", help="skip per-prompt recall")
    parser.add_argument("--no-restamp", action="store_true",
                        help="keep capture times instead of the sessions' own (weeks apart)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--by-project", action="store_true",
                        help="a row per project (SessionStart and per-prompt shares)")
    parser.add_argument("--show-blocks", action="store_true", help="print each SessionStart block")
    parser.add_argument("--misses", action="store_true",
                        help="print each per-prompt miss (tunable parts only): the question, its "
                             "category and answer, and the block it got; and each no-answer "
                             "question that got a block")
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
        with cr.workdir(args.tmp, "aletheia-context-", args.keep) as root:
            replay, meta = cr.build(data, root, args.capture, jobs=args.jobs,
                                    restamp_times=not args.no_restamp, run_compress=True)
            projects = [p for p in data.projects if data.projects[p].part in parts]
            starts = {p: session_start(replay, p, args.capture, args.start_runs) for p in projects}
            facts = {p: active_facts(replay, p) for p in projects}
            prompts: list[PromptResult] = []
            if not args.no_prompts:
                asked = [q for q in data.questions if q.part in parts
                         and (q.answer or q.answer_re or q.category == "no-answer")]
                start = time.perf_counter()
                prompts = per_prompt(replay, asked, args.capture)
                meta["prompts_s"] = round(time.perf_counter() - start, 1)
    except cr.ReplayError as exc:
        print(f"context_recall: {exc}", file=sys.stderr)
        return 1
    counts = cd.counts(data)
    result: dict[str, Any] = {"meta": meta, "parts": {
        part: summarise(part, data, starts, facts, prompts) for part in parts}}
    if args.show_blocks or args.json:
        result["blocks"] = {p: s.block for p, s in starts.items()}
    if args.json:
        result["prompt_blocks"] = {r.question.id: r.block for r in prompts}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"capture: {args.capture} hook processes ({meta['events_sent']} events in "
          f"{meta['capture_s']} s, spool replayed: {meta['spool_replayed']}); compress: "
          f"{meta['compress'].get('seconds')} s; store: {meta['store']['memories']} memories, "
          f"{meta['store']['facts']} facts")
    for part in parts:
        print_part(part, counts[part], result["parts"][part], args.by_project)
    if args.misses:
        print_misses(prompts)
    if args.show_blocks:
        for p, block in result["blocks"].items():
            print(f"\n--- SessionStart block of {p} ({len(block)} chars) ---\n{block}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

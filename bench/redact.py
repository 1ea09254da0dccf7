"""Throughput of ``aletheia.redact.redact`` on a synthetic tool-output log (the hook's hot path).

Builds a log of at least ``--mb`` MB with a fixed seed: shell sessions, git and pip output, JSON
API responses, application logs, Python and Java stack traces, source code, YAML, test runs,
with a sprinkling of fake secrets and look-alikes from the test corpus. Redacts it ``--runs``
times and prints the median, p95 and best MB/s (UTF-8 bytes per second); with ``--baseline REV``
it times the redact.py of that git revision in the same loop and prints the ratio.

    python bench/redact.py [--mb 10] [--runs 7] [--corpus first|full] [--baseline main]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from aletheia.redact import redact  # noqa: E402
from tests.redact_corpus import Fake, build, first_corpus  # noqa: E402

WORDS = ("user session cache worker request response config build deploy token queue retry "
         "timeout connect database migration index search memory project payload handler "
         "client server upload download parse render schema record batch stream event").split()
PKGS = "click huey starlette uvicorn httpx pydantic numpy requests urllib3 rich anyio idna".split()


def word(rng: random.Random) -> str:
    return rng.choice(WORDS)


def ident(rng: random.Random) -> str:
    return "_".join(word(rng) for _ in range(rng.randint(1, 3)))


def stamp(rng: random.Random) -> str:
    return (f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def ls_la(rng: random.Random, fake: Fake) -> str:
    rows = ["total 128"]
    for _ in range(rng.randint(5, 20)):
        rows.append(f"-rw-r--r--  1 jane staff {rng.randint(0, 99999):>6} May {rng.randint(1, 28):>2} "
                    f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {ident(rng)}.py")
    return "$ ls -la\n" + "\n".join(rows)


def git_log(rng: random.Random, fake: Fake) -> str:
    out = ["$ git log -n 3"]
    for _ in range(3):
        out += [f"commit {fake.sha('sha1')}", "Author: Jane Doe <jane@example.com>",
                "Date:   Tue May 14 09:21:07 2024 +0200", "", f"    {word(rng)}: fix {ident(rng)}", ""]
    return "\n".join(out)


def git_status(rng: random.Random, fake: Fake) -> str:
    files = "\n".join(f"\tmodified:   aletheia/{ident(rng)}.py" for _ in range(rng.randint(1, 8)))
    return f"$ git status\nOn branch main\nChanges not staged for commit:\n{files}\n"


def pip_install(rng: random.Random, fake: Fake) -> str:
    out = [f"$ pip install {' '.join(rng.sample(PKGS, 3))}"]
    for pkg in rng.sample(PKGS, 5):
        v = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        out.append(f"Collecting {pkg}=={v}\n  Downloading {pkg}-{v}-py3-none-any.whl ({rng.randint(10, 900)} kB)")
        out.append(f"     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ {rng.randint(10, 900)}/900 kB 12.3 MB/s eta 0:00:00")
    out.append("Successfully installed " + " ".join(f"{p}-1.{rng.randint(0, 9)}" for p in rng.sample(PKGS, 4)))
    return "\n".join(out)


def pytest_run(rng: random.Random, fake: Fake) -> str:
    out = ["$ pytest -q", "============================= test session starts =============================="]
    for i in range(rng.randint(10, 40)):
        status = rng.choice(["PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"])
        out.append(f"tests/test_{word(rng)}.py::test_{ident(rng)}[{i}] {status} [{rng.randint(1, 99):>3}%]")
    out.append(f"===== {rng.randint(1, 300)} passed, {rng.randint(0, 5)} failed in {rng.random() * 30:.2f}s =====")
    return "\n".join(out)


def json_api(rng: random.Random, fake: Fake) -> str:
    items = [{"id": fake.uuid(), "name": ident(rng), "created_at": stamp(rng), "size": rng.randint(0, 10**6),
              "tags": rng.sample(WORDS, 3), "checksum": fake.sha("md5"), "active": rng.random() < 0.5,
              "owner": {"login": word(rng), "id": rng.randint(1, 10**7), "url": f"https://api.example.com/users/{word(rng)}"}}
             for _ in range(rng.randint(1, 6))]
    body = {"data": items, "page": rng.randint(1, 9), "total": rng.randint(10, 999), "max_tokens": 4096}
    return json.dumps(body, indent=2 if rng.random() < 0.5 else None, ensure_ascii=False)


def app_log(rng: random.Random, fake: Fake) -> str:
    out = []
    for _ in range(rng.randint(10, 40)):
        level = rng.choice(["INFO", "INFO", "DEBUG", "WARN", "ERROR"])
        out.append(f"{stamp(rng)} {level:<5} [{word(rng)}-{rng.randint(1, 8)}] {word(rng)}.{word(rng)}: "
                   f"{word(rng)} {ident(rng)} took={rng.randint(1, 999)}ms id={fake.uuid()} status={rng.choice([200, 201, 404, 500])}")
    return "\n".join(out)


def py_traceback(rng: random.Random, fake: Fake) -> str:
    frames = "".join(f'  File "/srv/app/{word(rng)}/{ident(rng)}.py", line {rng.randint(1, 999)}, in {ident(rng)}\n'
                     f"    {ident(rng)} = {ident(rng)}({word(rng)}, timeout={rng.randint(1, 60)})\n"
                     for _ in range(rng.randint(2, 8)))
    return f"Traceback (most recent call last):\n{frames}KeyError: '{ident(rng)}'"


def java_trace(rng: random.Random, fake: Fake) -> str:
    frames = "\n".join(f"\tat com.acme.{word(rng)}.{word(rng).title()}Service.{word(rng)}({word(rng).title()}.java:{rng.randint(1, 999)})"
                       for _ in range(rng.randint(3, 12)))
    return f"Exception in thread \"main\" java.lang.IllegalStateException: {word(rng)} failed\n{frames}"


def py_code(rng: random.Random, fake: Fake) -> str:
    name = ident(rng)
    return (f"def {name}(self, {word(rng)}: str, *, timeout: float = 3.0) -> dict[str, object]:\n"
            f'    """Return the {word(rng)} for a {word(rng)}."""\n'
            f"    token = self.tokenizer.encode({word(rng)})\n"
            f"    api_key = self.config.api_key\n"
            f"    if token is None:\n        raise ValueError(\"no {word(rng)}\")\n"
            f"    password = os.environ.get(\"DB_PASSWORD\")\n"
            f"    return {{\"{word(rng)}\": {ident(rng)}, \"count\": len({word(rng)})}}\n")


def js_code(rng: random.Random, fake: Fake) -> str:
    return (f"export async function {word(rng)}{word(rng).title()}(req, res) {{\n"
            f"  const token = await getToken(req.headers['{word(rng)}']);\n"
            f"  const apiKey = process.env.API_KEY;\n"
            f"  return res.status(200).json({{ ok: true, {word(rng)}: {rng.randint(0, 99)} }});\n}}\n")


def k8s_yaml(rng: random.Random, fake: Fake) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {word(rng)}-{word(rng)}\n"
            f"spec:\n  replicas: {rng.randint(1, 5)}\n  template:\n    spec:\n      containers:\n"
            f"        - name: app\n          image: ghcr.io/acme/{word(rng)}:{rng.randint(1, 9)}.{rng.randint(0, 20)}\n"
            f"          env:\n            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n"
            f"                  name: pg\n                  key: password\n")


def diff(rng: random.Random, fake: Fake) -> str:
    f = f"aletheia/{ident(rng)}.py"
    lines = "\n".join(rng.choice("+- ") + f"    {ident(rng)} = {ident(rng)}({rng.randint(0, 9)})" for _ in range(rng.randint(3, 15)))
    return f"diff --git a/{f} b/{f}\nindex {fake.sha('sha1')[:7]}..{fake.sha('sha1')[:7]} 100644\n--- a/{f}\n+++ b/{f}\n@@ -1,7 +1,8 @@\n{lines}"


def npm_install(rng: random.Random, fake: Fake) -> str:
    tree = "\n".join(f"{rng.choice(['├──', '└──'])} {word(rng)}@{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}" for _ in range(rng.randint(3, 10)))
    return f"$ npm ls\nacme-web@1.0.0 /home/jane/acme-web\n{tree}\n✨ added {rng.randint(1, 900)} packages in {rng.randint(1, 30)}s 🚀"


def prose(rng: random.Random, fake: Fake) -> str:
    return " ".join(rng.choice(WORDS + ["the", "a", "of", "to", "and", "is", "für", "naïve", "café"])
                    for _ in range(rng.randint(20, 80))) + "."


BLOCKS: tuple[Callable[[random.Random, Fake], str], ...] = (
    ls_la, git_log, git_status, pip_install, pytest_run, json_api, json_api, app_log, app_log,
    py_traceback, java_trace, py_code, js_code, k8s_yaml, diff, npm_install, prose,
)


def build_log(target_bytes: int, seed: int = 1234, corpus: str = "first") -> str:
    """``corpus="first"`` sprinkles the corpus as it was before issue 13, so the figure stays
    comparable across changes; ``"full"`` sprinkles today's (every attack family)."""
    rng = random.Random(seed)
    fake = Fake(rng)
    cases = first_corpus(seed) if corpus == "first" else build(seed)
    # Not the cases that hide everything after them (an unclosed tag, a cut-off key).
    positives = [c.text for c in cases if c.secrets and "unclosed" not in c.id and "unterminated" not in c.id
                 and (corpus == "first" or c.family != "private_tag")]
    negatives = [c.text for c in cases if not c.secrets]
    parts: list[str] = []
    size = 0
    while size < target_bytes:
        roll = rng.random()
        if roll < 0.02:
            block = rng.choice(positives)  # a sprinkling of secrets
        elif roll < 0.05:
            block = rng.choice(negatives)
        else:
            block = rng.choice(BLOCKS)(rng, fake)
        parts.append(block)
        size += len(block.encode()) + 1
    return "\n".join(parts)


def _baseline(rev: str) -> Callable[[str], str]:
    """``redact`` as it is at git revision ``rev``, loaded beside the current one, so both run
    in the same loop on the same (shared, noisy) machine and the ratio is what compares."""
    source = subprocess.run(["git", "show", f"{rev}:aletheia/redact.py"], cwd=REPO, check=True,
                            capture_output=True).stdout
    folder = Path(tempfile.mkdtemp())
    # (the decoder it reads escaped text with, as it was then too: the current one would time
    # the new decoding in both)
    helper = subprocess.run(["git", "show", f"{rev}:aletheia/unescape.py"], cwd=REPO,
                            capture_output=True)
    if helper.returncode == 0 and b"from aletheia.unescape import" in source:
        (folder / "unescape_baseline.py").write_bytes(helper.stdout)
        sys.path.insert(0, str(folder))
        source = source.replace(b"from aletheia.unescape import", b"from unescape_baseline import")
    path = folder / "redact_baseline.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("redact_baseline", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn: Callable[[str], str] = module.redact
    return fn


def _figures(times: list[float], mb: float) -> str:
    med = statistics.median(times)
    p95 = sorted(times)[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return (f"median {med * 1000:.0f} ms = {mb / med:.1f} MB/s, p95 {p95 * 1000:.0f} ms = "
            f"{mb / p95:.1f} MB/s, best {mb / min(times):.1f} MB/s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", choices=("first", "full"), default="first",
                        help="which corpus the log sprinkles (first: comparable with earlier runs)")
    parser.add_argument("--baseline", metavar="REV", help="also time aletheia/redact.py at this git "
                        "revision, interleaved with the current one, and print the ratio")
    args = parser.parse_args()
    text = build_log(int(args.mb * 1_000_000), corpus=args.corpus)
    nbytes = len(text.encode())
    mb = nbytes / 1e6
    contenders: list[tuple[str, Callable[[str], str]]] = [("current", redact)]
    if args.baseline:
        contenders.append((f"at {args.baseline}", _baseline(args.baseline)))
    outputs = {name: fn(text) for name, fn in contenders}  # warm-up, and the marker counts
    times: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for _ in range(args.runs):
        for name, fn in contenders:
            start = time.perf_counter()
            fn(text)
            times[name].append(time.perf_counter() - start)
    print(f"redact throughput ({sys.version.split()[0]}, seed 1234, {args.corpus} corpus, "
          f"{mb:.2f} MB, {text.count(chr(10)) + 1} lines, {args.runs} runs)")
    print(f"  load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} CPUs (a shared machine: compare ratios)")
    for name, _ in contenders:
        out = outputs[name]
        print(f"  {name:<14} {_figures(times[name], mb)}; "
              f"{out.count('[redacted')} redacted, {out.count('[private]')} private")
    if args.baseline:
        base = statistics.median(times[contenders[1][0]])
        print(f"  ratio          current / baseline time = {statistics.median(times['current']) / base:.2f}")


if __name__ == "__main__":
    main()

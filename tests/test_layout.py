"""The repository keeps tasks/, web/ and hooks/ at its top level, but they are one package:
``aletheia.tasks``, ``aletheia.web`` and ``aletheia.hooks`` (links inside aletheia/).  Importing
them by their bare names would load a second copy of every module (and, installed, clash with
unrelated PyPI packages named ``hooks`` and ``tasks``)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BARE = {"tasks", "web", "hooks"}


def test_links_point_at_the_top_level_folders() -> None:
    for name in BARE:
        link = REPO / "aletheia" / name
        assert link.is_symlink(), link
        assert link.resolve() == (REPO / name).resolve()


def test_nothing_imports_the_bare_package_names() -> None:
    offenders: list[str] = []
    for folder in ("aletheia", "tasks", "web", "hooks", "tests", "bench"):
        root = REPO / folder
        for path in root.rglob("*.py"):
            if folder == "aletheia" and path.relative_to(root).parts[0] in BARE:
                continue  # the same files again, through the links
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                offenders += [f"{path.relative_to(REPO)}:{node.lineno} {n}"
                              for n in names if n.split(".")[0] in BARE]
    assert offenders == []


def test_the_core_contract_names_every_core_module() -> None:
    # pyproject.toml's "core" contract lists the core module by module (so it says exactly what
    # the core is); a new module must join it, or the shell.
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}
    shell = {"cli", "entry", "__main__", "__init__", "doctor", *BARE}
    on_disk = {p.stem for p in (REPO / "aletheia").iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem not in shell}
    assert {m.removeprefix("aletheia.") for m in contracts["core"]["source_modules"]} == on_disk


def test_the_import_contracts_hold() -> None:
    import os
    import subprocess
    import sys

    lint = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_web_and_tasks_import_no_private_name_of_each_other() -> None:
    # The private_modules contract covers _modules; this covers _names (import-linter sees
    # modules only).
    offenders: list[str] = []
    for folder, other in (("web", "aletheia.tasks"), ("tasks", "aletheia.web")):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(other):
                    offenders += [f"{path.relative_to(REPO)}:{node.lineno} {a.name}"
                                  for a in node.names if a.name.startswith("_")]
    assert offenders == []

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

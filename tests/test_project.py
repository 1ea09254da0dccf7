"""Tests for aletheia.project: real directories, real git repositories (made with the git binary
here, never by the module), symlinks and the exclusion patterns."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import aletheia.project
from aletheia.project import (
    excluded_patterns,
    find_project_file,
    is_excluded,
    project_name,
    resolve_project,
)

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="needs the git binary")
as_root = hasattr(os, "geteuid") and os.geteuid() == 0
NO_ENV: dict[str, str] = {}
REPO_ROOT = Path(__file__).resolve().parents[1]



def mark(folder: Path, content: str | bytes, *, trusted: bool = True) -> Path:
    """Write a ``.aletheia-project`` file into ``folder`` and (by default) trust it, as the
    user would with ``aletheia trust``."""
    from aletheia import trust

    marker = folder / ".aletheia-project"
    if isinstance(content, bytes):
        marker.write_bytes(content)
    else:
        marker.write_text(content)
    found = find_project_file(folder)
    if trusted and found is not None and found[0] == os.path.realpath(marker):
        trust.grant(*found)
    return marker


def real(path: Path | str) -> str:
    return os.path.realpath(path)


def _git_env(home: Path) -> dict[str, str]:
    # Keep the user's and the system's git config (and any GIT_DIR of the caller) out of the test.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return env


Git = Callable[..., None]


@pytest.fixture
def git(tmp_path: Path) -> Git:
    env = _git_env(tmp_path)

    def run(*args: str | Path, cwd: Path) -> None:
        assert GIT is not None
        subprocess.run(
            [GIT, "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
            cwd=cwd,
            env=env,
            check=True,
            capture_output=True,
        )

    return run


def make_repo(git: Git, path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    (path / "README").write_text("hello\n")
    git("add", "README", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path


@pytest.fixture
def repo(git: Git, tmp_path: Path) -> Path:
    return make_repo(git, tmp_path / "main-repo")


# -- rule 1: ALETHEIA_PROJECT ------------------------------------------------------------------


@needs_git
def test_env_override_beats_everything(repo: Path) -> None:
    mark(repo, "from-file\n")
    assert resolve_project(repo, {"ALETHEIA_PROJECT": "  acme-web \n"}) == "acme-web"


def test_blank_env_override_is_ignored(tmp_path: Path) -> None:
    assert resolve_project(tmp_path, {"ALETHEIA_PROJECT": "  "}) == real(tmp_path)


def test_env_defaults_to_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_PROJECT", "from-environ")
    assert resolve_project(tmp_path) == "from-environ"
    monkeypatch.delenv("ALETHEIA_PROJECT")
    assert resolve_project(tmp_path) == real(tmp_path)


# -- rule 2: .aletheia-project -----------------------------------------------------------------


def test_project_file_nearest_ancestor_wins(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    (inner / "c").mkdir(parents=True)
    (tmp_path / "a" / "x").mkdir()
    mark(tmp_path / "a", "outer\n")
    mark(inner, "inner\n")
    assert resolve_project(inner / "c", NO_ENV) == "inner"
    assert resolve_project(inner, NO_ENV) == "inner"
    assert resolve_project(tmp_path / "a" / "x", NO_ENV) == "outer"


def test_project_file_first_non_empty_line(tmp_path: Path) -> None:
    mark(tmp_path, b"\xef\xbb\xbf\n  \n\t acme/web  \r\nsecond\n")
    assert resolve_project(tmp_path, NO_ENV) == "acme/web"


@pytest.mark.parametrize("content", [b"", b"\n \n\t\n", b"\xff\xfe not utf-8\n"])
def test_empty_or_undecodable_project_file_is_skipped(tmp_path: Path, content: bytes) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    mark(inner, content)
    assert resolve_project(inner, NO_ENV) == real(inner)
    mark(tmp_path, "outer\n")
    assert resolve_project(inner, NO_ENV) == "outer"


def test_project_file_that_is_not_a_regular_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "d" / ".aletheia-project").mkdir(parents=True)
    assert resolve_project(tmp_path / "d", NO_ENV) == real(tmp_path / "d")
    # Opening a FIFO would block the hook until someone writes to it.
    os.mkfifo(tmp_path / ".aletheia-project")
    assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)


@pytest.mark.skipif(as_root, reason="root reads files whatever their mode")
def test_unreadable_project_file_is_skipped(tmp_path: Path) -> None:
    marker = tmp_path / ".aletheia-project"
    marker.write_text("secret\n")
    marker.chmod(0)
    try:
        assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)
    finally:
        marker.chmod(0o600)


@needs_git
def test_project_file_beats_git(repo: Path) -> None:
    (repo / "pkg").mkdir()
    mark(repo / "pkg", "pkg-only\n")
    assert resolve_project(repo / "pkg", NO_ENV) == "pkg-only"
    # Rules are ordered: a file above the repository still names it.
    mark(repo.parent, "umbrella\n")
    assert resolve_project(repo, NO_ENV) == "umbrella"


# -- rule 2 needs trust: a cloned repository cannot name another project -----------------------


@needs_git
def test_untrusted_project_file_is_ignored(repo: Path) -> None:
    # A repository someone else wrote names one of the user's projects: until the user trusts
    # the file, its memories stay under the repository's own key and it reads nothing else.
    mark(repo, "my-private-notes\n", trusted=False)
    assert resolve_project(repo, NO_ENV) == real(repo)
    from aletheia import trust

    trust.grant(os.path.realpath(repo / ".aletheia-project"), "my-private-notes")
    assert resolve_project(repo, NO_ENV) == "my-private-notes"


def test_editing_a_trusted_file_revokes_it(tmp_path: Path) -> None:
    marker = mark(tmp_path, "first\n")
    assert resolve_project(tmp_path, NO_ENV) == "first"
    marker.write_text("someone-elses\n")  # e.g. a pull that changed the file
    assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)
    marker.write_text("first\n")
    assert resolve_project(tmp_path, NO_ENV) == "first"


def test_trust_is_per_file_not_per_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    mark(tmp_path / "a", "shared\n")
    mark(tmp_path / "b", "shared\n", trusted=False)
    assert resolve_project(tmp_path / "a", NO_ENV) == "shared"
    assert resolve_project(tmp_path / "b", NO_ENV) == real(tmp_path / "b")


def test_revoke_and_damaged_trust_file(tmp_path: Path, aletheia_home: Path) -> None:
    from aletheia import trust

    mark(tmp_path, "named\n")
    assert trust.revoke(os.path.realpath(tmp_path / ".aletheia-project")) is True
    assert trust.revoke(os.path.realpath(tmp_path / ".aletheia-project")) is False
    assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)
    mark(tmp_path, "named\n")
    (aletheia_home / trust.TRUST_NAME).write_text("{not json")
    assert trust.load() == {}
    assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)
    assert ((aletheia_home / trust.TRUST_NAME).stat().st_mode & 0o777) == 0o600


# -- rule 3: git -------------------------------------------------------------------------------


@needs_git
def test_repo_top_and_subdirectory(repo: Path) -> None:
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert resolve_project(repo, NO_ENV) == real(repo)
    assert resolve_project(deep, NO_ENV) == real(repo)
    assert resolve_project(str(deep), NO_ENV) == real(repo)


@needs_git
def test_inside_the_git_directory_is_the_repo(repo: Path) -> None:
    assert resolve_project(repo / ".git" / "refs", NO_ENV) == real(repo)


@needs_git
def test_nested_repository_is_its_own_project(git: Git, repo: Path) -> None:
    nested = make_repo(git, repo / "vendor" / "lib")
    assert resolve_project(nested, NO_ENV) == real(nested)


@needs_git
def test_linked_worktree_belongs_to_main_repository(git: Git, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "feature-wt"
    git("worktree", "add", "-q", "-b", "feature", outside, cwd=repo)
    git("worktree", "add", "-q", "-b", "inside", "wt-inside", cwd=repo)
    assert (outside / ".git").is_file()
    (outside / "sub" / "dir").mkdir(parents=True)
    (repo / "wt-inside" / "sub").mkdir()

    assert resolve_project(outside, NO_ENV) == real(repo)
    assert resolve_project(outside / "sub" / "dir", NO_ENV) == real(repo)
    assert resolve_project(repo / "wt-inside", NO_ENV) == real(repo)
    assert resolve_project(repo / "wt-inside" / "sub", NO_ENV) == real(repo)


@needs_git
def test_worktree_of_a_bare_repository(git: Git, repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", repo, bare, cwd=tmp_path)
    git("worktree", "add", "-q", tmp_path / "bare-wt", "main", cwd=bare)
    # No working tree to name the project after: the bare repository is the key for its
    # worktrees, and inside the bare repository itself there is no .git, so rule 4 applies.
    assert resolve_project(tmp_path / "bare-wt", NO_ENV) == real(bare)
    assert resolve_project(bare, NO_ENV) == real(bare)


@needs_git
def test_submodule_like_gitfile_is_its_own_project(tmp_path: Path) -> None:
    sup = tmp_path / "super"
    (sup / ".git" / "modules" / "sub").mkdir(parents=True)
    (sup / "sub" / "src").mkdir(parents=True)
    (sup / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert resolve_project(sup / "sub", NO_ENV) == real(sup / "sub")
    assert resolve_project(sup / "sub" / "src", NO_ENV) == real(sup / "sub")
    assert resolve_project(sup, NO_ENV) == real(sup)
    # An absolute gitdir works the same.
    (sup / "sub" / ".git").write_text(f"gitdir: {sup / '.git' / 'modules' / 'sub'}\n")
    assert resolve_project(sup / "sub" / "src", NO_ENV) == real(sup / "sub")


@needs_git
def test_real_submodule_and_its_worktree(git: Git, repo: Path, tmp_path: Path) -> None:
    lib = make_repo(git, tmp_path / "lib-src")
    git("submodule", "add", "-q", lib, "lib", cwd=repo)
    sub = repo / "lib"
    assert (sub / ".git").is_file()
    assert resolve_project(sub, NO_ENV) == real(sub)
    # A worktree of the submodule belongs to the submodule (found via core.worktree).
    git("worktree", "add", "-q", "-b", "side", tmp_path / "lib-wt", cwd=sub)
    assert resolve_project(tmp_path / "lib-wt", NO_ENV) == real(sub)


@needs_git
def test_separate_git_dir_checkout_is_its_own_project(git: Git, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git("init", "-q", "--separate-git-dir", tmp_path / "store.git", checkout, cwd=tmp_path)
    (checkout / "src").mkdir()
    assert resolve_project(checkout / "src", NO_ENV) == real(checkout)


@pytest.mark.parametrize(
    "gitfile",
    [
        "",
        "not a gitfile\n",
        "gitdir: /nonexistent/aletheia/modules/x\n",
        "gitdir: target-is-a-file\n",
        "gitdir: wt-broken-commondir\n",
        "gitdir: wt-empty-commondir\n",
    ],
)
def test_broken_gitfile_falls_back_to_the_directory(tmp_path: Path, gitfile: str) -> None:
    (tmp_path / ".git").mkdir()  # an outer repository must not capture the broken checkout
    holder = tmp_path / "holder"
    (holder / "deep").mkdir(parents=True)
    (holder / "target-is-a-file").write_text("x")
    (holder / "wt-broken-commondir").mkdir()
    (holder / "wt-broken-commondir" / "commondir").write_text("../../gone/.git\n")
    (holder / "wt-empty-commondir").mkdir()
    (holder / "wt-empty-commondir" / "commondir").write_text("\n")
    (holder / ".git").write_text(gitfile)
    assert resolve_project(holder / "deep", NO_ENV) == real(holder / "deep")


# -- rule 4 and odd working directories --------------------------------------------------------


def test_non_repo_directory_is_its_absolute_realpath(tmp_path: Path) -> None:
    d = tmp_path / "plain"
    d.mkdir()
    key = resolve_project(d, NO_ENV)
    assert key == real(d)
    assert os.path.isabs(key)


def test_same_basename_different_keys(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "tmp", tmp_path / "b" / "tmp"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert resolve_project(one, NO_ENV) != resolve_project(two, NO_ENV)
    assert project_name(resolve_project(one, NO_ENV)) == "tmp"


def test_home_is_the_absolute_home_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home" / "root"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ALETHEIA_PROJECT", raising=False)
    key = resolve_project(os.path.expanduser("~"))
    assert key == real(home)
    assert key not in ("~", "root", "home")


@needs_git
def test_symlinked_path_has_the_same_key(repo: Path, tmp_path: Path) -> None:
    (repo / "src").mkdir()
    (tmp_path / "link-to-src").symlink_to(repo / "src")
    assert resolve_project(tmp_path / "link-to-src", NO_ENV) == real(repo)
    plain = tmp_path / "plain"
    plain.mkdir()
    (tmp_path / "link-to-plain").symlink_to(plain)
    assert resolve_project(tmp_path / "link-to-plain", NO_ENV) == real(plain)


@needs_git
def test_nonexistent_cwd_does_not_raise(repo: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone" / "deeper"
    assert resolve_project(gone, NO_ENV) == real(gone)
    assert resolve_project(repo / "deleted" / "dir", NO_ENV) == real(repo)
    assert isinstance(resolve_project("bad\0path", NO_ENV), str)


def test_relative_cwd_resolves_against_the_process_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rel").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_project("rel", NO_ENV) == real(tmp_path / "rel")


@needs_git
@pytest.mark.skipif(as_root, reason="root walks any directory whatever its mode")
def test_unreadable_cwd_does_not_raise(repo: Path, tmp_path: Path) -> None:
    locked = repo / "locked"
    locked.mkdir()
    plain = tmp_path / "locked-plain"
    plain.mkdir()
    for d in (locked, plain):
        d.chmod(0)
    try:
        assert resolve_project(locked, NO_ENV) == real(repo)
        assert resolve_project(plain, NO_ENV) == real(plain)
    finally:
        for d in (locked, plain):
            d.chmod(0o700)


def test_fresh_results_within_one_process(tmp_path: Path) -> None:
    # No caching: a marker written after a first lookup is seen by the next one.
    assert resolve_project(tmp_path, NO_ENV) == real(tmp_path)
    mark(tmp_path, "later\n")
    assert resolve_project(tmp_path, NO_ENV) == "later"


# -- project_name ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("/home/me/code/aletheia", "aletheia"),
        ("/home/me/code/aletheia/", "aletheia"),
        ("/", "/"),
        ("acme-web", "acme-web"),
        ("acme/web", "acme/web"),
    ],
)
def test_project_name(key: str, name: str) -> None:
    assert project_name(key) == name


# -- exclusion ---------------------------------------------------------------------------------


def test_excluded_patterns_split_on_commas_and_pathsep() -> None:
    raw = f" alpha ,, /srv/beta{os.pathsep}gam*{os.pathsep} ,"
    env = {"ALETHEIA_EXCLUDED_PROJECTS": raw}
    assert excluded_patterns(env) == ["alpha", "/srv/beta", "gam*"]
    assert excluded_patterns(env, extra=["delta", " ", "alpha"]) == [
        "alpha",
        "/srv/beta",
        "gam*",
        "delta",
    ]
    assert excluded_patterns({}) == []


def test_excluded_patterns_expand_home_from_env() -> None:
    env = {"HOME": "/home/me", "ALETHEIA_EXCLUDED_PROJECTS": "~/secret,~,~other/x"}
    assert excluded_patterns(env, extra=["~/from-setting"]) == [
        "/home/me/secret",
        "/home/me",
        "~other/x",
        "/home/me/from-setting",
    ]
    assert excluded_patterns({"ALETHEIA_EXCLUDED_PROJECTS": "~/secret"}) == ["~/secret"]


def test_excluded_patterns_default_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALETHEIA_EXCLUDED_PROJECTS", "from-environ")
    assert excluded_patterns() == ["from-environ"]


def test_excluded_patterns_add_the_realpath_of_a_symlinked_entry(tmp_path: Path) -> None:
    target = tmp_path / "real-home"
    target.mkdir()
    (tmp_path / "home-link").symlink_to(target)
    env = {"HOME": str(tmp_path / "home-link"), "ALETHEIA_EXCLUDED_PROJECTS": "~/secret"}
    patterns = excluded_patterns(env)
    assert patterns == [str(tmp_path / "home-link" / "secret"), real(target / "secret")]
    (target / "secret" / "sub").mkdir(parents=True)
    assert is_excluded(resolve_project(tmp_path / "home-link" / "secret" / "sub", NO_ENV), patterns)


@pytest.mark.parametrize(
    ("project", "patterns", "expected"),
    [
        ("/a/b", ["/a/b"], True),
        ("/a/b", ["b"], True),
        ("acme-web", ["acme-web"], True),
        ("/a/b/c/d", ["/a/b"], True),
        ("/a/b/c/d", ["/a/b/"], True),
        ("/a/bc", ["/a/b"], False),
        ("/a/bc/d", ["/a/b"], False),
        ("/a/b", ["/a/b/c"], False),
        ("/a/b", ["/"], True),
        ("/work/client-x/api", ["client-*"], False),
        ("/work/client-x", ["client-*"], True),
        ("/work/client-x/api", ["/work/client-*"], True),
        ("acme/web", ["acme/*"], True),
        ("/a/b", ["c", "", "  ", "/x"], False),
        ("/a/b", [" b "], True),
        ("", ["*"], False),
    ],
)
def test_is_excluded(project: str, patterns: list[str], expected: bool) -> None:
    assert is_excluded(project, patterns) is expected


def test_exclusion_end_to_end(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "secret" / "inner").mkdir(parents=True)
    (home / "secretive").mkdir()
    (home / "notes").mkdir()
    (home / "scratch-1").mkdir()
    env = {
        "HOME": str(home),
        "ALETHEIA_EXCLUDED_PROJECTS": f"~/secret{os.pathsep}scratch-*,notes",
    }
    patterns = excluded_patterns(env)

    def excluded(d: Path) -> bool:
        return is_excluded(resolve_project(d, NO_ENV), patterns)

    assert excluded(home / "secret")
    assert excluded(home / "secret" / "inner")
    assert not excluded(home / "secretive")
    assert excluded(home / "notes")
    assert excluded(home / "scratch-1")
    assert not excluded(home)


# -- the hook path: stdlib only, never a subprocess --------------------------------------------


def test_import_and_use_load_only_the_stdlib(tmp_path: Path) -> None:
    # A fresh interpreter with -S (no site, as the hook may run) and -I (no user env, no cwd on
    # the path), so nothing but the module itself can add entries to sys.modules.
    code = f"""
import json, sys
sys.path.insert(0, {str(REPO_ROOT)!r})
before = set(sys.modules)
import aletheia.project as p
key = p.resolve_project({str(tmp_path)!r}, {{}})
p.is_excluded(key, p.excluded_patterns({{"ALETHEIA_EXCLUDED_PROJECTS": "a,/b,c*"}}))
print(json.dumps(sorted(set(sys.modules) - before)))
"""
    out = subprocess.run(
        [sys.executable, "-S", "-I", "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded: list[str] = json.loads(out)
    assert "aletheia.project" in loaded
    assert "subprocess" not in loaded
    third_party = [
        m
        for m in loaded
        if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "aletheia"
    ]
    assert third_party == []


def test_module_source_imports_only_the_stdlib() -> None:
    source = Path(aletheia.project.__file__).read_text()
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "subprocess" not in imported
    assert imported <= set(sys.stdlib_module_names) | {"__future__", "aletheia"}
    assert "__import__" not in source and "importlib" not in source


def test_trust_module_imports_only_the_stdlib() -> None:
    import aletheia.trust

    source = Path(aletheia.trust.__file__).read_text()
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert {m.split(".")[0] for m in imported} <= set(sys.stdlib_module_names) | {"__future__", "aletheia"}
    assert {m for m in imported if m.startswith("aletheia")} <= {"aletheia"}  # paths only

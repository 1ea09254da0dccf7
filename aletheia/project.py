"""Project identity: which project a working directory belongs to, and whether it is excluded.

The capture hook calls this on every host event inside a 150 ms budget, so it is stdlib-only,
never runs ``git`` (or any subprocess) and costs about two ``stat`` calls per ancestor directory.

Resolution order for ``resolve_project``:

1. ``ALETHEIA_PROJECT`` (stripped; blank counts as unset).
2. The nearest *trusted* ``.aletheia-project`` file in the directory or an ancestor: its first
   non-empty line. Empty, unreadable, undecodable or non-regular files are skipped and the walk
   goes on; so is a file the user has not trusted (``aletheia trust``, see ``trust.py``): a
   cloned repository must not be able to name, read and write another of the user's projects.
3. The git top level, found by walking up for ``.git``. A linked worktree belongs to its main
   repository; a submodule (or a ``--separate-git-dir`` checkout) is its own project.
4. Otherwise the directory itself.

Keys from rules 3 and 4 are ``os.path.realpath`` strings, so the same directory reached through
a symlink gets the same key, and two temp dirs with the same basename never collide.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator, Mapping

from aletheia import config

__all__ = [
    "EXCLUDED_ENV",
    "PROJECT_ENV",
    "PROJECT_FILE",
    "excluded_patterns",
    "find_project_file",
    "is_excluded",
    "project_name",
    "resolve_project",
]

PROJECT_ENV = "ALETHEIA_PROJECT"
EXCLUDED_ENV = "ALETHEIA_EXCLUDED_PROJECTS"
PROJECT_FILE = ".aletheia-project"

# Marker files (.aletheia-project, .git, commondir) are one short line; a hook must never read
# more than this from a file someone else controls.
_LINE_LIMIT = 4096
# A git config is small, but it is only read for worktrees of a bare repo or of a submodule.
_CONFIG_LIMIT = 64 * 1024
_GLOB_CHARS = frozenset("*?[")


def resolve_project(cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None, *,
                    trusted: Mapping[str, str] | None = None) -> str:
    """Return the project key for ``cwd``. Never raises for a missing or unreadable ``cwd``.

    A ``cwd`` that does not exist keeps its own identity: the walk still runs over its (partly
    existing) ancestors, and outside a repository the key is the realpath of the string given,
    not of its nearest existing ancestor (which would merge unrelated deleted dirs into ``/tmp``).
    ``GIT_DIR``/``GIT_WORK_TREE`` are not consulted: the hook's environment is the host's, and
    those variables describe whatever git command last ran, not the session's directory.
    ``trusted`` is the trust table (``trust.load()``, read only when a project file is met).
    """
    override = config.env(PROJECT_ENV, env)
    if override:
        return str(override)

    start = _realpath(os.fspath(cwd))
    # Rule 2 beats rule 3 even when the file sits above the repository, so the walk has to reach
    # the root before the nearest .git found on the way is allowed to decide.
    git_holder: str | None = None
    git_is_dir = False
    for directory in _ancestors(start):
        marker = os.path.join(directory, PROJECT_FILE)
        named = _first_line(marker)
        if named:
            if trusted is None:
                from aletheia import trust

                trusted = trust.load()
            if trusted.get(marker) == named:
                return named
        if git_holder is None:
            kind = _file_kind(os.path.join(directory, ".git"))
            if kind is not None:
                git_holder, git_is_dir = directory, kind == "dir"

    if git_holder is not None:
        top = git_holder if git_is_dir else _top_from_gitfile(git_holder)
        if top is not None:
            return top
    return start


def find_project_file(cwd: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The nearest readable ``.aletheia-project`` at or above ``cwd``: (its path, the name it
    holds), trusted or not; for ``aletheia trust`` and for hints about an untrusted file."""
    for directory in _ancestors(_realpath(os.fspath(cwd))):
        marker = os.path.join(directory, PROJECT_FILE)
        named = _first_line(marker)
        if named:
            return marker, named
    return None


def project_name(key: str) -> str:
    """A short display name: the basename of a path key, else the key itself."""
    if os.path.isabs(key):
        base = os.path.basename(os.path.normpath(key))
        return base or key  # the filesystem root has no basename
    return key


def excluded_patterns(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """Exclusion patterns from ``ALETHEIA_EXCLUDED_PROJECTS`` plus ``extra`` (the stored setting).

    The variable is split on commas and ``os.pathsep``; each item of ``extra`` is one pattern.
    A leading ``~`` expands against ``env["HOME"]`` (left as is when HOME is unset). An absolute,
    glob-free entry that goes through a symlink is followed by its realpath too, because project
    keys are realpaths: ``~/secret`` must still exclude when ``$HOME`` is a symlink.
    """
    raw = config.env(EXCLUDED_ENV, env)
    home = (os.environ if env is None else env).get("HOME", "")
    patterns: list[str] = []
    for entry in [*raw, *extra]:
        entry = entry.strip()
        if not entry:
            continue
        expanded = _expand_home(entry, home)
        for pattern in (expanded, _real_form(expanded)):
            if pattern and pattern not in patterns:
                patterns.append(pattern)
    return patterns


def is_excluded(project: str, patterns: Iterable[str]) -> bool:
    """True when a pattern names ``project``: equal to its key or its display name, a path prefix
    of the key (``/a/b`` covers ``/a/b/c`` but not ``/a/bc``), or an fnmatch glob matching
    either the key or the name."""
    if not project:
        return False
    name = project_name(project)
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if pattern in (project, name) or _is_path_prefix(pattern, project):
            return True
        if fnmatch.fnmatch(project, pattern) or fnmatch.fnmatch(name, pattern):
            return True
    return False


# -- git ---------------------------------------------------------------------------------------


def _top_from_gitfile(holder: str) -> str | None:
    """Resolve a ``.git`` file (``gitdir: <path>``) to a project top level, or None if broken."""
    line = _first_line(os.path.join(holder, ".git"), fs=True)
    if line is None or not line.startswith("gitdir:"):
        return None
    gitdir = _realpath(os.path.join(holder, line[len("gitdir:") :].strip()))
    if _file_kind(gitdir) != "dir":
        return None

    commondir_file = os.path.join(gitdir, "commondir")
    common_line = _first_line(commondir_file, fs=True)
    if common_line is None:
        # No commondir: the gitdir is a repository's own (a submodule under .git/modules, or a
        # --separate-git-dir checkout), so the checkout holding the .git file is the project.
        # A commondir that exists but says nothing is a damaged worktree, not a submodule.
        return holder if _file_kind(commondir_file) is None else None

    # A linked worktree: its project is the main repository the common dir belongs to.
    common = _realpath(os.path.join(gitdir, common_line))
    if _file_kind(common) != "dir":
        return None
    if os.path.basename(common) == ".git":
        return os.path.dirname(common)
    # The common dir is not a checkout's .git: a submodule's (.git/modules/<name>, whose config
    # points at its working tree) or a bare repository's (no working tree: the repo is the key).
    worktree = _core_worktree(common)
    if worktree is not None and _file_kind(worktree) == "dir":
        return worktree
    return common


def _core_worktree(gitdir: str) -> str | None:
    """``core.worktree`` from ``<gitdir>/config``, resolved against ``gitdir`` as git does.

    Enough of git's config syntax for what git itself writes; last value wins, as in git.
    """
    text = _read_head(os.path.join(gitdir, "config"), _CONFIG_LIMIT)
    if text is None:
        return None
    section = ""
    found: str | None = None
    for raw in os.fsdecode(text).splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].strip().lower()
            continue
        key, sep, value = line.partition("=")
        if section == "core" and sep and key.strip().lower() == "worktree":
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            found = value or None
    return _realpath(os.path.join(gitdir, found)) if found else None


# -- filesystem helpers ------------------------------------------------------------------------


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        # NUL bytes, or a relative path while the process cwd is gone: keep what we were given.
        try:
            return os.path.abspath(path)
        except (OSError, ValueError):
            return os.path.normpath(path)


def _ancestors(path: str) -> Iterator[str]:
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


def _file_kind(path: str) -> str | None:
    """Return "dir", "file" (regular) or None: missing, unreadable or anything else."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return None


def _read_head(path: str, limit: int) -> bytes | None:
    # Regular files only: opening a FIFO named .aletheia-project would block the hook.
    if _file_kind(path) != "file":
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except (OSError, ValueError):
        return None


def _first_line(path: str, *, fs: bool = False) -> str | None:
    """The first non-empty stripped line of a small file, or None.

    ``fs=True`` decodes like a filename (git paths may be any bytes); otherwise the text must be
    UTF-8, since it becomes a stored project key.
    """
    data = _read_head(path, _LINE_LIMIT)
    if data is None:
        return None
    data = data.removeprefix(b"\xef\xbb\xbf")
    for raw in data.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        if fs:
            return os.fsdecode(raw)
        try:
            return raw.decode("utf-8").strip() or None
        except UnicodeDecodeError:
            return None
    return None


# -- exclusion helpers -------------------------------------------------------------------------


def _expand_home(entry: str, home: str) -> str:
    if not home or not entry.startswith("~"):
        return entry
    if entry == "~":
        return home
    if entry[1] in (os.sep, os.altsep):
        return home.rstrip(os.sep) + entry[1:]
    return entry  # ~user: would need the password database; leave it literal


def _real_form(pattern: str) -> str | None:
    if not os.path.isabs(pattern) or _GLOB_CHARS & set(pattern):
        return None
    return _realpath(pattern)


def _is_path_prefix(prefix: str, key: str) -> bool:
    if not (os.path.isabs(prefix) and os.path.isabs(key)):
        return False
    prefix = os.path.normpath(prefix)
    key = os.path.normpath(key)
    if os.path.dirname(prefix) == prefix:  # the root covers every path key
        return True
    return key == prefix or key.startswith(prefix + os.sep)

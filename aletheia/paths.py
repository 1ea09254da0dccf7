"""Where aletheia keeps its files: one data directory (ALETHEIA_HOME, default ~/.aletheia).

Stdlib only: the hook path imports this.  Directories are 0700 and files 0600, because the
store holds a user's prompts and tool output.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get("ALETHEIA_HOME", "").strip()
    if override:
        return Path(os.path.expanduser(override))
    return Path(os.path.expanduser("~")) / ".aletheia"


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) as 0700 if missing; tighten the mode of an existing one."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    try:
        if (path.stat().st_mode & 0o777) != DIR_MODE:
            os.chmod(path, DIR_MODE)
    except OSError:
        pass
    return path


def ensure_home(env: Mapping[str, str] | None = None) -> Path:
    return ensure_dir(home(env))


def hub_db(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "hub.db"


def queue_db(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "queue.db"


def spool_dir(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "spool"


def spool_file(env: Mapping[str, str] | None = None) -> Path:
    return spool_dir(env) / "hook-spool.jsonl"


def keys_dir(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "keys"


def touch_private(path: Path) -> None:
    """Create ``path`` as 0600 before anything writes to it, so no content is ever world-readable."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)
    try:
        if (path.stat().st_mode & 0o777) != FILE_MODE:
            os.chmod(path, FILE_MODE)
    except OSError:
        pass

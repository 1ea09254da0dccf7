"""Where aletheia keeps its files: one data directory (ALETHEIA_HOME, default ~/.aletheia).

Stdlib only: the hook path imports this.  Directories are 0700 and files 0600, because the
store holds a user's prompts and tool output.

The hook path works on plain strings (``home_dir``, ``hub_db_file``, ``spool_file_name``):
pathlib pulls in urllib.parse and ipaddress, ~3.5 ms of every host event.  The ``Path``
forms are for everything else and import pathlib when first called.
"""

from __future__ import annotations

import os

from aletheia import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
SPOOL_NAME = "hook-spool.jsonl"


def home_dir(env: Mapping[str, str] | None = None) -> str:
    return os.path.expanduser(str(config.env("ALETHEIA_HOME", env)))


def hub_db_file(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(home_dir(env), "hub.db")


def spool_file_name(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(home_dir(env), "spool", SPOOL_NAME)


def _path(p: str) -> Path:
    from pathlib import Path

    return Path(p)


def home(env: Mapping[str, str] | None = None) -> Path:
    return _path(home_dir(env))


def ensure_dir(path: str | os.PathLike[str]) -> str:
    """Create ``path`` (and parents) as 0700 if missing; tighten the mode of an existing one."""
    path = os.fspath(path)
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    try:
        if (os.stat(path).st_mode & 0o777) != DIR_MODE:
            os.chmod(path, DIR_MODE)
    except OSError:
        pass
    return path


def ensure_home(env: Mapping[str, str] | None = None) -> str:
    return ensure_dir(home_dir(env))


def hub_db(env: Mapping[str, str] | None = None) -> Path:
    return _path(hub_db_file(env))


def queue_db(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "queue.db"


def spool_dir(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "spool"


def spool_file(env: Mapping[str, str] | None = None) -> Path:
    return _path(spool_file_name(env))


def keys_dir(env: Mapping[str, str] | None = None) -> Path:
    return home(env) / "keys"


def touch_private(path: str | os.PathLike[str]) -> None:
    """Create ``path`` as 0600 before anything writes to it, so no content is ever world-readable."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)
    try:
        if (os.stat(path).st_mode & 0o777) != FILE_MODE:
            os.chmod(path, FILE_MODE)
    except OSError:
        pass

"""The click CLI: a thin shell that parses, calls the library and prints.

Each area registers its commands from its own module (heavy imports such as huey, starlette
or mcp stay inside the command functions, so ``aletheia --help`` stays fast); ``aletheia hook``
is dispatched in ``aletheia.entry`` before click is even imported.
"""

from __future__ import annotations

from aletheia.cli import capture as _capture  # noqa: F401  (registers commands)
from aletheia.cli import hosts as _hosts  # noqa: F401
from aletheia.cli import jobs as _jobs  # noqa: F401
from aletheia.cli import manage as _manage  # noqa: F401
from aletheia.cli import read as _read  # noqa: F401
from aletheia.cli import serve as _serve  # noqa: F401
from aletheia.cli import trust as _trust  # noqa: F401
from aletheia.cli.base import cli

_hosts.attach_rules_sync()  # under `rules` once manage.py defines it, else `rules-sync`

__all__ = ["cli"]

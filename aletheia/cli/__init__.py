"""The click CLI: a thin shell that parses, calls the library and prints.

Each area registers its commands from its own module, and a module is imported only when one
of its commands runs (``COMMANDS`` below), so ``aletheia search`` pays for search and not for
the server, the installers or the importers.  ``aletheia --help`` imports them all.
``aletheia hook`` is dispatched in ``aletheia.entry`` before click is even imported.
"""

from __future__ import annotations

from aletheia.cli.base import cli

__all__ = ["cli"]

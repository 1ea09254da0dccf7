"""aletheia: a local-first memory store for AI coding agents.

Importing the package must stay cheap: the hook path imports it on every host event.
"""

__version__ = "0.1.0"

"""CLI commands (placeholder module registered in aletheia/cli/__init__.py; filled in by its owner)."""

from __future__ import annotations

from aletheia.cli.base import cli

__all__ = ["cli"]

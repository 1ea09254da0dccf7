"""The root click group and the helpers every command module shares."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from aletheia import __version__, config, db, paths
from aletheia.errors import AletheiaError

F = TypeVar("F", bound=Callable[..., Any])


# Which module defines each top-level command: importing only that one keeps start-up short.
# A command missing here still works (every module is then imported to find it).
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("hook", "redact", "save", "capture"), "capture"),
    **dict.fromkeys(("install", "uninstall", "import", "watch"), "hosts"),
    **dict.fromkeys(("worker", "compress", "jobs", "facts"), "jobs"),
    **dict.fromkeys(("pin", "unpin", "dismiss", "promote", "edit", "erase", "rules", "settings",
                     "receipts", "sessions", "export"), "manage"),
    **dict.fromkeys(("search", "get", "timeline", "context", "embed", "stats", "doctor"), "read"),
    **dict.fromkeys(("serve", "up", "mcp", "token"), "serve"),
    "trust": "trust",
    "spool": "spool",
}
_MODULES = ("capture", "hosts", "jobs", "manage", "read", "serve", "trust", "spool")


def _load(module: str) -> None:
    import importlib

    importlib.import_module(f"aletheia.cli.{module}")
    if module in ("hosts", "manage"):
        from aletheia.cli import hosts

        hosts.attach_rules_sync()


def load_all() -> None:
    for module in _MODULES:
        _load(module)


class _OneLineUsageError(click.ClickException):
    exit_code = 2


class AletheiaGroup(click.Group):
    """Loads command modules on demand, and renders our typed errors (and SQLite failures) as
    one line and a non-zero exit."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        if self is cli:
            load_all()
        return super().list_commands(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's first sentence, whole: click cuts it with "..." to fit one line;
        the formatter wraps it instead."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if self is cli and cmd_name not in self.commands:
            module = COMMAND_MODULES.get(cmd_name)
            if module is not None:
                _load(module)
            if cmd_name not in self.commands:
                load_all()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            # A bad option value is the user's input too: one line, like every other error.
            raise _OneLineUsageError(exc.format_message()) from None
        except AletheiaError as exc:
            raise click.ClickException(exc.message) from None
        except sqlite3.Error as exc:
            raise click.ClickException(f"database error: {exc}") from None
        except (OverflowError, RecursionError) as exc:
            # A backstop: numbers are range-checked where they come in; one that slipped
            # through is still the user's input, not a crash.
            raise click.ClickException(f"a value is out of range: {exc}") from None
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):
                sys.exit(0)
            raise click.ClickException(f"{exc.strerror or exc}: {exc.filename or ''}".strip()) from None


@click.group(cls=AletheiaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aletheia")
def cli() -> None:
    """aletheia: a local-first memory store for AI coding agents."""


@contextmanager
def store() -> Iterator[sqlite3.Connection]:
    conn = db.connect()
    # Any writer that reaches the database drains what hooks could not write.  An empty or
    # missing spool folder (the common case) costs one listdir, not the spool module.
    waiting, reserve_made = _spool_state()
    if waiting:
        from aletheia import spool

        if spool.pending_size() > 0:
            try:
                spool.replay(conn)
            except sqlite3.Error:
                pass  # still locked: the items stay spooled for the next writer
            except Exception as exc:  # no spool content may fail a command (it is quarantined)
                click.echo(f"aletheia: the spool was not replayed ({type(exc).__name__}: {exc}); "
                           "`aletheia doctor` says more", err=True)
    if not reserve_made:
        from aletheia import spool_reserve

        spool_reserve.ensure()  # the room a hook writes into on a full disk
    try:
        yield conn
    finally:
        conn.close()


def _spool_state() -> tuple[bool, bool]:
    """(something may wait in the spool, the disk-full reserve exists)."""
    folder = os.path.dirname(paths.spool_file_name())
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return False, False
    except OSError:
        return True, True  # let the spool module look (and say what is wrong)
    made = "reserve" in names
    if any(name.startswith("hook-spool") for name in names):
        return True, made
    if made:
        from aletheia import spool_reserve

        return spool_reserve.used_bytes(folder) > 0, True
    return False, False


class FiniteFloat(click.FloatRange):
    """A float in a range that is also finite: click's FloatRange lets ``nan`` through (every
    comparison with it is false), and ``inf`` wherever a bound is open."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def count(lo: int, hi: int) -> click.IntRange:
    """An integer option within ``lo … hi`` (a huge value is a usage error, not an overflow)."""
    return click.IntRange(lo, hi)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def project_option(f: F) -> F:
    return click.option(
        "--project", "-p", default=None, help="Project key (default: the current directory's)."
    )(f)


def current_project(project: str | None) -> str:
    if project:
        return project
    from aletheia.project import find_project_file, resolve_project

    cwd = os.getcwd()
    key = resolve_project(cwd)
    found = find_project_file(cwd)
    if found is not None and found[1] != key and not config.is_set("ALETHEIA_PROJECT"):
        click.echo(f"note: {found[0]} names project {found[1]!r} but is not trusted; "
                   "`aletheia trust` to use it", err=True)
    return key


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))

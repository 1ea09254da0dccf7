"""Commands that serve: ``serve`` (REST, MCP over HTTP and the dashboard), ``mcp`` (stdio) and
``token`` (print or rotate the local API token)."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from typing import Any, TypeVar

import click

from aletheia import config
from aletheia.cli.base import cli

F = TypeVar("F", bound=Callable[..., Any])


def _bind_options(f: F) -> F:
    """--host and --port, with their environment defaults (serve and up)."""
    f = click.option("--port", type=click.IntRange(0, 65535),
                     default=lambda: config.env("ALETHEIA_PORT"),
                     show_default=f"$ALETHEIA_PORT or {config.VARS['ALETHEIA_PORT'].default}",
                     help="Port (0: any free one).")(f)
    return click.option("--host", default=lambda: config.env("ALETHEIA_HOST"),
                        show_default=f"$ALETHEIA_HOST or {config.VARS['ALETHEIA_HOST'].default}",
                        help="Address to bind.")(f)


@cli.command()
@_bind_options
@click.option("--no-auth", is_flag=True,
              help="No token on /v1 and /mcp (loopback only; Host and Origin checks stay on).")
@click.option("--allow-host", "extra_hosts", multiple=True,
              help="Another Host name to answer to (also $ALETHEIA_ALLOWED_HOSTS).")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="Log one line per request.")
def serve(host: str, port: int, no_auth: bool, extra_hosts: tuple[str, ...], log_level: str,
          access_log: bool) -> None:
    """Serve REST (/v1), MCP (/mcp) and the dashboard (/) on http://HOST:PORT.

    A token is created on first start (keys/api-token, 0600) and required on /v1 and /mcp;
    ALETHEIA_API_KEY overrides it.  Binding off loopback needs a token that already exists.
    """
    import uvicorn

    from aletheia.web import security, serving
    from aletheia.web.app import create_app

    if no_auth:
        if not security.is_loopback(host):
            raise click.ClickException(f"--no-auth is refused off loopback ({host})")
        token = None
    elif security.is_loopback(host):
        token = security.ensure_token()
    else:
        token = security.stored_token()
    try:
        security.startup_check(host, token if not no_auth else None)
    except security.StartupRefused as exc:
        raise click.ClickException(str(exc)) from None
    _check_port(host, port)  # before the app starts: a busy port is one clear line
    app = create_app(token=token, bind_host=host, extra_hosts=extra_hosts)
    before, after = serving.raise_file_limit()
    serving.GuardedH11Protocol.cap = serving.connection_cap()
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"aletheia {'(no auth) ' if token is None else ''}starting on http://{shown}:{port}/ "
               f"— token: {'ALETHEIA_API_KEY' if config.is_set(security.TOKEN_ENV) else security.token_path()}"
               f" — open files {before}{f' → {after}' if after != before else ''}, at most "
               f"{serving.GuardedH11Protocol.cap} connections", err=True)
    from aletheia.web.logs import log_config

    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=access_log,
                log_config=log_config(),
                proxy_headers=False, server_header=False, timeout_graceful_shutdown=5,
                http=serving.GuardedH11Protocol, timeout_keep_alive=serving.KEEP_ALIVE_S,
                backlog=serving.BACKLOG)


def _check_port(host: str, port: int) -> None:
    """Fail with one line when the address is taken, before the app and its lifespan start
    (uvicorn would log "Application startup complete" first, then the error)."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind((host, port))
        except OSError as exc:
            hint = (" (is aletheia already serving there? --port 0 takes any free port)"
                    if exc.errno == errno.EADDRINUSE else "")
            raise click.ClickException(
                f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from None


@cli.command()
@_bind_options
def up(host: str, port: int) -> None:
    """Run the server and the worker together (the Procfile's two processes, under honcho's
    process manager); Ctrl-C stops both."""
    import shlex
    import sys

    from honcho.manager import Manager  # type: ignore[import-untyped]

    from aletheia.web import security

    if security.is_loopback(host) and not config.is_set(security.TOKEN_ENV):
        security.ensure_token()  # so `aletheia token` prints the one the server will use
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"aletheia: dashboard at http://{shown}:{port}/ (sign in with the token that "
               f"`aletheia token` prints); worker compresses finished sessions. Ctrl-C stops both.",
               err=True)
    # -P: the installed package, not an ./aletheia folder wherever `up` was started (a clone).
    me = [sys.executable, "-P", "-m", "aletheia"]
    manager = Manager()
    manager.add_process("web", shlex.join([*me, "serve", "--host", host, "--port", str(port)]))
    manager.add_process("worker", shlex.join([*me, "worker"]))
    manager.loop()
    sys.exit(manager.returncode)


@cli.command("mcp")
@click.option("--project", "-p", default=None,
              help="Default project for the tools (default: the current directory's).")
def mcp_command(project: str | None) -> None:
    """Serve MCP over stdio (what a host's MCP config runs)."""
    from aletheia.cli.base import current_project
    from aletheia.web.connections import Connections
    from aletheia.web.mcp_server import build_server

    conns = Connections()
    server = build_server(conns.get, default_project=current_project(project))
    try:
        server.run()
    finally:
        conns.close_all()


@cli.command()
@click.option("--rotate", is_flag=True, help="Make a new token (signs the dashboard out).")
@click.option("--path", "show_path", is_flag=True, help="Print the token file's path instead.")
def token(rotate: bool, show_path: bool) -> None:
    """Print the local API token (creating it if needed)."""
    from aletheia.web import security

    if show_path:
        click.echo(str(security.token_path()))
        return
    if rotate:
        if config.is_set(security.TOKEN_ENV):
            raise click.ClickException(f"{security.TOKEN_ENV} is set: it overrides the file")
        click.echo(security.rotate_token())
        return
    click.echo(security.ensure_token())

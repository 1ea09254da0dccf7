"""Console-script entry: dispatch ``aletheia hook`` before any heavy import.

The hook runs on every host event, so it must not pay for click (or anything else the
other commands need); everything else goes to the click CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook" and not {"-h", "--help"} & set(sys.argv[2:]):
        try:
            from aletheia.hooks.run import main as hook_main
        except BaseException:
            # Even a broken install must not fail the host's event: a hook always exits 0.
            import os

            os._exit(0)
        hook_main(sys.argv[2:])
        return
    from aletheia.cli import cli

    if len(sys.argv) > 1 and sys.argv[1] in QUICK_EXIT:
        _run_then_exit(cli)
    cli()


# Read-only commands an agent runs often: once their output is written and their store closed,
# nothing is left to clean up, and tearing the interpreter down (freeing every module click
# and sqlite3 loaded) costs ~10 ms of a ~60 ms run.  They flush and leave with os._exit.
QUICK_EXIT = frozenset({"search", "get", "timeline", "context", "stats"})


def _run_then_exit(cli: object) -> None:
    import os

    code: object = 0
    try:
        cli()  # type: ignore[operator]
    except SystemExit as exc:
        code = exc.code
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


if __name__ == "__main__":
    main()

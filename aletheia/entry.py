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

    cli()


if __name__ == "__main__":
    main()

"""What the server writes to its log: one line per request, never what was asked.

Search queries, ids and tokens travel in query strings (``/v1/search?q=…``), and a user pastes
secrets into searches; uvicorn's access log prints the full path.  So the access log keeps the
method, the path without its query string, and the status.  Bodies are never logged.
"""

from __future__ import annotations

import copy
import logging
from typing import Any


class NoQueryString(logging.Filter):
    """Cut ``?…`` from the path uvicorn puts in an access record's arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = args[2].split("?", 1)[0]
            record.args = (*args[:2], path, *args[3:])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration with the filter on the access handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["no_query_string"] = {"()": f"{__name__}.NoQueryString"}
    config["handlers"]["access"].setdefault("filters", []).append("no_query_string")
    return config

"""schemathesis against the server's own OpenAPI document, on a real uvicorn: every check it has
(no 5xx, responses and status codes as documented, invalid input refused, valid input accepted,
auth not ignored, …), bounded in cases.

This module doubles as the schemathesis hooks module (``SCHEMATHESIS_HOOKS``): it teaches the
run to send the bundle import's ``application/x-ndjson`` body.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import schemathesis

from tests.webproc import running_server, server_env

pytestmark = pytest.mark.slow

# Two operations take input whose validity the schema cannot state: a search whose `since` is
# after its `until`, and a bundle body (JSON Lines with a header line).  They answer 400 with a
# message; only the "schema-valid input must be accepted" check is off for them.
CONFIG = """
[checks]
enabled = true

[[operations]]
include-operation-id = "search"
checks.positive_data_acceptance.enabled = false

[[operations]]
include-operation-id = "import_bundle"
checks.positive_data_acceptance.enabled = false
"""


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: Any, value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


def test_openapi_document_holds_under_schemathesis(aletheia_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    with running_server(aletheia_home, "--no-access-log") as srv, srv.client() as c:
        # Some data, so reads and curation find something to work on.
        for i in range(5):
            c.post("/v1/memories", json={"title": f"seed memory {i}", "narrative": "seed",
                                         "project": "st", "kind": "note"})
        env = server_env(aletheia_home, SCHEMATHESIS_HOOKS="tests.e2e.test_schemathesis")
        st = Path(sys.executable).with_name("schemathesis")
        proc = subprocess.run(
            [str(st), "--config-file", str(config), "run", f"{srv.url}/v1/openapi.json",
             "-H", f"Authorization: Bearer {srv.token}",
             "--max-examples", "10", "--seed", "5", "--no-color",
             "--generation-database", "none", "--report-dir", str(tmp_path / "report")],
            env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=240,
        )
        server_log = "".join(srv.log)
    out = proc.stdout + proc.stderr
    summary = out[out.rfind("SUMMARY"):] if "SUMMARY" in out else out[-3000:]
    assert proc.returncode == 0, summary
    cases = int(re.search(r"(\d+) generated", out).group(1))  # type: ignore[union-attr]
    print(f"schemathesis: {cases} cases, all checks passed")
    assert cases >= 300
    assert "Traceback" not in server_log

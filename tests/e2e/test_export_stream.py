"""REST bundle export is streamed from a read snapshot of its own: it arrives in chunks while the
server keeps answering (writes included), and the bundle is the one the CLI writes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia import bundles, db, store
from tests.webproc import running_server, server_env

pytestmark = pytest.mark.slow


def _fill(n: int) -> None:
    conn = db.connect()
    try:
        store.write_memories(conn, [store.MemoryIn(
            project="big", kind="note", title=f"note {i}", narrative="x" * 2000,
            created_at=1_700_000_000_000 + i) for i in range(n)])
    finally:
        conn.close()


def test_export_streams_in_chunks_and_the_server_keeps_writing(aletheia_home: Path) -> None:
    _fill(3000)  # about 18 MB of bundle: more than the socket buffers hold
    with running_server(aletheia_home) as srv, srv.client() as c, srv.client() as other, \
            c.stream("GET", "/v1/bundles/export", params={"project": "big"}) as r:
        assert r.status_code == 200
        chunks = r.iter_raw()
        first = next(chunks)
        assert 0 < len(first) < 3000 * 6000  # the head, not the whole bundle
        # Mid-stream, a write on the same server goes through (its thread's pooled
        # connection is not stuck inside the export's read transaction).
        made = other.post("/v1/memories", json={"project": "big", "title": "during",
                                                "narrative": "written mid-export"})
        assert made.status_code == 201, made.text
        # The export is still reading (lazily, from its snapshot): the WAL cannot be
        # truncated under it.  A bundle built whole before sending would have let go.
        probe = sqlite3.connect(aletheia_home / "hub.db")
        busy = probe.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        probe.close()
        assert busy == 1
        body = first + b"".join(chunks)
    records = [json.loads(line) for line in body.decode().splitlines()]
    assert records[0]["type"] == "header"
    memories = [r for r in records if r["type"] == "memory"]
    # One snapshot: the memory written mid-export is not in it.
    assert len(memories) == 3000 and all(m["title"] != "during" for m in memories)
    cli = subprocess.run([sys.executable, "-m", "aletheia", "export", "-p", "big"],
                         capture_output=True, check=True, env=server_env(aletheia_home))
    from_cli = [json.loads(line) for line in cli.stdout.decode().splitlines()]
    assert [r for r in from_cli if r["type"] == "memory" and r["title"] != "during"] == memories


def test_stream_lines_closes_its_connection(conn: sqlite3.Connection) -> None:
    _fill(80)
    own = db.connect(check_same_thread=False)
    chunks = bundles.stream_lines(own, "big")
    assert next(chunks)
    chunks.close()  # the reader went away
    with pytest.raises(sqlite3.ProgrammingError):
        own.execute("SELECT 1")

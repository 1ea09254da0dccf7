"""Signed erase receipts: what was erased, how many, when, and an HMAC-SHA256 that ``verify`` checks.

The key is 32 random bytes in ``keys/receipt.key`` (0600), created on first use.  A receipt
names ids and counts, never the erased text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from aletheia import ids, pages, paths
from aletheia.errors import InvalidInput, NotFound

ALG = "HMAC-SHA256"
KEY_FILE = "receipt.key"
_INSERT = "INSERT INTO receipt(id, created_at, body, signature) VALUES (?, ?, ?, ?)"


def key_path() -> Path:
    return paths.keys_dir() / KEY_FILE


def load_key(*, create: bool = True) -> bytes:
    """The signing key; created 0600 (O_EXCL, so two first users agree on one key)."""
    path = key_path()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise NotFound(f"no receipt key at {path}") from None
    paths.ensure_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    except FileExistsError:
        return path.read_bytes()
    try:
        os.write(fd, os.urandom(32))
    finally:
        os.close(fd)
    return path.read_bytes()


def canonical(body: dict[str, Any]) -> bytes:
    # ASCII-only, so any body (even one with lone surrogates) has exactly one byte form.
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(body: dict[str, Any], key: bytes | None = None) -> str:
    return hmac.new(load_key() if key is None else key, canonical(body), hashlib.sha256).hexdigest()


def issue(conn: sqlite3.Connection, body: dict[str, Any], *, key: bytes | None = None) -> dict[str, Any]:
    """Sign ``body`` (which carries ``id`` and ``created_at``) and store it; call inside the
    erase's transaction so the receipt exists exactly when the erase committed."""
    signature = sign(body, key)
    conn.execute(_INSERT, (body["id"], body["created_at"], canonical(body).decode(), signature))
    return {"id": body["id"], "alg": ALG, "body": body, "signature": signature}


def _from_row(r: sqlite3.Row) -> dict[str, Any]:
    return {"id": r["id"], "alg": ALG, "body": json.loads(r["body"]), "signature": r["signature"]}


def get_receipt(conn: sqlite3.Connection, receipt_id: str) -> dict[str, Any]:
    r = conn.execute("SELECT * FROM receipt WHERE id = ?", (receipt_id,)).fetchone()
    if r is None:
        raise NotFound(f"no receipt with id {receipt_id}")
    return _from_row(r)


def list_receipts(conn: sqlite3.Connection, *, limit: int = pages.DEFAULT_LIMIT,
                  cursor: str | None = None) -> pages.Page:
    """Receipts newest first, as summaries (id, when, counts, selector)."""
    pages.check_limit(limit)
    after = pages.decode(cursor, (int, str))
    if after is None:
        rows = conn.execute(
            "SELECT * FROM receipt ORDER BY created_at DESC, id DESC LIMIT ?", (limit + 1,)
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT * FROM receipt WHERE created_at < ? OR (created_at = ? AND id < ?) "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (after[0], after[0], after[1], limit + 1),
        ).fetchall()
    items = []
    for r in rows:
        body = json.loads(r["body"])
        items.append({
            "id": r["id"], "created_at": r["created_at"], "created": ids.iso(r["created_at"]),
            "selector": body.get("selector", {}), "counts": body.get("counts", {}),
        })
    return pages.page(items, limit, "created_at", "id")


def verify(receipt: dict[str, Any], *, conn: sqlite3.Connection | None = None,
           key: bytes | None = None) -> dict[str, Any]:
    """Check a receipt's signature (and, given ``conn``, that what it erased is still gone).

    Returns ``{"valid": bool, "signature": bool, "still_erased": bool | None, "problems": [...]}``.
    """
    body = receipt.get("body")
    signature = receipt.get("signature")
    if not isinstance(body, dict) or not isinstance(signature, str):
        raise InvalidInput('a receipt is an object with a "body" object and a "signature" string')
    problems: list[str] = []
    try:
        secret = load_key(create=False) if key is None else key
    except NotFound:
        secret = None
    if secret is None:
        good = False
        problems.append("this store has no receipt key: it never signed a receipt")
    else:
        given = signature.strip().lower().encode("utf-8", "surrogatepass")
        good = hmac.compare_digest(sign(body, secret).encode(), given)
        if not good:
            problems.append("the signature does not match: the receipt was altered or not "
                            "signed here")
    still: bool | None = None
    if conn is not None and good:
        still = True
        for table, name in (("memory", "memory_ids"), ("fact", "fact_ids")):
            wanted = [i for i in body.get(name, []) if isinstance(i, str)]
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ",".join("?" * len(chunk))
                back = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE id IN ({marks})", chunk
                ).fetchone()[0]
                if back:
                    still = False
                    problems.append(f"{back} erased {table} id(s) exist again (re-imported?)")
        copies = _copies(conn, body)
        if copies:
            still = False
            problems.extend(copies)
    return {"valid": good and still is not False, "signature": good, "still_erased": still,
            "problems": problems}


def _copies(conn: sqlite3.Connection, body: dict[str, Any]) -> list[str]:
    """What came back of an erase in other rows: a memory or fact that matches its tombstones,
    and a derived row (a summary, a fact) or any row added since that quotes the erased text
    (shares an 8-word window with it).  Receipts from before tombstones check ids only."""
    from aletheia import tombstones

    receipt_id = body.get("id")
    projects = [p for p in body.get("projects", []) if isinstance(p, str)]
    if not isinstance(receipt_id, str) or not projects:
        return []
    buried = {r[0] for r in conn.execute("SELECT hash FROM tombstone WHERE receipt_id = ?",
                                         (receipt_id,))}
    problems: list[str] = []
    expected = body.get("counts", {}).get("tombstones")
    if isinstance(expected, int) and len(buried) < expected:
        problems.append(f"{expected - len(buried)} of its tombstones were removed")
    quoted = tombstones.receipt_shingles(conn, receipt_id)
    mark = body.get("watermark", {})
    marks = ",".join("?" * len(projects))
    matched = quoting = 0
    for r in conn.execute(
        "SELECT rowid, project, session_id, kind, source, title, subtitle, narrative, facts, "
        f"concepts, content_hash FROM memory WHERE project IN ({marks}) OR scope = 'global'",
        projects,
    ):
        if buried and any(k in buried for k in tombstones.memory_keys(r)):
            matched += 1
            continue
        derived = r["source"] == "worker" or r["kind"] in ("summary", "project_summary")
        if quoted and (derived or r["rowid"] > int(mark.get("memory", 0))):
            text = "\n".join(str(r[k] or "") for k in ("title", "subtitle", "narrative", "facts",
                                                         "concepts"))
            if tombstones.copies(text, quoted):
                quoting += 1
    for f in conn.execute(
        f"SELECT project, text, content_hash FROM fact WHERE project IN ({marks}) OR scope = 'global'",
        projects,
    ):
        if buried and tombstones.fact_key(f["project"], f["content_hash"]) in buried:
            matched += 1
        elif tombstones.copies(f["text"], quoted):
            quoting += 1
    if matched:
        problems.append(f"{matched} row(s) hold erased content again")
    if quoting:
        problems.append(f"{quoting} derived or newer row(s) quote the erased text")
    return problems

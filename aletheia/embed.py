"""Optional semantic search, the ``aletheia-mem[embed]`` extra: a local embedding model, vectors
in hub.db's ``memory_vec`` table, nearest neighbours by cosine similarity.

The model is WordLlama's static 256-dimension embedding, whose weights and tokenizer ship inside
the ``wordllama`` wheel: they are loaded from the installed package, never from a hub, so it
works offline.  Nothing here runs in the hook: ``embed_pending`` runs in the background (the
worker, or ``aletheia embed``), and search quietly falls back to keyword-only ranking when the
extra is absent, switched off, or failing.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aletheia import ids
from aletheia.db import tx

MODEL = "wordllama-l2-supercat-256"
DIM = 256
# Text given to the model per memory: title, subtitle and the head of the narrative.
TEXT_CAP = 2000
BATCH = 256
ENV_SWITCH = "ALETHEIA_SEMANTIC"  # "1"/"on": fuse semantic neighbours into search by default

_lock = threading.Lock()
_model: Any = None


class EmbedUnavailable(RuntimeError):
    """The extra is not installed, or its model could not be loaded."""


def available() -> bool:
    """The extra's packages are importable (cheap: nothing is loaded)."""
    return all(importlib.util.find_spec(name) is not None for name in ("numpy", "wordllama"))


def model_name() -> str:
    return MODEL


def switched_on() -> bool:
    from aletheia import config

    return bool(config.env(ENV_SWITCH))


def _load() -> Any:
    """WordLlama from the files inside its wheel (no network: the packaged loader would try a
    hub download because it looks for the tokenizer in the wrong folder)."""
    global _model
    with _lock:
        if _model is not None:
            return _model
        if not available():
            raise EmbedUnavailable("install aletheia-mem[embed] for semantic search")
        try:
            import wordllama  # type: ignore[import-untyped]
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference  # type: ignore[import-untyped]

            root = Path(wordllama.__file__).parent
            tokenizer = Tokenizer.from_file(
                str(root / "tokenizers" / "l2_supercat_tokenizer_config.json")
            )
            with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"),
                           framework="np", device="cpu") as f:
                weights = f.get_tensor("embedding.weight")
            _model = WordLlamaInference(weights, tokenizer, binary=False)
        except Exception as exc:  # a broken install must read as "unavailable", not crash
            raise EmbedUnavailable(f"the embedding model failed to load: {exc}") from exc
        return _model


def embed_texts(texts: Sequence[str]) -> Any:
    """Unit-length float32 vectors, one row per text."""
    import numpy as np

    model = _load()
    vectors = np.asarray(model.embed(list(texts)), dtype=np.float32).reshape(len(texts), DIM)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def memory_text(title: str, subtitle: str, narrative: str) -> str:
    parts = [p for p in (title, subtitle) if p]
    if narrative and narrative != title:
        parts.append(narrative)
    return "\n".join(parts)[:TEXT_CAP]


_PENDING = """
SELECT m.rowid, m.title, m.subtitle, substr(m.narrative, 1, ?) AS narrative FROM memory m
WHERE NOT EXISTS (SELECT 1 FROM memory_vec v WHERE v.rowid = m.rowid AND v.model = ?)
ORDER BY m.rowid LIMIT ?
"""
_PUT = (
    "INSERT OR REPLACE INTO memory_vec(rowid, model, dim, vector, created_at) "
    "VALUES (?, ?, ?, ?, ?)"
)


def pending(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "SELECT count(*) FROM memory m WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_vec v WHERE v.rowid = m.rowid AND v.model = ?)", (MODEL,)
    ).fetchone()
    return int(row[0])


def embed_pending(
    conn: sqlite3.Connection, *, limit: int | None = None, batch: int = BATCH,
    now: int | None = None,
) -> int:
    """Embed memories that have no vector for this model yet; returns how many were stored.

    The model runs outside any transaction; each batch is written in one short ``tx`` and a
    row deleted meanwhile is skipped (its vector would be an orphan)."""
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        rows = conn.execute(_PENDING, (TEXT_CAP, MODEL, size)).fetchall()
        if not rows:
            break
        vectors = embed_texts([memory_text(r[1], r[2], r[3]) for r in rows])
        stamp = ids.now_ms() if now is None else now
        with tx(conn):
            for r, vec in zip(rows, vectors, strict=True):
                if conn.execute("SELECT 1 FROM memory WHERE rowid = ?", (r[0],)).fetchone():
                    conn.execute(_PUT, (r[0], MODEL, DIM, vec.tobytes(), stamp))
        done += len(rows)
        if len(rows) < size:
            break
    return done


def enabled(conn: sqlite3.Connection) -> bool:
    """Semantic search is on by default only when switched on, installed and filled."""
    if not switched_on() or not available():
        return False
    row = conn.execute("SELECT 1 FROM memory_vec WHERE model = ? LIMIT 1", (MODEL,)).fetchone()
    return row is not None


def query_vector(text: str) -> Any:
    return embed_texts([text])[0]


def similarities(conn: sqlite3.Connection, rowids: Sequence[int], vector: Any) -> dict[int, float]:
    """Cosine similarity of ``vector`` to each memory in ``rowids`` that has a vector."""
    import numpy as np

    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    rows = conn.execute(
        f"SELECT rowid, vector FROM memory_vec WHERE model = ? AND rowid IN ({marks})",
        (MODEL, *rowids),
    ).fetchall()
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), DIM)
    scores = matrix @ vector
    return {int(r[0]): float(s) for r, s in zip(rows, scores, strict=True)}


def nearest(
    conn: sqlite3.Connection, vector: Any, where: str, params: Sequence[Any], depth: int
) -> list[sqlite3.Row]:
    """The ``depth`` memories (alias ``m``, filtered by ``where``) nearest to ``vector``."""
    import numpy as np

    rows = conn.execute(
        "SELECT v.rowid, v.vector FROM memory_vec v JOIN memory m ON m.rowid = v.rowid "
        f"WHERE v.model = ?{where}",
        (MODEL, *params),
    ).fetchall()
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), DIM)
    scores = matrix @ vector
    k = min(depth, len(rows))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    rowids = [int(rows[i][0]) for i in top]
    marks = ",".join("?" * len(rowids))
    found = {
        r["rid"]: r
        for r in conn.execute(
            "SELECT m.rowid AS rid, m.id, m.title, m.kind, m.project, m.created_at, m.session_id "
            f"FROM memory m WHERE m.rowid IN ({marks})", rowids
        )
    }
    return [found[i] for i in rowids if i in found]


BACKGROUND_BATCH = 128
_log_failed = False


def background_step(conn: sqlite3.Connection, *, batch: int = BACKGROUND_BATCH) -> int:
    """One bounded batch of vectors for the worker's ticker; 0 when the extra is off or absent.

    Never raises: a missing or broken model leaves keyword search as it is."""
    global _log_failed
    if not switched_on() or not available():
        return 0
    try:
        return embed_pending(conn, limit=batch)
    except Exception as exc:  # the worker must keep ticking whatever the model does
        if not _log_failed:
            import logging

            logging.getLogger("aletheia.embed").warning("embedding failed: %s", exc)
            _log_failed = True
        return 0

"""A hook's process searches once: the concept map's stemmed keys come from a file the first
process wrote (``search._fixed_stems``), and every ranking is the one stemming them gives."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from aletheia import concepts, store
from aletheia import search as S
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn

P = "/repo/app"
T0 = 1_700_000_000_000
QUESTIONS = ("how do I run the tests?", "which linter do we use?", "what formats the code?",
             "how are the docs built?", "which package manager do we use", "how do we log in")


def _fresh() -> None:
    """What a new process starts with: nothing stemmed, nothing kept."""
    for kept in (S._STEMS, S._TYPED, S._KEY_STEMS, S._KEY_FIRST, S._ADDED_STEMS, S._MEAN_LENGTH,
                 S._SIZES):
        kept.clear()


def _store(conn: sqlite3.Connection) -> None:
    for i, text in enumerate(("ran pytest -q -x: 41 passed", "ruff check . found 2 errors",
                              "alejandra . reformatted 3 files", "quarto render report.qmd",
                              "uv add httpx", "the login page redirects after sign-in",
                              "lunch at noon with the design team")):
        store.write_memory(conn, MemoryIn(project=P, kind="tool_event", title=text, narrative=text,
                                          created_at=T0 + i, session_id="s1"))


def _ranked(conn: sqlite3.Connection) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in search(conn, SearchQuery(q=q, project=P, limit=20, semantic=False))]
            for q in QUESTIONS]


def _files(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("stems-*.bin"))


def test_the_kept_key_stems_give_the_same_rankings_and_the_same_kept_words(
    conn: sqlite3.Connection, aletheia_home: Path,
) -> None:
    _store(conn)
    _fresh()
    assert not _files(aletheia_home)
    stemmed = _ranked(conn)  # (no file yet: stemmed by the index, then written)
    stemmed_state = (dict(S._STEMS), dict(S._TYPED), dict(S._KEY_STEMS))
    assert len(_files(aletheia_home)) == 2  # the concepts' keys and the synonyms'
    _fresh()
    assert _ranked(conn) == stemmed
    assert (dict(S._STEMS), dict(S._TYPED), dict(S._KEY_STEMS)) == stemmed_state
    assert any(h for h in stemmed)


def test_the_file_holds_what_the_tokenizer_says(conn: sqlite3.Connection) -> None:
    keys = list(concepts.CONCEPTS)
    _fresh()
    S._fixed_stems(conn, keys)  # writes the file
    _fresh()
    assert S._fixed_stems(conn, keys) == S.stems(conn, keys)
    assert any(len(t) == 1 and t[0] != k for t, k in zip(S.stems(conn, keys), keys, strict=True))


def test_a_damaged_or_foreign_file_is_stemmed_again_and_rewritten(
    conn: sqlite3.Connection, aletheia_home: Path,
) -> None:
    _store(conn)
    _fresh()
    expected = _ranked(conn)
    for bad in (b"\x00garbage", b""):
        for f in _files(aletheia_home):
            f.write_bytes(bad)
        _fresh()
        assert _ranked(conn) == expected
        assert all(f.read_bytes() != bad for f in _files(aletheia_home))
    # A file of the right form but another list's length is not taken.
    import marshal

    for f in _files(aletheia_home):
        f.write_bytes(marshal.dumps([["x"]]))
    _fresh()
    assert _ranked(conn) == expected


def test_an_unwritable_cache_still_searches(conn: sqlite3.Connection, aletheia_home: Path) -> None:
    _store(conn)
    _fresh()
    expected = _ranked(conn)
    shutil.rmtree(aletheia_home / "cache")
    (aletheia_home / "cache").write_text("not a folder")
    _fresh()
    assert _ranked(conn) == expected


def test_the_mean_length_is_the_varint_sum_of_the_newest_sizes(conn: sqlite3.Connection) -> None:
    # (a column of 128 tokens or more takes two bytes in FTS5's docsize blob)
    for i, n in enumerate((3, 40, 130, 300, 7)):
        text = " ".join(f"w{j}" for j in range(n))
        store.write_memory(conn, MemoryIn(project=P, kind="note", title=f"t{i}", narrative=text,
                                          created_at=T0 + i))
    rows = conn.execute("SELECT sz FROM memory_fts_docsize WHERE id IN (SELECT rowid FROM memory "
                        "WHERE project = ?)", (P,)).fetchall()
    assert any(not bytes(r[0]).isascii() for r in rows)
    expected = sum(S._varint_sum(bytes(r[0])) for r in rows) / len(rows)
    _fresh()
    assert S._mean_length(conn, SearchQuery(q="x", project=P), len(rows)) == expected
    all_rows = conn.execute("SELECT sz FROM memory_fts_docsize").fetchall()
    _fresh()
    assert S._mean_length(conn, SearchQuery(q="x"), len(all_rows)) == \
        sum(S._varint_sum(bytes(r[0])) for r in all_rows) / len(all_rows)

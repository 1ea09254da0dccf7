"""The optional semantic extra: vectors in memory_vec, fused into search, and keyword search
that keeps working when the extra is absent, switched off or failing."""

from __future__ import annotations

import sqlite3

import pytest

from aletheia import embed, store
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn

P = "/repo/app"
T0 = 1_700_000_000_000

needs_model = pytest.mark.skipif(not embed.available(), reason="aletheia-mem[embed] not installed")


def write(conn: sqlite3.Connection, titles: list[str]) -> list[str]:
    items = [MemoryIn(project=P, kind="note", title=t, narrative=t, created_at=T0 + i)
             for i, t in enumerate(titles)]
    return [r.id for r in store.write_memories(conn, items)]


TITLES = [
    "adopted a little dog from the animal shelter",
    "the build failed with a segmentation fault in the linker",
    "went hiking in the mountains last weekend",
    "rewrote the invoice export to stream rows",
]


def test_keyword_search_works_without_the_extra(conn: sqlite3.Connection,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ids = write(conn, TITLES)
    monkeypatch.setattr(embed, "available", lambda: False)
    monkeypatch.setenv(embed.ENV_SWITCH, "1")
    for semantic in (None, True, False):
        hits = search(conn, SearchQuery(q="invoice export", project=P, semantic=semantic))
        assert [h.id for h in hits] == [ids[3]]


def test_a_failing_model_falls_back_to_keywords(conn: sqlite3.Connection,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ids = write(conn, TITLES)

    def broken(texts: list[str]) -> None:
        raise embed.EmbedUnavailable("model file is corrupt")

    monkeypatch.setattr(embed, "embed_texts", broken)
    hits = search(conn, SearchQuery(q="segmentation fault", project=P, semantic=True))
    assert [h.id for h in hits] == [ids[1]] and hits[0].via == ["keyword"]


def test_semantic_is_off_by_default(conn: sqlite3.Connection,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embed.ENV_SWITCH, raising=False)
    write(conn, TITLES)
    assert not embed.enabled(conn)


@needs_model
def test_pending_memories_are_embedded_once(conn: sqlite3.Connection) -> None:
    ids = write(conn, TITLES)
    assert embed.pending(conn) == len(TITLES)
    assert embed.embed_pending(conn, batch=3) == len(TITLES)
    assert embed.embed_pending(conn) == 0 and embed.pending(conn) == 0
    row = conn.execute("SELECT model, dim, length(vector) FROM memory_vec LIMIT 1").fetchone()
    assert tuple(row) == (embed.MODEL, embed.DIM, embed.DIM * 4)
    # An edit drops the stale vector (it is embedded again); a delete drops it for good.
    conn.execute("UPDATE memory SET title = 'changed' WHERE id = ?", (ids[0],))
    assert embed.pending(conn) == 1
    conn.execute("DELETE FROM memory WHERE id = ?", (ids[1],))
    assert conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == len(TITLES) - 2


@needs_model
def test_semantic_neighbours_are_fused_into_the_same_ranking(
        conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = write(conn, TITLES)
    store.write_memory(conn, MemoryIn(project="/other", kind="note", title="my puppy chewed a shoe"))
    embed.embed_pending(conn)
    # No word in common with "puppy": only the semantic list can find the dog.
    assert search(conn, SearchQuery(q="puppy", project=P, semantic=False)) == []
    hits = search(conn, SearchQuery(q="puppy", project=P, semantic=True, limit=1))
    assert [h.id for h in hits] == [ids[0]] and hits[0].via == ["semantic"]
    # Filters apply to the semantic list too.
    assert search(conn, SearchQuery(q="puppy", project=P, semantic=True, kind="prompt")) == []
    # Switched on by the environment, semantic=None fuses it.
    monkeypatch.setenv(embed.ENV_SWITCH, "1")
    assert embed.enabled(conn)
    assert search(conn, SearchQuery(q="puppy", project=P, limit=1))[0].id == ids[0]


@needs_model
def test_the_model_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the embedding model tried to use the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(embed, "_model", None)
    vectors = embed.embed_texts(["a dog", "a puppy", "a compiler"])
    assert vectors.shape == (3, embed.DIM)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_the_worker_embeds_in_the_background_only_when_switched_on(
        conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    write(conn, TITLES)
    monkeypatch.delenv(embed.ENV_SWITCH, raising=False)
    assert embed.background_step(conn) == 0
    monkeypatch.setenv(embed.ENV_SWITCH, "on")
    monkeypatch.setattr(embed, "embed_pending", lambda c, limit: (_ for _ in ()).throw(
        embed.EmbedUnavailable("broken")))
    assert embed.background_step(conn) == 0  # a failing model never stops the worker


@needs_model
def test_the_ticker_fills_vectors_when_switched_on(conn: sqlite3.Connection,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from aletheia.tasks import ticker

    class Queue:
        def pending_count(self) -> int:
            return 0

        def enqueue(self, job_id: int) -> None:
            raise AssertionError("no jobs expected")

    write(conn, TITLES)
    monkeypatch.setenv(embed.ENV_SWITCH, "1")
    result = ticker.tick(conn, Queue(), now=T0)  # type: ignore[arg-type]
    assert result.embedded == len(TITLES) and embed.pending(conn) == 0


def test_similarity_re_ranks_the_keyword_finds(
        conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    from aletheia import search as S

    first = store.write_memory(conn, MemoryIn(project=P, kind="note", created_at=T0,
                                              title="invoice export: one")).id
    second = store.write_memory(conn, MemoryIn(project=P, kind="note", created_at=T0 + 1,
                                               title="invoice export: two")).id
    rowid = {r[1]: r[0] for r in conn.execute("SELECT rowid, id FROM memory")}
    closeness = {first: 0.0, second: 1.0}
    monkeypatch.setattr(embed, "query_vector", lambda text: [1.0])
    monkeypatch.setattr(embed, "nearest", lambda *args: [])
    monkeypatch.setattr(embed, "similarities", lambda conn, rowids, vector: {
        rowid[i]: c for i, c in closeness.items() if rowid[i] in rowids})
    keyword = search(conn, SearchQuery(q="invoice export", project=P, semantic=False))
    assert {h.id for h in keyword} == {first, second}
    # The one nearer the query moves up (SEMANTIC_RERANK 0: the keyword order).
    loser = keyword[1].id
    closeness = {keyword[0].id: 0.0, loser: 1.0}
    hybrid = search(conn, SearchQuery(q="invoice export", project=P, semantic=True))
    assert [h.id for h in hybrid] == [loser, keyword[0].id]
    monkeypatch.setattr(S, "SEMANTIC_RERANK", 0.0)
    hybrid = search(conn, SearchQuery(q="invoice export", project=P, semantic=True))
    assert [h.id for h in hybrid] == [h.id for h in keyword]

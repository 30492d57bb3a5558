"""The vector store against the real embedded Qdrant engine (qdrant-edge) in tmp_path.

No mocks: every test writes to a real shard and reads it back. The server
backend cannot run here, so only its pure conversion functions are tested.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

from engramdb.platform.config import Settings
from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.vectors import (
    INDEXED_FIELDS,
    EdgeVectorStore,
    QdrantServerStore,
    VectorInputError,
    VectorPoint,
    VectorStore,
    VectorStoreError,
    open_vector_store,
    point_id,
    server_filter,
    server_points,
)

# qdrant-client, constructed against a URL where no server runs (its version
# check runs in the background and may warn during a later test).
pytestmark = [
    pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning"),
    pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection:UserWarning"),
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


@pytest.fixture
def store(tmp_path: Path):
    s = EdgeVectorStore(tmp_path / "qdrant")
    s.ensure_collection(C, DIM)
    yield s
    s.close()


def test_edge_store_satisfies_protocol(store: EdgeVectorStore) -> None:
    assert isinstance(store, VectorStore)


def test_search_returns_nearest_first(store: EdgeVectorStore) -> None:
    rng = np.random.default_rng(1)
    vectors = {f"k{i}": unit(rng.standard_normal(DIM)) for i in range(50)}
    store.upsert(C, "a", [VectorPoint(k, v, {"doc_id": "d"}) for k, v in vectors.items()])
    query = unit(vectors["k7"] + 0.05 * rng.standard_normal(DIM))

    hits = store.search(C, "a", query, 5)

    expected = sorted(vectors, key=lambda k: -float(vectors[k] @ query))[:5]
    assert [h.key for h in hits] == expected
    assert hits[0].key == "k7"
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0].score == pytest.approx(float(vectors["k7"] @ query), abs=1e-5)
    assert hits[0].payload == {"doc_id": "d", "namespace": "a", "key": "k7"}


def test_search_limit_and_empty_results(store: EdgeVectorStore) -> None:
    store.upsert(C, "a", [VectorPoint(f"k{i}", basis(i % DIM) + 0.1, {}) for i in range(10)])
    assert len(store.search(C, "a", basis(0), 3)) == 3
    assert len(store.search(C, "a", basis(0), 100)) == 10
    assert store.search(C, "a", basis(0), 0) == []
    assert store.search(C, "empty-ns", basis(0), 5) == []
    assert store.search("never_created", "a", basis(0), 5) == []


def test_namespace_isolation(store: EdgeVectorStore) -> None:
    """Same keys in A and B are different points; nothing done in A reaches B."""
    keys = [f"qa:{i}" for i in range(6)]
    store.upsert(
        C, "A", [VectorPoint(k, basis(i), {"doc_id": "d1", "side": "A"}) for i, k in enumerate(keys)]
    )
    store.upsert(
        C, "B", [VectorPoint(k, basis(7 - i), {"doc_id": "d1", "side": "B"}) for i, k in enumerate(keys)]
    )

    # Upserting the same keys in B did not overwrite A.
    assert store.count(C, "A") == 6
    assert store.count(C, "B") == 6
    assert point_id("A", "qa:0") != point_id("B", "qa:0")

    hits_a = store.search(C, "A", basis(7), 20)
    assert len(hits_a) == 6
    assert {h.payload["side"] for h in hits_a} == {"A"}
    assert {h.payload["namespace"] for h in hits_a} == {"A"}
    # In B, basis(7) is exactly qa:0; in A nothing points that way.
    assert store.search(C, "B", basis(7), 1)[0].key == "qa:0"
    assert store.search(C, "B", basis(7), 1)[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits_a[0].score == pytest.approx(0.0, abs=1e-5)

    vec_a = store.get_vectors(C, "A", ["qa:0"])["qa:0"]
    vec_b = store.get_vectors(C, "B", ["qa:0"])["qa:0"]
    np.testing.assert_allclose(vec_a, basis(0), atol=1e-6)
    np.testing.assert_allclose(vec_b, basis(7), atol=1e-6)

    assert store.count(C, "A", where={"doc_id": "d1"}) == 6

    store.delete(C, "A", keys=["qa:0", "qa:1"])
    assert store.count(C, "A") == 4
    assert store.count(C, "B") == 6

    store.delete(C, "A", where={"doc_id": "d1"})
    assert store.count(C, "A") == 0
    assert store.count(C, "B") == 6

    store.upsert(C, "A", [VectorPoint("qa:9", basis(3), {})])
    store.delete(C, "A")  # whole namespace
    assert store.count(C, "A") == 0
    assert store.count(C, "B") == 6
    assert {h.payload["side"] for h in store.search(C, "B", basis(0), 20)} == {"B"}


def test_where_filters(store: EdgeVectorStore) -> None:
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
    both = store.search(C, "a", q, 10, where={"doc_id": "d1", "kind": "entity"})
    assert [h.key for h in both] == ["q4"]
    # Match-any and exact match on a list-valued field match any element.
    assert {h.key for h in store.search(C, "a", q, 10, where={"tags": "y"})} == {"q1", "q2"}
    assert {h.key for h in store.search(C, "a", q, 10, where={"tags": ["x", "nope"]})} == {"q1"}
    assert store.search(C, "a", q, 10, where={"doc_id": "missing"}) == []
    assert store.search(C, "a", q, 10, where={"doc_id": []}) == []

    assert store.count(C, "a", where={"kind": "qa"}) == 2
    assert store.count(C, "a", where={"kind": ["qa", "entity"]}) == 4
    assert store.count(C, "a", where={"doc_id": []}) == 0
    assert store.count(C, "a", where={}) == 4


def test_where_validation(store: EdgeVectorStore) -> None:
    with pytest.raises(VectorInputError, match="namespace"):
        store.search(C, "a", basis(0), 5, where={"namespace": "b"})
    with pytest.raises(VectorInputError, match="string or a list of strings"):
        store.count(C, "a", where={"doc_id": 3})  # type: ignore[dict-item]
    with pytest.raises(VectorInputError, match="invalid payload field"):
        store.count(C, "a", where={"bad field": "x"})


def test_delete_by_keys_where_and_both(store: EdgeVectorStore) -> None:
    store.upsert(
        C,
        "a",
        [VectorPoint(f"k{i}", basis(i % DIM), {"doc_id": f"d{i % 3}"}) for i in range(12)],
    )
    assert store.count(C, "a") == 12

    store.delete(C, "a", keys=["k0", "k1", "does-not-exist"])
    assert store.count(C, "a") == 10
    assert store.get_vectors(C, "a", ["k0", "k1"]) == {}

    store.delete(C, "a", where={"doc_id": "d2"})  # k2, k5, k8, k11
    assert store.count(C, "a") == 6
    assert store.count(C, "a", where={"doc_id": "d2"}) == 0

    # keys AND where: only k3 has doc_id d0 among these keys.
    store.delete(C, "a", keys=["k3", "k4"], where={"doc_id": "d0"})
    assert {h.key for h in store.search(C, "a", unit(np.ones(DIM)), 20)} == {"k4", "k6", "k7", "k9", "k10"}

    # An empty key list or an empty any-of list deletes nothing (never "everything").
    store.delete(C, "a", keys=[])
    store.delete(C, "a", where={"doc_id": []})
    assert store.count(C, "a") == 5

    store.delete(C, "a")
    assert store.count(C, "a") == 0
    store.delete("never_created", "a")  # no-op, no error


def test_upsert_is_idempotent_and_replaces(store: EdgeVectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k", basis(0), {"doc_id": "old", "extra": 1})])
    store.upsert(C, "a", [VectorPoint("k", basis(1), {"doc_id": "new"})])
    assert store.count(C, "a") == 1
    hit = store.search(C, "a", basis(1), 5)
    assert len(hit) == 1
    assert hit[0].score == pytest.approx(1.0, abs=1e-5)
    assert hit[0].payload == {"doc_id": "new", "namespace": "a", "key": "k"}
    # Duplicates inside one call: the last one wins.
    store.upsert(C, "a", [VectorPoint("d", basis(2), {"v": 1}), VectorPoint("d", basis(3), {"v": 2})])
    assert store.count(C, "a") == 2
    np.testing.assert_allclose(store.get_vectors(C, "a", ["d"])["d"], basis(3), atol=1e-6)


def test_get_vectors_are_unit_and_skip_missing(store: EdgeVectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k1", [3, 4, 0, 0, 0, 0, 0, 0], {}), VectorPoint("k2", basis(5), {})])
    got = store.get_vectors(C, "a", ["k1", "k2", "nope", "k1"])
    assert set(got) == {"k1", "k2"}
    assert got["k1"].dtype == np.float32
    np.testing.assert_allclose(got["k1"], [0.6, 0.8, 0, 0, 0, 0, 0, 0], atol=1e-6)
    assert store.get_vectors(C, "a", []) == {}
    assert store.get_vectors(C, "b", ["k1"]) == {}


def test_reopen_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    with EdgeVectorStore(path) as s:
        s.ensure_collection(C, DIM)
        s.upsert(C, "a", [VectorPoint(f"k{i}", basis(i), {"doc_id": "d"}) for i in range(DIM)])
        s.upsert(C, "b", [VectorPoint("k0", basis(4), {})])

    with EdgeVectorStore(path) as s:
        # No ensure_collection needed to read an existing collection.
        assert s.count(C, "a") == DIM
        assert s.count(C, "b") == 1
        assert s.search(C, "a", basis(3), 1)[0].key == "k3"
        np.testing.assert_allclose(s.get_vectors(C, "b", ["k0"])["k0"], basis(4), atol=1e-6)
        s.ensure_collection(C, DIM)  # idempotent on an existing collection
        s.upsert(C, "a", [VectorPoint("new", basis(0), {})])
        assert s.count(C, "a") == DIM + 1
        with pytest.raises(VectorInputError, match="dimension 8, not 16"):
            s.ensure_collection(C, 16)


_CRASH_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    from engramdb.platform.vectors import EdgeVectorStore, VectorPoint

    store = EdgeVectorStore(sys.argv[1])
    store.ensure_collection("qa", 8)
    rng = np.random.default_rng(0)
    store.upsert("qa", "a", [VectorPoint(f"k{i}", rng.standard_normal(8), {"doc_id": "d"}) for i in range(300)])
    store.upsert("qa", "b", [VectorPoint("k0", np.eye(8)[2], {"doc_id": "d"})])
    store.delete("qa", "a", keys=["k0"])
    print("flushed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_data_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH_SCRIPT, str(path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "flushed" in proc.stdout

    with EdgeVectorStore(path) as s:  # the killed process left its WAL lock behind; must still open
        assert s.count(C, "a") == 299
        assert s.count(C, "b") == 1
        assert s.get_vectors(C, "a", ["k0"]) == {}
        assert s.search(C, "b", np.eye(8)[2], 1)[0].key == "k0"
        # Still writable after recovery.
        s.upsert(C, "a", [VectorPoint("after", basis(0), {})])
        assert s.count(C, "a") == 300


def test_dimension_errors(store: EdgeVectorStore) -> None:
    with pytest.raises(VectorInputError, match=r"dimension 5, but the collection expects dimension 8"):
        store.upsert(C, "a", [VectorPoint("k", [1.0] * 5, {})])
    with pytest.raises(VectorInputError, match=r"query vector has dimension 9, .*expects dimension 8"):
        store.search(C, "a", [1.0] * 9, 3)
    # A bad point fails the whole call before anything is written.
    with pytest.raises(VectorInputError):
        store.upsert(C, "a", [VectorPoint("good", basis(0), {}), VectorPoint("bad", [1.0] * 3, {})])
    assert store.count(C, "a") == 0
    with pytest.raises(VectorInputError, match="NaN"):
        store.upsert(C, "a", [VectorPoint("k", [float("nan")] * DIM, {})])
    with pytest.raises(VectorInputError, match="all zeros"):
        store.upsert(C, "a", [VectorPoint("k", [0.0] * DIM, {})])
    with pytest.raises(VectorInputError, match="dimension must be an integer"):
        store.ensure_collection("other", 0)


def test_name_and_payload_validation(store: EdgeVectorStore) -> None:
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
    with pytest.raises(VectorInputError, match="does not exist"):
        store.upsert("missing", "a", [VectorPoint("k", basis(0), {})])
    # The error types fit both the project's error handling and plain ValueError handlers.
    assert issubclass(VectorInputError, InputError)
    assert issubclass(VectorInputError, EngramError)
    assert issubclass(VectorInputError, ValueError)


def test_second_open_of_same_path_is_refused(tmp_path: Path, store: EdgeVectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k", basis(0), {})])
    other = EdgeVectorStore(tmp_path / "qdrant")
    with pytest.raises(VectorStoreError, match="open in another process"):
        other.count(C, "a")


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    s = EdgeVectorStore(tmp_path / "q")
    s.ensure_collection(C, DIM)
    s.close()
    s.close()  # idempotent
    with pytest.raises(VectorStoreError, match="closed"):
        s.count(C, "a")


def test_hnsw_index_is_built_and_searches_stay_correct(tmp_path: Path) -> None:
    """Small thresholds: upserts build HNSW segments and filtered searches walk the graph.

    The per-namespace graphs must give (nearly) the brute-force answer and never
    return a point of another namespace.
    """
    dim, n = 32, 3000
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with EdgeVectorStore(
        tmp_path / "q", indexing_threshold_kb=64, full_scan_threshold_kb=16, hnsw_ef=256
    ) as s:
        s.ensure_collection(C, dim)
        for start in range(0, n, 500):
            for ns in ("a", "b"):
                s.upsert(
                    C,
                    ns,
                    [
                        VectorPoint(f"k{i}", vectors[i], {})
                        for i in range(start, start + 500)
                        if (i % 2 == 0) == (ns == "a")
                    ],
                )
        s.optimize(C)
        stats = s.stats(C)
        assert stats["points"] == n
        assert stats["indexed_vectors"] >= n // 2  # most points live in HNSW segments now

        in_a = np.arange(0, n, 2)
        recalls = []
        for q in rng.standard_normal((20, dim)).astype(np.float32):
            q /= np.linalg.norm(q)
            hits = s.search(C, "a", q, 10)
            assert all(int(h.key[1:]) % 2 == 0 for h in hits)  # only namespace a
            exact = {f"k{i}" for i in in_a[np.argsort(-(vectors[in_a] @ q))[:10]]}
            recalls.append(len(exact & {h.key for h in hits}) / 10)
        assert np.mean(recalls) >= 0.9


def test_concurrent_upserts_and_searches(store: EdgeVectorStore) -> None:
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for b in range(5):
                pts = [
                    VectorPoint(f"t{t}-{b}-{i}", basis((t + i) % DIM) + 0.01, {"doc_id": f"t{t}"})
                    for i in range(20)
                ]
                store.upsert(C, "a", pts)
                store.search(C, "a", basis(t % DIM), 5)
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert store.count(C, "a") == 4 * 5 * 20
    assert store.count(C, "a", where={"doc_id": "t2"}) == 100


# ------------------------------------------------------------- server backend


def test_server_filter_conversion() -> None:
    from qdrant_client import models as qm

    f = server_filter("ns1", where={"doc_id": "d1", "kind": ["qa", "entity"]}, keys=["k1", "k2"])
    assert isinstance(f, qm.Filter)
    ns_cond, doc_cond, kind_cond, id_cond = f.must
    assert ns_cond == qm.FieldCondition(key="namespace", match=qm.MatchValue(value="ns1"))
    assert doc_cond == qm.FieldCondition(key="doc_id", match=qm.MatchValue(value="d1"))
    assert kind_cond == qm.FieldCondition(key="kind", match=qm.MatchAny(any=["qa", "entity"]))
    assert isinstance(id_cond, qm.HasIdCondition)
    assert id_cond.has_id == [point_id("ns1", "k1"), point_id("ns1", "k2")]
    assert server_filter("ns1").must == [ns_cond]
    with pytest.raises(VectorInputError):
        server_filter("ns1", where={"namespace": "ns2"})


def test_server_point_conversion() -> None:
    points = server_points(
        "ns1", [VectorPoint("qa:1", [1.0, 2.0, 2.0], {"doc_id": "d", "tags": ("a", "b")})], 3
    )
    assert len(points) == 1
    p = points[0]
    assert p.id == point_id("ns1", "qa:1")
    assert uuid.UUID(str(p.id)).version == 5
    assert p.vector == [1.0, 2.0, 2.0]
    assert p.payload == {"doc_id": "d", "tags": ["a", "b"], "namespace": "ns1", "key": "qa:1"}
    with pytest.raises(VectorInputError, match="dimension 2, but the collection expects dimension 3"):
        server_points("ns1", [VectorPoint("qa:2", [1.0, 2.0], {})], 3)


def test_open_vector_store_picks_backend(tmp_path: Path) -> None:
    embedded = open_vector_store(Settings(home=tmp_path))
    try:
        assert isinstance(embedded, EdgeVectorStore)
        assert embedded.path == tmp_path / "qdrant"
    finally:
        embedded.close()
    server = open_vector_store(
        Settings(home=tmp_path, qdrant_url="http://127.0.0.1:1", qdrant_api_key="secret")
    )
    try:
        assert isinstance(server, QdrantServerStore)
        assert server.url == "http://127.0.0.1:1"
    finally:
        server.close()


def test_payload_indexes_are_created(tmp_path: Path) -> None:
    import qdrant_edge as qe

    with EdgeVectorStore(tmp_path / "q") as s:
        s.ensure_collection(C, DIM)
    shard = qe.EdgeShard.load(str(tmp_path / "q" / C))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    assert {"namespace", "key", "doc_id", *INDEXED_FIELDS} <= set(schema)
    assert schema["namespace"].data_type == qe.PayloadSchemaType.Keyword
    assert schema["namespace"].params.is_tenant is True
    assert schema["doc_id"].data_type == qe.PayloadSchemaType.Keyword

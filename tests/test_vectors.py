"""Backend-specific behaviour of the vector stores; the shared semantics are in test_vector_contract.py.

No mocks: the embedded tests write to a real qdrant-edge shard in tmp_path and
read it back (durability, locking, HNSW, threads, payload indexes); the server
tests check its id scheme, construction and how it reports an unreachable server.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

from engramdb.platform.config import Settings
from engramdb.platform.resident_memory import resident_kb
from engramdb.platform.vectors import (
    INDEXED_FIELDS,
    EdgeVectorStore,
    QdrantServerStore,
    VectorInputError,
    VectorPoint,
    VectorStoreError,
    open_vector_store,
    point_id,
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


def test_second_open_of_same_path_is_refused(tmp_path: Path, store: EdgeVectorStore) -> None:
    store.upsert(C, "a", [VectorPoint("k", basis(0), {})])
    with pytest.raises(VectorStoreError, match="already open in this process"):
        EdgeVectorStore(tmp_path / "qdrant")  # refused at open, before touching any shard file
    assert store.count(C, "a") == 1


def test_hnsw_index_is_built_and_searches_stay_correct(tmp_path: Path) -> None:
    """Small thresholds: upserts build HNSW segments and filtered searches walk the graph.

    The per-namespace graphs must give (nearly) the brute-force answer and never
    return a point of another namespace; the int8 copies that build and walk the graph
    must not leak into the scores (each hit is rescored with its float32 vector).
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
            # the graph is walked with int8 copies, but the scores returned are the float32 cosines
            assert [h.score for h in hits] == pytest.approx(
                [float(vectors[int(h.key[1:])] @ q) for h in hits], abs=1e-5
            )
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


def test_server_store_needs_exactly_one_of_url_and_client() -> None:
    from qdrant_client import QdrantClient

    with pytest.raises(VectorInputError, match="either a server url or a QdrantClient"):
        QdrantServerStore()
    client = QdrantClient(location=":memory:")
    with pytest.raises(VectorInputError, match="either a server url or a QdrantClient"):
        QdrantServerStore("http://127.0.0.1:1", client=client)
    client.close()


def test_unreachable_server_is_a_clear_store_error() -> None:
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = QdrantServerStore(f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(
            VectorStoreError, match=rf"Qdrant at http://127.0.0.1:{port}: checking in collection 'qa'"
        ):
            store.count(C, "a")
        with pytest.raises(VectorStoreError, match="Connection refused"):
            store.ensure_collection(C, DIM)
    finally:
        store.close()


def test_payload_indexes_are_created(tmp_path: Path) -> None:
    import qdrant_edge as qe

    with EdgeVectorStore(tmp_path / "q") as s:
        s.ensure_collection(C, DIM)
    shard = qe.EdgeShard.load(str(tmp_path / "q" / C))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    assert {"namespace", "doc_id", *INDEXED_FIELDS} <= set(schema)
    assert "key" not in schema  # lookups by key go by point id (a hash of the key), never by index
    assert schema["namespace"].data_type == qe.PayloadSchemaType.Keyword
    assert schema["namespace"].params.is_tenant is True
    assert schema["doc_id"].data_type == qe.PayloadSchemaType.Keyword


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc/self/smaps")
def test_release_pages_drops_the_mapped_segment_files_and_keeps_every_point(tmp_path: Path) -> None:
    """After a load the indexed segments' files are mapped and resident in this process; releasing
    them leaves (almost) nothing resident, and the same searches give the same hits from the files."""
    dim, n = 64, 6000
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    with EdgeVectorStore(tmp_path / "q", indexing_threshold_kb=64, full_scan_threshold_kb=16) as s:
        s.ensure_collection(C, dim)
        for start in range(0, n, 1000):
            s.upsert(C, "a", [VectorPoint(f"k{i}", vectors[i], {}) for i in range(start, start + 1000)])
        s.optimize(C)
        queries = rng.standard_normal((10, dim)).astype(np.float32)
        before = [[(h.key, round(h.score, 5)) for h in s.search(C, "a", q, 10)] for q in queries]
        resident = resident_kb(tmp_path / "q")
        assert resident > 0  # the segment files are mapped and were touched

        released = s.release_pages()

        assert released > 0
        assert resident_kb(tmp_path / "q") < resident / 4
        after = [[(h.key, round(h.score, 5)) for h in s.search(C, "a", q, 10)] for q in queries]
        assert after == before
        assert s.count(C, "a") == n
    # the store still opens and holds every point: nothing written was lost with the pages
    with EdgeVectorStore(tmp_path / "q") as s:
        assert s.count(C, "a") == n
        hits = s.search(C, "a", vectors[42], 1)
        assert hits[0].key == "k42"


def _has_malloc_trim() -> bool:
    try:
        return hasattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), "malloc_trim")
    except OSError:
        return False


needs_glibc = pytest.mark.skipif(
    not (Path("/proc/self/status").exists() and _has_malloc_trim()), reason="needs Linux /proc and glibc"
)

#: Prefix of the child processes below: their anonymous resident memory in MB.
_ANON_MB = textwrap.dedent(
    """
    def anon_mb():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) // 1024 for l in f if l.startswith("RssAnon"))
    """
)


def _python(code: str, *args: str) -> str:
    """What a fresh Python prints running ``code`` (after :data:`_ANON_MB`) with ``args``."""
    run = [sys.executable, "-c", _ANON_MB + textwrap.dedent(code), *args]
    return subprocess.run(run, capture_output=True, text=True, check=True).stdout


@needs_glibc
def test_trim_heap_returns_freed_heap_memory_to_the_system() -> None:
    """Blocks freed in the middle of the C heap stay in the process (a live block above them keeps
    the heap from shrinking) until the heap is trimmed."""
    out = _python(
        """
        from engramdb.platform.resident_memory import trim_heap
        blocks = [bytearray(2048) for _ in range(100_000)]  # ~200 MB of malloc'd (not pymalloc) blocks
        keep = bytearray(2048)  # allocated last, above them
        del blocks
        before = anon_mb()
        trimmed = trim_heap()
        print(before, anon_mb(), trimmed)
        """
    )
    before, after, trimmed = out.split()
    assert trimmed == "True"
    assert int(before) - int(after) >= 100, out


_LARGE_BLOCKS = textwrap.dedent(
    """
    import sys
    from engramdb.platform.resident_memory import return_large_blocks
    if sys.argv[1] == "fixed":
        assert return_large_blocks()
    start = anon_mb()
    first = bytearray(8 << 20)  # one large buffer freed: glibc's default raises its bar to its size
    del first
    blocks, kept = [], []
    for _ in range(50):  # ~200 MB in 4 MB buffers, each followed by a smaller one that stays
        blocks.append(bytearray(4 << 20))
        kept.append(bytearray(64 << 10))
    del blocks
    print(anon_mb() - start)
    """
)


@needs_glibc
def test_large_buffers_go_back_to_the_system_when_freed() -> None:
    """Why an ingest calls return_large_blocks: by default, once one large buffer was freed, the
    next ones of that size stay in the heap after they are freed; with the bar fixed they do not."""

    assert int(_python(_LARGE_BLOCKS, "default")) >= 150
    assert int(_python(_LARGE_BLOCKS, "fixed")) <= 30

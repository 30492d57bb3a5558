"""Vector store: one small interface over embedded Qdrant Edge or a Qdrant server.

Everything above this module (ingestion, retrieval) talks to :class:`VectorStore`
only, so the engine can change without touching callers. Two backends:

* :class:`EdgeVectorStore` - the real Qdrant engine in-process (``qdrant-edge``):
  one shard per collection under ``<home>/qdrant/<collection>``, HNSW, payload
  indexes, a write-ahead log. This is the default; ``qdrant-client``'s "local
  mode" is a brute-force toy and is deliberately not used.
* :class:`QdrantServerStore` - a Qdrant server through ``qdrant-client``, used when
  ``Settings.qdrant_url`` is set. Same semantics.

Design points shared by both:

* **Namespaces are tenants.** Every point carries ``payload["namespace"]`` and
  every read, count and delete is filtered by it; the point id itself is derived
  from ``(namespace, key)``, so the same key in two namespaces is two points and
  one namespace can never overwrite another's. The namespace field gets a
  tenant keyword index and the HNSW graph is built per tenant (``m=0``,
  ``payload_m=16``), which is what makes filtered search both fast and accurate.
* **Keys are ours.** Callers use stable string keys (``"qa:ns:..."``); Qdrant
  wants integers or UUIDs, so the id is ``uuid5(namespace:key)`` and the key is
  kept in ``payload["key"]``.
* **Cosine distance.** Stored vectors are unit-normalised by the engine, so a
  dot product of a stored vector with a unit query is its cosine score.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import qdrant_edge as qe

from engramdb.platform.config import Settings, validate_namespace
from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.resident_memory import release_pages
from engramdb.platform.store_lock import LockBusyError, OwnerLock, acquire_owner_lock, ensure_private_dir

if TYPE_CHECKING:  # pragma: no cover
    from qdrant_client import QdrantClient
    from qdrant_client import models as qm

__all__ = [
    "DEFAULT_HNSW_EF",
    "FULL_SCAN_THRESHOLD_KB",
    "INDEXED_FIELDS",
    "INDEXING_THRESHOLD_KB",
    "KEY_FIELD",
    "TENANT_FIELD",
    "EdgeVectorStore",
    "QdrantServerStore",
    "VectorHit",
    "VectorInputError",
    "VectorPoint",
    "VectorStore",
    "VectorStoreError",
    "edge_filter",
    "open_vector_store",
    "point_id",
    "server_filter",
    "server_points",
]

#: Payload field holding the namespace; indexed as the tenant key.
TENANT_FIELD = "namespace"
#: Payload field holding the caller's key (the point id is a hash of it).
KEY_FIELD = "key"
#: Keyword payload fields that get an index, so ``where`` filters on them are
#: index lookups rather than payload scans. Add a field here when a caller
#: starts filtering on it; ``ensure_collection`` creates missing indexes on
#: existing collections too. The key is not among them: a point's id is a hash
#: of its key, so lookups and deletes by key go by id, and an index of one
#: distinct string per point cost ~30 MB per 250k points for no query
#: (``bench_vector_search.py``). A ``where`` on ``key`` still works, as a scan.
INDEXED_FIELDS: tuple[str, ...] = ("doc_id", "chunk_id", "entity_id", "kind")

#: Fixed namespace for uuid5 point ids. Never change it: ids on disk depend on it.
_ID_NAMESPACE = uuid.UUID("6f1d3c0e-5b7a-4d2e-9a51-3c8e2f0b7d64")
_COLLECTION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_FIELD_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_MAX_DIM = 65_536
_UPSERT_BATCH = 512

# HNSW: the graph is built per tenant (payload_m) and not globally (m=0), the
# layout Qdrant recommends when every search is filtered by tenant. Measured on
# 200k x 384-d points: a global m=16 graph searched with a 25%-selective
# namespace filter loses most of its recall; per-tenant graphs keep it.
_HNSW_M = 0
_HNSW_PAYLOAD_M = 16
_HNSW_EF_CONSTRUCT = 100
#: int8 copies of the vectors, kept in RAM beside the float32 ones: the HNSW graph is built and
#: searched with them, and every search rescores ``RESCORE_OVERSAMPLING`` times ``limit``
#: candidates with the float32 vectors, so the scores returned are exact. Measured with
#: benchmarks/bench_vector_search.py (clustered 384-d data): the build is ~3x faster and a
#: search faster, at the same recall@20 as float32 alone; the price is a quarter more RAM per
#: point (384 bytes beside 1,536).
RESCORE_OVERSAMPLING = 3.0
#: Default ``ef`` at search time (raised to ``limit`` when that is larger).
#: On clustered 384-d data (like text embeddings) recall@20 is ~0.99 from
#: ef=64 up; on structureless uniform-random vectors, the worst case, it needs
#: ef~2048 for 0.95 (see benchmarks/bench_vector_search.py). 256 buys margin
#: for ~0.5 ms per query; raise it per store for harder data.
DEFAULT_HNSW_EF = 256
#: Below this many KB of vectors matching a filter, Qdrant scans them exactly
#: instead of walking the graph (10 MB = ~6.5k points of 384 floats); it is
#: also the smallest tenant that gets its own HNSW graph.
FULL_SCAN_THRESHOLD_KB = 10_000
#: Size (KB of vectors) at which the appendable segment is turned into an HNSW
#: segment by optimize(); smaller segments are searched by exact scan.
INDEXING_THRESHOLD_KB = 20_000
#: Largest segment (KB of vectors) Qdrant's optimizers build or merge into. Without a bound every
#: merge rebuilds one ever larger HNSW graph, and the last build maps the old segments and the new
#: one at once; with it, each point is indexed about once and a build never holds more than this.
MAX_SEGMENT_KB = 30_000

Where = Mapping[str, str | Sequence[str]]


class VectorStoreError(EngramError):
    """The vector store could not be opened or failed an operation."""


class VectorInputError(InputError, ValueError):
    """Bad arguments to the vector store (dimension, names, payload, filters).

    Also a ``ValueError``, so generic validation handlers catch it too.
    """


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class VectorPoint:
    """One vector to store.

    ``key`` is the caller's stable id (e.g. a QA id); ``payload`` holds flat
    JSON-able values (str, int, float, bool, None, or lists of those). The store
    adds ``payload["namespace"]`` and ``payload["key"]`` itself.
    """

    key: str
    vector: Sequence[float] | np.ndarray
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorHit:
    """A search result: the caller's key, the cosine score, the stored payload."""

    key: str
    score: float
    payload: dict[str, Any]


@runtime_checkable
class VectorStore(Protocol):
    """What ingestion and retrieval need from a vector database, and nothing more.

    Every method takes the namespace explicitly and never reads or writes
    outside it.
    """

    def ensure_collection(self, collection: str, dim: int) -> None:
        """Create the collection (cosine, ``dim``) and its payload indexes if missing; idempotent."""
        ...

    def upsert(self, collection: str, namespace: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points by key; durable when this returns."""
        ...

    def search(
        self,
        collection: str,
        namespace: str,
        vector: Sequence[float] | np.ndarray,
        limit: int,
        where: Where | None = None,
    ) -> list[VectorHit]:
        """Nearest points in ``namespace``, best first; ``where`` adds exact / any-of matches."""
        ...

    def delete(
        self,
        collection: str,
        namespace: str,
        keys: Sequence[str] | None = None,
        where: Where | None = None,
    ) -> None:
        """Delete points with these keys and matching ``where``; neither = the whole namespace."""
        ...

    def count(self, collection: str, namespace: str, where: Where | None = None) -> int:
        """Exact number of points in ``namespace`` matching ``where``."""
        ...

    def get_vectors(self, collection: str, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored (unit-normalised) vectors by key; missing keys are left out."""
        ...

    def release_pages(self) -> int:
        """Let go of this process's resident pages of the store's mapped files (KB released).

        Called at an ingest's part boundaries: what an upsert touched need not count as the
        process's memory until the next part (see ``engramdb.platform.resident_memory``). A store
        that maps no files here (a Qdrant server) releases nothing."""
        ...

    def close(self) -> None:
        """Flush and release everything; the store is unusable afterwards."""
        ...


# --------------------------------------------------------------------- validation


def point_id(namespace: str, key: str) -> str:
    """Deterministic Qdrant point id for ``key`` in ``namespace``.

    The namespace is part of the hash so that equal keys in different
    namespaces never collide (':' cannot occur in a namespace, so the joined
    string is unambiguous).
    """
    return str(uuid.uuid5(_ID_NAMESPACE, f"{namespace}:{key}"))


def _no_collection(collection: str) -> VectorInputError:
    return VectorInputError(
        f"vector collection {collection!r} does not exist: call ensure_collection() first"
    )


def _check_collection(collection: str) -> str:
    if not isinstance(collection, str) or not _COLLECTION_PATTERN.match(collection):
        raise VectorInputError(
            f"invalid collection name {collection!r}: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return collection


def _check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not namespace:
        raise VectorInputError("namespace must be a non-empty string")
    try:
        return validate_namespace(namespace)
    except ValueError as exc:
        raise VectorInputError(str(exc)) from None


def _check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or not 1 <= dim <= _MAX_DIM:
        raise VectorInputError(f"vector dimension must be an integer in 1..{_MAX_DIM}, got {dim!r}")
    return int(dim)


def _check_key(key: str) -> str:
    if not isinstance(key, str) or not key:
        raise VectorInputError(f"point keys must be non-empty strings, got {key!r}")
    return key


def _as_vector(vector: Sequence[float] | np.ndarray, dim: int, what: str) -> np.ndarray:
    """``vector`` as a float32 array of length ``dim``, or a clear error."""
    try:
        arr = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):
        raise VectorInputError(f"{what} is not a sequence of numbers") from None
    if arr.ndim != 1:
        raise VectorInputError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.shape[0] != dim:
        raise VectorInputError(
            f"{what} has dimension {arr.shape[0]}, but the collection expects dimension {dim}"
        )
    if not np.all(np.isfinite(arr)):
        raise VectorInputError(f"{what} contains NaN or infinite values")
    if not np.any(arr):
        raise VectorInputError(f"{what} is all zeros, which has no cosine direction")
    return arr


_SCALARS = (str, int, float, bool, type(None))


def _check_payload(key: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(payload, Mapping):
        raise VectorInputError(f"payload of {key!r} must be a dict, got {type(payload).__name__}")
    out: dict[str, Any] = {}
    for name, value in payload.items():
        if not isinstance(name, str) or not name:
            raise VectorInputError(f"payload of {key!r} has a non-string or empty field name {name!r}")
        if isinstance(value, list | tuple):
            if not all(isinstance(v, _SCALARS) and v is not None for v in value):
                raise VectorInputError(
                    f"payload field {name!r} of {key!r} must be a flat list of str/int/float/bool"
                )
            value = list(value)
        elif not isinstance(value, _SCALARS):
            raise VectorInputError(
                f"payload field {name!r} of {key!r} has unsupported type {type(value).__name__}: "
                "use str, int, float, bool, None or a flat list"
            )
        out[name] = value
    return out


def _normalize_where(where: Where | None) -> list[tuple[str, str | list[str]]]:
    """``where`` as ``[(field, value-or-values)]``, validated.

    A string value means exact match; a list means match-any. The namespace
    field is refused: it is always set from the ``namespace`` argument.
    """
    if not where:
        return []
    if not isinstance(where, Mapping):
        raise VectorInputError(f"where must be a mapping of field -> value(s), got {type(where).__name__}")
    out: list[tuple[str, str | list[str]]] = []
    for name, value in where.items():
        if not isinstance(name, str) or not _FIELD_PATTERN.match(name):
            raise VectorInputError(f"invalid payload field name in where: {name!r}")
        if name == TENANT_FIELD:
            raise VectorInputError("where cannot filter on 'namespace': pass the namespace argument instead")
        if isinstance(value, str):
            out.append((name, value))
        elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
            values = list(value)
            if not all(isinstance(v, str) for v in values):
                raise VectorInputError(f"where[{name!r}] must be a string or a list of strings")
            out.append((name, values))
        else:
            raise VectorInputError(f"where[{name!r}] must be a string or a list of strings, got {value!r}")
    return out


def _matches_nothing(conditions: list[tuple[str, str | list[str]]], keys: Sequence[str] | None) -> bool:
    """An empty any-of list (or an empty key list) selects no point at all."""
    return (keys is not None and len(keys) == 0) or any(isinstance(v, list) and not v for _, v in conditions)


def _check_keys(keys: Sequence[str] | None) -> list[str] | None:
    if keys is None:
        return None
    if isinstance(keys, str):
        raise VectorInputError("keys must be a sequence of strings, not a single string")
    return [_check_key(k) for k in keys]


@dataclass
class _Prepared:
    """Validated points ready for either backend."""

    ids: list[str]
    vectors: np.ndarray  # (n, dim) float32
    payloads: list[dict[str, Any]]


def _prepare_points(namespace: str, points: Sequence[VectorPoint], dim: int) -> _Prepared:
    """Validate every point before writing any, so a bad point fails the whole call.

    Duplicate keys within one call keep the last occurrence.
    """
    by_key: dict[str, VectorPoint] = {}
    for p in points:
        if not isinstance(p, VectorPoint):
            raise VectorInputError(f"upsert expects VectorPoint objects, got {type(p).__name__}")
        by_key[_check_key(p.key)] = p
    vectors = np.empty((len(by_key), dim), dtype=np.float32)
    ids: list[str] = []
    payloads: list[dict[str, Any]] = []
    for i, (key, p) in enumerate(by_key.items()):
        vectors[i] = _as_vector(p.vector, dim, f"vector of {key!r}")
        payload = _check_payload(key, p.payload)
        payload[TENANT_FIELD] = namespace
        payload[KEY_FIELD] = key
        ids.append(point_id(namespace, key))
        payloads.append(payload)
    return _Prepared(ids, vectors, payloads)


def _batches(n: int, size: int = _UPSERT_BATCH) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


# ------------------------------------------------------------------- Qdrant Edge


def edge_filter(namespace: str, where: Where | None = None, keys: Sequence[str] | None = None) -> qe.Filter:
    """A qdrant-edge filter: namespace AND every ``where`` condition AND (id in keys)."""
    must: list[Any] = [qe.FieldCondition(TENANT_FIELD, match=qe.MatchValue(namespace))]
    for name, value in _normalize_where(where):
        match = qe.MatchAny(value) if isinstance(value, list) else qe.MatchValue(value)
        must.append(qe.FieldCondition(name, match=match))
    if keys is not None:
        must.append(qe.HasIdCondition({point_id(namespace, k) for k in keys}))
    return qe.Filter(must=must)


@dataclass
class _Shard:
    shard: qe.EdgeShard
    dim: int


class EdgeVectorStore:
    """Embedded Qdrant (qdrant-edge): one persistent shard per collection.

    Durability: updates go through Qdrant's write-ahead log and ``upsert`` /
    ``delete`` flush before returning, so anything acknowledged survives a
    killed process; the next ``EdgeShard.load`` replays the log.

    Indexing: ``upsert`` runs Qdrant's optimizers after each call; they are a
    no-op until the appendable segment passes the indexing threshold (~13k
    points at 384-d), then they turn it into an HNSW segment, and merge small
    segments up to ``max_segment_kb``. That bound is what makes indexing as
    you go cheap: each point is indexed about once, where unbounded merges
    rebuilt one ever larger graph again and again; and no build maps more than
    one bounded segment, where one build at the end of a load (the ingest's
    way before) held the old and new copies of every vector at once (250k
    points: 9,595 points/s and 1.0 GB peak RSS against 4,488 points/s and
    2.1 GB, search p50 and recall@20 unchanged; ``bench_vector_search.py``).
    Searches over the still-unindexed tail are exact scans, which are cheap
    at that size. Call :meth:`optimize` to force the work, e.g. after a bulk
    load with ``auto_optimize=False``.

    Threads: every shard call holds one lock, so the store can be shared by
    ingestion workers. Only one process may open a given path at a time: the
    constructor takes an OS lock on ``<path>/.owner.lock`` before qdrant-edge
    touches any file (a second process opening a shard, even to read, disturbs
    the holder's files), holds it until :meth:`close` and the OS drops it if
    the process dies. A second opener gets a :class:`VectorStoreError` naming
    the holder. Inside one process, share one store
    (``engramdb.platform.shared_stores``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        auto_optimize: bool = True,
        indexing_threshold_kb: int = INDEXING_THRESHOLD_KB,
        full_scan_threshold_kb: int = FULL_SCAN_THRESHOLD_KB,
        max_segment_kb: int | None = MAX_SEGMENT_KB,
        quantized: bool = True,
    ) -> None:
        self.path = Path(path)
        self.hnsw_ef = int(hnsw_ef)
        self.quantized = quantized
        self.auto_optimize = auto_optimize
        self.indexing_threshold_kb = int(indexing_threshold_kb)
        self.full_scan_threshold_kb = int(full_scan_threshold_kb)
        self.max_segment_kb = None if max_segment_kb is None else int(max_segment_kb)
        self._lock = threading.RLock()
        self._shards: dict[str, _Shard] = {}
        self._closed = False
        self._owner: OwnerLock = _own_store_folder(self.path)

    # -- opening ---------------------------------------------------------
    def _config(self, dim: int) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine),
            hnsw_config=qe.HnswIndexConfig(
                m=_HNSW_M,
                ef_construct=_HNSW_EF_CONSTRUCT,
                full_scan_threshold=self.full_scan_threshold_kb,
                payload_m=_HNSW_PAYLOAD_M,
            ),
            optimizers=qe.EdgeOptimizersConfig(
                indexing_threshold=self.indexing_threshold_kb, max_segment_size=self.max_segment_kb
            ),
            quantization_config=(
                qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, always_ram=True)
                if self.quantized
                else None
            ),
        )

    def _search_params(self, limit: int) -> qe.SearchParams:
        ef = max(self.hnsw_ef, limit)
        if not self.quantized:
            return qe.SearchParams(hnsw_ef=ef)
        rescore = qe.QuantizationSearchParams(rescore=True, oversampling=RESCORE_OVERSAMPLING)
        return qe.SearchParams(hnsw_ef=ef, quantization=rescore)

    def _stored_dim(self, shard_path: Path) -> int | None:
        config_file = shard_path / "edge_config.json"
        if not config_file.is_file():
            return None
        try:
            return int(json.loads(config_file.read_text())["vectors"][""]["size"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise VectorStoreError(f"cannot read vector collection config {config_file}: {exc}") from exc

    def _shard(self, collection: str, dim: int | None = None, create: bool = False) -> _Shard | None:
        """The open shard of ``collection``: cached, loaded from disk, created, or None."""
        if self._closed:
            raise VectorStoreError("the vector store is closed")
        _check_collection(collection)
        cached = self._shards.get(collection)
        if cached is None:
            shard_path = self.path / collection
            stored = self._stored_dim(shard_path)
            if stored is None and not create:
                return None
            use_dim = stored if stored is not None else dim
            assert use_dim is not None
            try:
                if stored is not None:
                    shard = qe.EdgeShard.load(str(shard_path), self._config(use_dim))
                else:
                    shard_path.mkdir(parents=True, exist_ok=True)
                    shard = qe.EdgeShard.create(str(shard_path), self._config(use_dim))
            except Exception as exc:  # qdrant-edge raises bare Exception
                if "WouldBlock" in str(exc):
                    raise VectorStoreError(
                        f"vector collection {shard_path} is open in another process; "
                        "only one process may use the embedded store at a time"
                    ) from exc
                raise VectorStoreError(f"cannot open vector collection {shard_path}: {exc}") from exc
            cached = _Shard(shard, use_dim)
            self._shards[collection] = cached
            self._ensure_indexes(cached)
        if dim is not None and cached.dim != dim:
            raise VectorInputError(
                f"collection {collection!r} stores vectors of dimension {cached.dim}, not {dim}: "
                "use another collection (or delete it) when changing the embedding model"
            )
        return cached

    def _ensure_indexes(self, s: _Shard) -> None:
        existing = s.shard.info().payload_schema
        if TENANT_FIELD not in existing:
            s.shard.update(
                qe.UpdateOperation.create_field_index(TENANT_FIELD, qe.KeywordIndexParams(is_tenant=True))
            )
        for name in INDEXED_FIELDS:
            if name not in existing:
                # enable_hnsw=False: no extra graph links per value; these are lookups only.
                s.shard.update(
                    qe.UpdateOperation.create_field_index(name, qe.KeywordIndexParams(enable_hnsw=False))
                )

    def _require(self, collection: str) -> _Shard:
        s = self._shard(collection)
        if s is None:
            raise _no_collection(collection)
        return s

    # -- interface -------------------------------------------------------
    def ensure_collection(self, collection: str, dim: int) -> None:
        dim = _check_dim(dim)
        with self._lock:
            self._shard(collection, dim, create=True)

    def upsert(self, collection: str, namespace: str, points: Sequence[VectorPoint]) -> None:
        namespace = _check_namespace(namespace)
        with self._lock:
            s = self._require(collection)
            prepared = _prepare_points(namespace, points, s.dim)
            if not prepared.ids:
                return
            for part in _batches(len(prepared.ids)):
                batch = [
                    qe.Point(pid, vec.tolist(), payload)
                    for pid, vec, payload in zip(
                        prepared.ids[part], prepared.vectors[part], prepared.payloads[part], strict=True
                    )
                ]
                s.shard.update(qe.UpdateOperation.upsert_points(batch))
            s.shard.flush()
            if self.auto_optimize:
                s.shard.optimize()

    def search(
        self,
        collection: str,
        namespace: str,
        vector: Sequence[float] | np.ndarray,
        limit: int,
        where: Where | None = None,
    ) -> list[VectorHit]:
        namespace = _check_namespace(namespace)
        limit = _check_limit(limit)
        conditions = _normalize_where(where)
        with self._lock:
            s = self._shard(collection)
            if s is None:
                return []
            query = _as_vector(vector, s.dim, "query vector")
            if limit == 0 or _matches_nothing(conditions, None):
                return []
            request = qe.QueryRequest(
                limit=limit,
                query=qe.Query.Nearest(query.tolist()),
                filter=edge_filter(namespace, where),
                with_payload=True,
                params=self._search_params(limit),
            )
            scored = s.shard.query(request)
        return [_hit(p.payload, p.score) for p in scored]

    def delete(
        self,
        collection: str,
        namespace: str,
        keys: Sequence[str] | None = None,
        where: Where | None = None,
    ) -> None:
        namespace = _check_namespace(namespace)
        key_list = _check_keys(keys)
        conditions = _normalize_where(where)
        if _matches_nothing(conditions, key_list):
            return
        with self._lock:
            s = self._shard(collection)
            if s is None:
                return
            s.shard.update(
                qe.UpdateOperation.delete_points_by_filter(edge_filter(namespace, where, key_list))
            )
            s.shard.flush()

    def count(self, collection: str, namespace: str, where: Where | None = None) -> int:
        namespace = _check_namespace(namespace)
        conditions = _normalize_where(where)
        if _matches_nothing(conditions, None):
            return 0
        with self._lock:
            s = self._shard(collection)
            if s is None:
                return 0
            return int(s.shard.count(qe.CountRequest(exact=True, filter=edge_filter(namespace, where))))

    def get_vectors(self, collection: str, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        namespace = _check_namespace(namespace)
        key_list = _check_keys(keys) or []
        if not key_list:
            return {}
        with self._lock:
            s = self._shard(collection)
            if s is None:
                return {}
            records = s.shard.retrieve(
                [point_id(namespace, k) for k in dict.fromkeys(key_list)], with_payload=True, with_vector=True
            )
        return _vectors_by_key(namespace, ((r.payload, r.vector) for r in records))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            shards, self._shards = self._shards, {}
            errors = []
            for name, s in shards.items():
                try:
                    s.shard.flush()
                    s.shard.close()
                except Exception as exc:  # keep closing the others
                    errors.append(f"{name}: {exc}")
            self._owner.release()  # only after every shard is flushed and closed
            if errors:
                raise VectorStoreError("error closing vector collections: " + "; ".join(errors))

    def release_pages(self) -> int:
        # under the store lock: no shard call may map or unmap a segment file meanwhile
        with self._lock:
            return 0 if self._closed else release_pages(self.path)

    # -- extras (embedded only) -------------------------------------------
    def optimize(self, collection: str) -> bool:
        """Build pending HNSW / merge segments now; True if anything was done.

        Blocks (and holds the store lock) until Qdrant's optimizers are idle.
        """
        with self._lock:
            s = self._require(collection)
            changed = bool(s.shard.optimize())
            s.shard.flush()
            return changed

    def stats(self, collection: str) -> dict[str, int]:
        """Points, HNSW-indexed vectors and segments of a collection (all namespaces)."""
        with self._lock:
            info = self._require(collection).shard.info()
            return {
                "points": int(info.points_count),
                "indexed_vectors": int(info.indexed_vectors_count),
                "segments": int(info.segments_count),
            }

    def __enter__(self) -> EdgeVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _own_store_folder(path: Path) -> OwnerLock:
    """Take the single-owner lock on an embedded store folder, or explain who has it."""
    try:
        return acquire_owner_lock(path)
    except LockBusyError as exc:
        if exc.held_by_this_process:
            raise VectorStoreError(
                f"the embedded vector store at {path} is already open in this process (pid {exc.holder.pid}); "
                "open it once and share it (engramdb.platform.shared_stores.acquire_vector_store)"
            ) from None
        raise VectorStoreError(
            f"the embedded vector store at {path} is open in another process ({exc.holder.describe()}); "
            "only one process may use it at a time. Wait for that process to finish or stop it, "
            "or set ENGRAMDB_QDRANT_URL to a Qdrant server for concurrent access. To share this memory "
            "instead, run `engramdb serve` on its data home: while it runs, engramdb commands, `engramdb mcp` "
            "and `engramdb.connect()` go through it."
        ) from None
    except OSError as exc:
        raise VectorStoreError(f"cannot lock the embedded vector store at {path}: {exc}") from exc


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 0:
        raise VectorInputError(f"limit must be a non-negative integer, got {limit!r}")
    return int(limit)


def _hit(payload: Mapping[str, Any] | None, score: float) -> VectorHit:
    payload = dict(payload or {})
    return VectorHit(key=str(payload.get(KEY_FIELD, "")), score=float(score), payload=payload)


def _vectors_by_key(namespace: str, records: Iterator[tuple[Any, Any]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for payload, vector in records:
        if not payload or payload.get(TENANT_FIELD) != namespace or vector is None:
            continue  # belt and braces: ids are namespaced already
        if isinstance(vector, Mapping):  # named-vector form: take the default vector
            vector = vector.get("", next(iter(vector.values()), None))
        if vector is None:
            continue
        out[str(payload[KEY_FIELD])] = np.asarray(vector, dtype=np.float32)
    return out


# ------------------------------------------------------------------ Qdrant server


def server_filter(namespace: str, where: Where | None = None, keys: Sequence[str] | None = None) -> qm.Filter:
    """The qdrant-client filter with the same meaning as :func:`edge_filter`."""
    from qdrant_client import models as qm

    must: list[Any] = [qm.FieldCondition(key=TENANT_FIELD, match=qm.MatchValue(value=namespace))]
    for name, value in _normalize_where(where):
        match: Any = qm.MatchAny(any=value) if isinstance(value, list) else qm.MatchValue(value=value)
        must.append(qm.FieldCondition(key=name, match=match))
    if keys is not None:
        must.append(qm.HasIdCondition(has_id=[point_id(namespace, k) for k in keys]))
    return qm.Filter(must=must)


def server_points(namespace: str, points: Sequence[VectorPoint], dim: int) -> list[qm.PointStruct]:
    """Validated ``PointStruct``s for qdrant-client (same ids and payload as the edge store)."""
    from qdrant_client import models as qm

    prepared = _prepare_points(namespace, points, dim)
    return [
        qm.PointStruct(id=pid, vector=vec.tolist(), payload=payload)
        for pid, vec, payload in zip(prepared.ids, prepared.vectors, prepared.payloads, strict=True)
    ]


class QdrantServerStore:
    """A Qdrant server through qdrant-client, with the embedded store's semantics.

    The server runs its own optimizers and persistence, so there is no
    ``optimize``; writes use ``wait=True`` so they are applied when we return.

    Pass ``url`` (and ``api_key``) to reach a server, or an existing
    ``client``: any ``QdrantClient``, including qdrant-client's local mode,
    which is how the tests run this class against a real Qdrant engine. The
    store owns the client either way and closes it in :meth:`close`.
    Failures of the server (unreachable, rejected request) are raised as
    :class:`VectorStoreError` naming the server and the operation.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        client: QdrantClient | None = None,
        hnsw_ef: int = DEFAULT_HNSW_EF,
    ) -> None:
        if (url is None) == (client is None):
            raise VectorInputError(
                "QdrantServerStore needs either a server url or a QdrantClient (exactly one)"
            )
        if client is None:
            from qdrant_client import QdrantClient

            client = QdrantClient(url=url, api_key=api_key)
        self.url = url
        self.hnsw_ef = int(hnsw_ef)
        self._client: QdrantClient = client
        self._dims: dict[str, int] = {}
        #: Collections whose payload indexes were checked by this store (one round trip per collection).
        self._indexed: set[str] = set()
        self._lock = threading.Lock()
        self._closed = False

    def _call(self, action: str, collection: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """``client.<method>(*args, **kwargs)``, with server failures as clear VectorStoreErrors."""
        from qdrant_client.http.exceptions import ApiException

        if self._closed:
            raise VectorStoreError("the vector store is closed")
        try:
            return getattr(self._client, method)(*args, **kwargs)
        except ApiException as exc:
            where = f"Qdrant at {self.url}" if self.url else "Qdrant"
            raise VectorStoreError(f"{where}: {action} in collection {collection!r} failed: {exc}") from exc

    def _dim(self, collection: str) -> int | None:
        """Vector size of an existing collection (cached), or None if it does not exist."""
        _check_collection(collection)
        with self._lock:
            if collection in self._dims:
                return self._dims[collection]
        if not self._call("checking", collection, "collection_exists", collection):
            return None
        info = self._call("reading the configuration", collection, "get_collection", collection)
        size = getattr(info.config.params.vectors, "size", None)
        if size is None:
            raise VectorStoreError(
                f"Qdrant collection {collection!r} does not have a single unnamed dense vector"
            )
        with self._lock:
            self._dims[collection] = int(size)
        return int(size)

    def _require(self, collection: str) -> int:
        dim = self._dim(collection)
        if dim is None:
            raise _no_collection(collection)
        return dim

    def ensure_collection(self, collection: str, dim: int) -> None:
        from qdrant_client import models as qm

        dim = _check_dim(dim)
        existing = self._dim(collection)
        if existing is None:
            self._call(
                "creating",
                collection,
                "create_collection",
                collection,
                vectors_config=qm.VectorParams(size=dim, distance=qm.Distance.COSINE),
                hnsw_config=qm.HnswConfigDiff(
                    m=_HNSW_M,
                    payload_m=_HNSW_PAYLOAD_M,
                    ef_construct=_HNSW_EF_CONSTRUCT,
                    full_scan_threshold=FULL_SCAN_THRESHOLD_KB,
                ),
            )
            with self._lock:
                self._dims[collection] = dim
        elif existing != dim:
            raise VectorInputError(
                f"collection {collection!r} stores vectors of dimension {existing}, not {dim}: "
                "use another collection (or delete it) when changing the embedding model"
            )
        self._ensure_indexes(collection)

    def _ensure_indexes(self, collection: str) -> None:
        """Create the tenant and keyword payload indexes a collection is missing (once per store)."""
        from qdrant_client import models as qm

        if collection in self._indexed:
            return
        info = self._call("reading the configuration", collection, "get_collection", collection)
        schema = info.payload_schema or {}
        if TENANT_FIELD not in schema:
            tenant_index = qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True)
            self._call(
                "indexing", collection, "create_payload_index", collection, TENANT_FIELD,
                field_schema=tenant_index, wait=True,
            )  # fmt: skip
        for name in INDEXED_FIELDS:
            if name not in schema:
                self._call(
                    "indexing", collection, "create_payload_index", collection, name,
                    field_schema=qm.PayloadSchemaType.KEYWORD, wait=True,
                )  # fmt: skip
        with self._lock:
            self._indexed.add(collection)

    def upsert(self, collection: str, namespace: str, points: Sequence[VectorPoint]) -> None:
        namespace = _check_namespace(namespace)
        structs = server_points(namespace, points, self._require(collection))
        for part in _batches(len(structs)):
            self._call("upserting", collection, "upsert", collection, points=structs[part], wait=True)

    def search(
        self,
        collection: str,
        namespace: str,
        vector: Sequence[float] | np.ndarray,
        limit: int,
        where: Where | None = None,
    ) -> list[VectorHit]:
        from qdrant_client import models as qm

        namespace = _check_namespace(namespace)
        limit = _check_limit(limit)
        conditions = _normalize_where(where)
        dim = self._dim(collection)
        if dim is None:
            return []
        query = _as_vector(vector, dim, "query vector")
        if limit == 0 or _matches_nothing(conditions, None):
            return []
        response = self._call(
            "searching",
            collection,
            "query_points",
            collection,
            query=query.tolist(),
            query_filter=server_filter(namespace, where),
            limit=limit,
            with_payload=True,
            search_params=qm.SearchParams(hnsw_ef=max(self.hnsw_ef, limit)),
        )
        return [_hit(p.payload, p.score) for p in response.points]

    def delete(
        self,
        collection: str,
        namespace: str,
        keys: Sequence[str] | None = None,
        where: Where | None = None,
    ) -> None:
        from qdrant_client import models as qm

        namespace = _check_namespace(namespace)
        key_list = _check_keys(keys)
        conditions = _normalize_where(where)
        if _matches_nothing(conditions, key_list) or self._dim(collection) is None:
            return
        selector = qm.FilterSelector(filter=server_filter(namespace, where, key_list))
        self._call("deleting", collection, "delete", collection, points_selector=selector, wait=True)

    def count(self, collection: str, namespace: str, where: Where | None = None) -> int:
        namespace = _check_namespace(namespace)
        conditions = _normalize_where(where)
        if _matches_nothing(conditions, None) or self._dim(collection) is None:
            return 0
        count_filter = server_filter(namespace, where)
        result = self._call(
            "counting", collection, "count", collection, count_filter=count_filter, exact=True
        )
        return int(result.count)

    def get_vectors(self, collection: str, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        namespace = _check_namespace(namespace)
        key_list = _check_keys(keys) or []
        if not key_list or self._dim(collection) is None:
            return {}
        records = self._call(
            "reading vectors",
            collection,
            "retrieve",
            collection,
            ids=[point_id(namespace, k) for k in dict.fromkeys(key_list)],
            with_payload=True,
            with_vectors=True,
        )
        return _vectors_by_key(namespace, ((r.payload, r.vector) for r in records))

    def release_pages(self) -> int:
        return 0  # the server's files are mapped by the server, not by this process

    def close(self) -> None:
        """Close the client (idempotent); later calls raise VectorStoreError."""
        if self._closed:
            return
        self._closed = True
        self._client.close()

    def __enter__(self) -> QdrantServerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------ factory


def open_vector_store(settings: Settings) -> VectorStore:
    """The embedded store under ``settings.qdrant_path``, or the server at ``settings.qdrant_url``."""
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantServerStore(settings.qdrant_url, api_key or None)
    ensure_private_dir(settings.home)
    return EdgeVectorStore(settings.qdrant_path)

"""One embedded vector store per data home per process, shared by every Memory.

The embedded store has a single owner: opening it takes an OS lock on its
folder, per open file, so a second opener fails - another process, and also a
second opener in this process. Two ``Memory`` objects for two namespaces in
one program are ordinary, so they share one open store here,
reference-counted; the last ``close`` really closes it and releases the lock.
Across processes there is no sharing: use a Qdrant server for that.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engramdb.platform.config import Settings
from engramdb.platform.vectors import VectorHit, VectorPoint, VectorStore, open_vector_store

_lock = threading.Lock()
_open: dict[str, tuple[VectorStore, int]] = {}


def _key(settings: Settings) -> str:
    return f"url:{settings.qdrant_url}" if settings.qdrant_url else f"path:{settings.qdrant_path.resolve()}"


class SharedVectorStore:
    """A handle on a shared store; ``close`` releases this handle only."""

    def __init__(self, key: str, store: VectorStore) -> None:
        self._key = key
        self._store: VectorStore | None = store

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            from engramdb.platform.vectors import VectorStoreError

            raise VectorStoreError("this vector store handle is closed")
        return self._store

    def ensure_collection(self, collection: str, dim: int) -> None:
        self.store.ensure_collection(collection, dim)

    def upsert(self, collection: str, namespace: str, points: Sequence[VectorPoint]) -> None:
        self.store.upsert(collection, namespace, points)

    def search(self, collection: str, namespace: str, vector: Sequence[float] | np.ndarray, limit: int,
               where: Mapping[str, Any] | None = None) -> list[VectorHit]:  # fmt: skip
        return self.store.search(collection, namespace, vector, limit, where)

    def delete(self, collection: str, namespace: str, keys: Sequence[str] | None = None,
               where: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.store.delete(collection, namespace, keys, where)

    def count(self, collection: str, namespace: str, where: Mapping[str, Any] | None = None) -> int:
        return self.store.count(collection, namespace, where)

    def get_vectors(self, collection: str, namespace: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return self.store.get_vectors(collection, namespace, keys)

    def release_pages(self) -> int:
        return self.store.release_pages()

    def close(self) -> None:
        if self._store is None:
            return
        self._store = None
        with _lock:
            store, refs = _open[self._key]
            if refs <= 1:
                del _open[self._key]
                store.close()
            else:
                _open[self._key] = (store, refs - 1)


def acquire_vector_store(settings: Settings) -> SharedVectorStore:
    """A handle on the process-wide store for these settings (opened on first use)."""
    key = _key(settings)
    with _lock:
        store, refs = _open.get(key, (None, 0))
        if store is None:
            store = open_vector_store(settings)
        _open[key] = (store, refs + 1)
    return SharedVectorStore(key, store)

"""A persistent cache of LLM extractions, keyed by model, prompt version and chunk.

LLM extraction is the slow, paid part of ingestion; re-running an ingest (after
a crash, or of an unchanged corpus) must not pay twice. Entries remember the
document they were made for so ``delete`` removes them too.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path


def cache_key(model: str, prompt_version: str, title: str | None, text: str) -> str:
    raw = "\x1f".join([model, prompt_version, title or "", text])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ExtractionCache:
    """SQLite table key → GSW JSON; thread-safe; one file under the data home."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, namespace TEXT NOT NULL, "
            "doc_id TEXT NOT NULL, gsw_json TEXT NOT NULL, input_tokens INTEGER, output_tokens INTEGER)"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS extraction_doc ON extraction (namespace, doc_id)")

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT gsw_json FROM extraction WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, namespace: str, doc_id: str, gsw_json: str, tokens: tuple[int, int]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO extraction VALUES (?, ?, ?, ?, ?, ?)",
                (key, namespace, doc_id, gsw_json, tokens[0], tokens[1]),
            )

    def delete_document(self, namespace: str, doc_id: str) -> int:
        with self._lock:
            cur = self._db.execute(
                "DELETE FROM extraction WHERE namespace = ? AND doc_id = ?", (namespace, doc_id)
            )
        return cur.rowcount

    def count(self, namespace: str | None = None) -> int:
        with self._lock:
            if namespace is None:
                return self._db.execute("SELECT count(*) FROM extraction").fetchone()[0]
            return self._db.execute(
                "SELECT count(*) FROM extraction WHERE namespace = ?", (namespace,)
            ).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

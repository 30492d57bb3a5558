"""Extraction one part ahead: the next part's chunks are extracted on a worker thread while the
pipeline reconciles, writes, embeds and indexes the part before it.

Why: offline extraction is one core's worth of spaCy and Python, and the steps after it leave a
core idle much of the time (waits on Neo4j and on vector upserts, the memory stages' Python);
an LLM extractor waits on the network. Running the next part's extraction beside those steps
uses that time. What comes out is what extracting in the caller's thread gives: the extractor
is handed the same jobs in the same groups and is never called twice at once (a part that does
not match what was started waits for the started one to finish before it is extracted here).

Only one part is ever ahead, so memory holds at most one extra part's extractions. Starting a
part whose documents are not yet claimed (the next batch's first part) is speculative: another
writer may take them, and the work is thrown away. :func:`may_speculate` allows it only for an
extractor whose work has no effect beyond its result (no cache entry, no paid call).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from engramdb.ingestion.extraction.extractors import ChunkJob, Extraction, Extractor


def may_speculate(extractor: Extractor) -> bool:
    """Whether work for documents that may never be ours costs only CPU (see the module doc)."""
    return bool(getattr(extractor, "side_effect_free", False))


class ExtractionAhead:
    """Runs :meth:`Extractor.extract_jobs` for the next part on one worker thread.

    Use as a context manager around an ingest: leaving it drops a part started and never taken
    (a part running then is finished first, so no extractor call outlives the ingest)."""

    def __init__(self, extractor: Extractor) -> None:
        self.extractor = extractor
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engramdb-extract-ahead")
        self._jobs: list[ChunkJob] | None = None
        self._future: Future[tuple[list[Extraction], float]] | None = None
        #: Seconds the extractor ran (in either thread) and seconds the caller waited for it.
        self.extract_seconds = 0.0
        self.wait_seconds = 0.0

    def __enter__(self) -> ExtractionAhead:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._drop()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def start(self, jobs: Sequence[ChunkJob]) -> None:
        """Begin extracting ``jobs`` on the worker; a part started before and not taken is dropped."""
        self._drop()
        if not jobs:
            return
        self._jobs = list(jobs)
        self._future = self._pool.submit(self._extract, self._jobs)

    def take(self, jobs: Sequence[ChunkJob]) -> list[Extraction]:
        """The extractions of ``jobs``: the started part's if it is exactly these jobs, else made now."""
        jobs = list(jobs)
        if self._future is not None and self._jobs == jobs:
            future, self._future, self._jobs = self._future, None, None
            t0 = time.perf_counter()
            try:
                extractions, seconds = future.result()
            finally:
                self.wait_seconds += time.perf_counter() - t0
            self.extract_seconds += seconds
            return extractions
        self._drop()
        extractions, seconds = self._extract(jobs)
        self.extract_seconds += seconds
        self.wait_seconds += seconds
        return extractions

    def _extract(self, jobs: list[ChunkJob]) -> tuple[list[Extraction], float]:
        t0 = time.perf_counter()
        extractions = self.extractor.extract_jobs(jobs) if jobs else []
        return extractions, time.perf_counter() - t0

    def _drop(self) -> None:
        """Forget the started part; if it is running, wait for it (one extractor call at a time)."""
        future, self._future, self._jobs = self._future, None, None
        if future is None or future.cancel():
            return
        try:
            future.result()
        except Exception:  # a dropped part's failure is not this ingest's: its jobs are redone or not ours
            pass

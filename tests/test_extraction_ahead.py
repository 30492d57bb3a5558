"""Extraction one part ahead (issue 28): the next part is extracted on a worker thread while a part
is written, with the same results as extracting in the ingest's own thread, one extractor call at a
time, and work on documents not yet claimed only for an extractor whose work has no side effect."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence

import pytest

from engramdb.ingestion.documents import Document, make_document
from engramdb.ingestion.extraction.ahead import ExtractionAhead, may_speculate
from engramdb.ingestion.extraction.extractors import ChunkJob, Extraction, OfflineGSWExtractor
from engramdb.ingestion.extraction.offline import ChunkText
from engramdb.ingestion.pipeline import Ingestor
from engramdb.platform.interfaces.memory import Memory

MAIN = threading.current_thread().name


class Recording:
    """The offline extractor, recording each call's thread and chunks, and how many ran at once."""

    def __init__(self, side_effect_free: bool, pause: float = 0.0) -> None:
        self.inner = OfflineGSWExtractor()
        self.name = self.inner.name
        self.side_effect_free = side_effect_free
        self.pause = pause
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def extract_jobs(self, jobs: Sequence[ChunkJob]) -> list[Extraction]:
        with self._lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.calls.append((threading.current_thread().name, tuple(j.chunk.text[:40] for j in jobs)))
        try:
            time.sleep(self.pause)  # widens the window in which a second call could overlap
            return self.inner.extract_jobs(jobs)
        finally:
            with self._lock:
                self.running -= 1


def _jobs(*texts: str) -> list[ChunkJob]:
    return [ChunkJob(ChunkText(t, "Eastmarch"), "doc") for t in texts]


FIRST = _jobs("Aldric Ashdown was born in Port Selwyn in 1802.", "Fenella Greaves married Gideon Holloway.")
SECOND = _jobs("Honoria Jessop wrote The Winter Ledger while living in Mirecourt.")


def test_a_started_part_is_taken_from_the_worker_with_the_results_of_extracting_here() -> None:
    recorder = Recording(side_effect_free=True)
    with ExtractionAhead(recorder) as ahead:
        ahead.start(FIRST)
        taken = ahead.take(FIRST)
    here = OfflineGSWExtractor().extract_jobs(FIRST)
    assert [x.gsw for x in taken] == [x.gsw for x in here]
    assert any(x.gsw.qa_pairs for x in taken)  # real extractions, not empty ones
    assert [thread for thread, _ in recorder.calls] == ["engramdb-extract-ahead_0"]
    assert ahead.extract_seconds > 0 and ahead.wait_seconds <= ahead.extract_seconds + 0.05


def test_a_part_other_than_the_started_one_waits_for_it_and_is_extracted_here() -> None:
    recorder = Recording(side_effect_free=True, pause=0.3)
    with ExtractionAhead(recorder) as ahead:
        ahead.start(FIRST)  # e.g. the next batch's first part, which another writer then claimed
        time.sleep(0.05)  # the worker is inside the extractor now
        taken = ahead.take(SECOND)
    assert recorder.most_at_once == 1  # the extractor is never called twice at once
    assert [thread for thread, _ in recorder.calls] == ["engramdb-extract-ahead_0", MAIN]
    assert [x.gsw for x in taken] == [x.gsw for x in OfflineGSWExtractor().extract_jobs(SECOND)]


def test_leaving_finishes_a_running_part_and_drops_one_not_taken() -> None:
    recorder = Recording(side_effect_free=True, pause=0.2)
    with ExtractionAhead(recorder) as ahead:
        ahead.start(FIRST)
        time.sleep(0.05)
    assert recorder.running == 0  # no extractor call outlives the ingest
    assert len(recorder.calls) == 1


def test_only_an_extractor_without_side_effects_may_work_on_unclaimed_documents() -> None:
    assert may_speculate(OfflineGSWExtractor())
    assert not may_speculate(Recording(side_effect_free=False))
    assert not may_speculate(object())  # an extractor that does not say: assume it costs


# ------------------------------------------------------------ in the pipeline (real Neo4j)
@pytest.fixture
def memory(isolated_settings) -> Iterator[Memory]:
    memory = Memory(f"ahead{uuid.uuid4().hex[:10]}", isolated_settings)
    yield memory
    memory.close()


def _documents() -> list[Document]:
    texts = [
        "Aldric Ashdown was born in Port Selwyn in 1802. He married Fenella Greaves in Eastmarch.",
        "Gideon Holloway wrote The Winter Ledger while living in Mirecourt. He joined the Mirecourt Gazette.",
        "Honoria Jessop moved from Oakhollow to Ravensmoor in 1851. She founded the Oakhollow Rail Society.",
    ]
    return [make_document(t, title=f"Person {i}", id=f"p{i}") for i, t in enumerate(texts)]


def _ingestor(memory: Memory, extractor: Recording, chunks_per_part: int = 128) -> Ingestor:
    return Ingestor(memory.graph, memory.vectors, memory.embedder, extractor, batch_size=1,
                    chunks_per_part=chunks_per_part)  # fmt: skip


def test_the_next_batch_is_extracted_ahead_once_and_memory_is_the_same(memory, isolated_settings) -> None:
    recorder = Recording(side_effect_free=True)
    report = _ingestor(memory, recorder).ingest(_documents())
    assert report.ingested == 3
    # the first part in the ingest's thread; each later batch's part on the worker, each chunk once
    assert [thread for thread, _ in recorder.calls] == [MAIN] + ["engramdb-extract-ahead_0"] * 2
    assert [texts[0][:12] for _, texts in recorder.calls] == [d.text[:12] for d in _documents()]
    assert report.stage_seconds["extract"] > 0 and "extract_wait" in report.stage_seconds

    # the same documents with every extraction in the ingest's own thread give the same memory
    other = Memory(f"inline{uuid.uuid4().hex[:10]}", isolated_settings)
    try:
        inline = Recording(side_effect_free=False)
        _ingestor(other, inline).ingest(_documents())
        assert {thread for thread, _ in inline.calls} == {MAIN}  # unclaimed documents are not started
        ours, theirs = memory.stats(), other.stats()
        ours.pop("namespace"), theirs.pop("namespace")
        assert ours == theirs and ours["qa_pairs"] > 0
    finally:
        other.close()


def test_a_claimed_documents_next_part_is_extracted_ahead_by_any_extractor(memory) -> None:
    recorder = Recording(side_effect_free=False)  # within a batch nothing is speculative
    paragraphs = [d.text for d in _documents()] * 30  # ~5 KB of paragraphs: several chunks
    long = make_document("\n\n".join(paragraphs), title="Chronicle", id="long")
    n_chunks = len(long.chunks())
    assert n_chunks >= 3
    report = _ingestor(memory, recorder, chunks_per_part=1).ingest([long, *_documents()])
    assert report.ingested == 4
    threads = [thread for thread, _ in recorder.calls]
    # the long document's later parts come from the worker; the next batches' from this thread
    assert threads == [MAIN] + ["engramdb-extract-ahead_0"] * (n_chunks - 1) + [MAIN] * 3
    assert len(recorder.calls) == n_chunks + 3  # each part extracted once

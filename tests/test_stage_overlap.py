"""A part's memory stages run on the stage thread while the next part is reconciled and embedded
(issue 28), yet see the store exactly as one part at a time would: the next part's graph write and
vectors wait for them, and documents are ``done`` only once every stage of their parts is in."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence

import pytest

from engramdb.ingestion.documents import Document, make_document
from engramdb.ingestion.extraction.extractors import OfflineGSWExtractor
from engramdb.ingestion.pipeline import Ingestor
from engramdb.ingestion.stages.base import MemoryStage, StageChunk, StageContext, StageReport
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.storage import CHUNK_COLLECTION

LAST = "p2"


class StageFailed(RuntimeError):
    """The probe stage's own failure."""


class EmbeddingWatch:
    """The memory's embedder, keeping every text it is given so a stage can wait for one."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.texts: list[str] = []
        self._given = threading.Condition()

    def embed_documents(self, texts):
        with self._given:
            self.texts.extend(texts)
            self._given.notify_all()
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)

    def wait_for_text(self, needle: str, timeout: float) -> bool:
        """Whether a text holding ``needle`` was given, before or within ``timeout`` seconds."""
        with self._given:
            return self._given.wait_for(lambda: any(needle in t for t in self.texts), timeout)


class Probe(MemoryStage):
    """A stage that looks at the store when it runs: how many chunks the graph and the passage
    vectors hold, and whether the next document's passage was embedded before it returned (it waits
    up to 10 s; the last document's part has no next part and does not wait)."""

    name = "probe"

    def __init__(
        self,
        context: StageContext,
        memory: Memory,
        watch: EmbeddingWatch,
        fail_on: int = 0,
        wait: bool = True,
    ) -> None:
        super().__init__(context)
        self.memory, self.watch, self.fail_on, self.wait = memory, watch, fail_on, wait
        self.seen: list[dict[str, object]] = []

    def index_chunks(self, chunks: Sequence[StageChunk]) -> StageReport:
        run = len(self.seen) + 1
        graph_chunks = self.memory.driver.execute_query(
            "MATCH (c:Chunk {namespace: $ns}) RETURN count(c) AS n", ns=self.memory.namespace
        ).records[0]["n"]
        vectors = self.memory.vectors.count(CHUNK_COLLECTION, self.memory.namespace)
        # the next document's passage is embedded before this stage returns only if the two overlap
        following = {doc_id: f"Person {int(doc_id[1:]) + 1}" for doc_id in {c.doc_id for c in chunks}}
        overlapped = None
        if self.wait and LAST not in following:
            (needle,) = following.values()
            overlapped = self.watch.wait_for_text(needle, timeout=10)
        self.seen.append({"docs": {c.doc_id for c in chunks}, "graph_chunks": graph_chunks,
                          "chunk_vectors": vectors, "overlapped": overlapped})  # fmt: skip
        if run == self.fail_on:
            raise StageFailed(f"the probe stage failed on part {run}")
        return StageReport(self.name, chunks=len(chunks))

    def delete_document(self, doc_id: str, chunk_ids: Sequence[str]) -> None:
        return None


@pytest.fixture
def memory(isolated_settings) -> Iterator[Memory]:
    memory = Memory(f"overlap{uuid.uuid4().hex[:10]}", isolated_settings)
    yield memory
    memory.close()


def _documents() -> list[Document]:
    texts = [
        "Aldric Ashdown was born in Port Selwyn in 1802. He married Fenella Greaves in Eastmarch.",
        "Gideon Holloway wrote The Winter Ledger while living in Mirecourt. He joined the Mirecourt Gazette.",
        "Honoria Jessop moved from Oakhollow to Ravensmoor in 1851. She founded the Oakhollow Rail Society.",
    ]
    return [make_document(t, title=f"Person {i}", id=f"p{i}") for i, t in enumerate(texts)]


def _ingestor(memory: Memory, fail_on: int = 0, wait: bool = True) -> tuple[Ingestor, Probe]:
    watch = EmbeddingWatch(memory.embedder)
    probe = Probe(memory.stage_context, memory, watch, fail_on, wait)
    ingestor = Ingestor(memory.graph, memory.vectors, watch, OfflineGSWExtractor(), batch_size=1,
                        stages=[probe])  # fmt: skip
    return ingestor, probe


def _status(memory: Memory) -> dict[str, str]:
    return {doc: row["status"] for doc, row in memory.document_status(["p0", "p1", "p2"]).items()}


def test_a_parts_stages_run_while_the_next_part_is_embedded_and_never_see_it(memory) -> None:
    ingestor, probe = _ingestor(memory)
    statuses: list[dict[str, str]] = []
    report = ingestor.ingest(_documents(), on_part=lambda _part: statuses.append(_status(memory)))

    assert report.ingested == 3 and report.failed == 0
    assert [sorted(s["docs"]) for s in probe.seen] == [["p0"], ["p1"], ["p2"]]
    # the first two parts' stages ran while the next part was embedded (the last has none after it)
    assert [s["overlapped"] for s in probe.seen] == [True, True, None]
    # yet each saw only its own part and those before it, in the graph and among the passage vectors
    assert [s["graph_chunks"] for s in probe.seen] == [1, 2, 3]
    assert [s["chunk_vectors"] for s in probe.seen] == [1, 2, 3]
    # a part is reported once its stages are done (the next batch's documents are written by then),
    # its document still pending until its status is written
    assert statuses == [
        {"p0": "pending", "p1": "pending"},
        {"p0": "done", "p1": "pending", "p2": "pending"},
        {"p0": "done", "p1": "done", "p2": "pending"},
    ]
    assert _status(memory) == {"p0": "done", "p1": "done", "p2": "done"}
    assert report.stage_seconds["stage_probe"] > 0


def test_a_stage_that_fails_fails_the_ingest_and_leaves_its_part_to_redo(memory) -> None:
    ingestor, probe = _ingestor(memory, fail_on=2)
    with pytest.raises(StageFailed):
        ingestor.ingest(_documents())
    # the part before was done; the failed part's document is pending, and nothing came after it
    assert _status(memory)["p0"] == "done" and _status(memory)["p1"] == "pending"
    assert memory.stats()["chunks"] == 2
    claims = memory.driver.execute_query(
        "MATCH (d:Document {namespace: $ns}) WHERE d.claimed_by IS NOT NULL RETURN count(d) AS n",
        ns=memory.namespace,
    ).records[0]["n"]
    assert claims == 0  # released: another writer or a later run may take them at once

    # the rerun first deletes what the failed run left of p2, which waits for p1's stages: no probe waits
    again, _probe = _ingestor(memory, wait=False)
    report = again.ingest(_documents())
    assert report.ingested == 2 and report.skipped == 1
    assert _status(memory) == {"p0": "done", "p1": "done", "p2": "done"}
    assert memory.stats()["chunks"] == memory.stats()["chunk_vectors"] == 3

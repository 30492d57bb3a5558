"""Long documents: written in bounded parts, honest per-document status, resumable after a crash.

A long document used to be one write transaction (and one in-memory pile of
GSWs, vectors and rows), which Neo4j refused past its transaction memory limit.
These tests ingest a generated ~20 KB chronicle (about 9 chunks) offline with
a small part size, so it takes several transactions, as a multi-megabyte
document would with the default part size (``benchmarks/bench_long_document.py``
measures the real size).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb.ingestion.documents import Document, make_document
from engramdb.ingestion.pipeline import Ingestor, PartProgress
from engramdb.ingestion.stages import gists as gists_stage
from engramdb.platform.interfaces.memory import Memory
from engramdb.platform.resident_memory import resident_kb

PART = 2  # chunks per write transaction in these tests (the default is 128)
_FIRST = "Aldric Berenice Cassian Delphine Evander Fenella Gideon Honoria Ignatius Juliana".split()
_LAST = "Ashdown Blackwood Dunmore Fairleigh Greaves Holloway Jessop Lockhart Northcott Pemberton".split()
_PLACES = "Port Selwyn|Eastmarch|Harrowgate|Lindenfall|Mirecourt|Oakhollow|Ravensmoor|Saltcombe".split("|")
_ORGS = (
    "the Selwyn Shipping Company|the Harrowgate Observatory|the Mirecourt Gazette|the Oakhollow Rail Society"
)
_WORKS = "The Winter Ledger|A Map of Quiet Rivers|The Lantern Keeper|The Glass Orchard".split("|")


def chronicle(n_chars: int, seed: int = 3) -> str:
    """A deterministic, varied, novel-like text of about ``n_chars`` characters."""
    rng = random.Random(seed)
    orgs = _ORGS.split("|")

    def sentence() -> str:
        who, other = (f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(2))
        place, year = rng.choice(_PLACES), rng.randint(1780, 1920)
        return rng.choice([
            f"{who} was born in {place} in {year}.",
            f"{who} married {other} in {place} in {year}.",
            f"{who} wrote {rng.choice(_WORKS)} while living in {place}.",
            f"In {year}, {who} joined {rng.choice(orgs)}.",
            f"{who} moved from {place} to {rng.choice(_PLACES)} after the winter of {year}.",
            f"{who} and {other} travelled to {place} by coach.",
        ])  # fmt: skip

    paragraphs: list[str] = []
    while sum(len(p) + 2 for p in paragraphs) < n_chars:
        paragraphs.append(" ".join(sentence() for _ in range(rng.randint(3, 8))))
    return "\n\n".join(paragraphs)


@pytest.fixture(scope="module")
def long_document() -> Document:
    return make_document(chronicle(20_000), title="A Chronicle of Eastmarch", id="chronicle")


@pytest.fixture
def open_memory(isolated_settings) -> Iterator:
    """Memories in fresh namespaces of one private home, closed after the test."""
    opened: list[Memory] = []

    def open_one() -> Memory:
        memory = Memory(f"long{uuid.uuid4().hex[:10]}", isolated_settings)
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


def _ingestor(
    memory: Memory,
    chunks_per_part: int,
    *,
    entity_merge_threshold: float | None = None,
    with_stages: bool = False,
) -> Ingestor:
    """The memory's own ingestion set-up, with the part size under test; its memory stages (gists,
    clusters) only ``with_stages``, as they cost these tests' time where they test nothing."""
    base = memory.ingestor
    threshold = base.entity_merge_threshold if entity_merge_threshold is None else entity_merge_threshold
    return Ingestor(
        memory.graph, memory.vectors, memory.embedder, base.extractor, chunks_per_part=chunks_per_part,
        entity_merge_threshold=threshold, stages=base.stages if with_stages else (),
    )  # fmt: skip


def _stats(memory: Memory) -> dict:
    stats = memory.stats()
    stats.pop("namespace")
    return stats


def test_long_document_is_written_in_bounded_parts_with_the_same_result(open_memory, long_document) -> None:
    n_chunks = len(long_document.chunks())
    assert n_chunks > 3 * PART
    parts: list[PartProgress] = []
    statuses: list[str] = []
    parted, whole = open_memory(), open_memory()

    def record(part: PartProgress) -> None:
        parts.append(part)
        statuses.append(parted.document_status(["chronicle"])["chronicle"]["status"])

    # the embedding join path looks among vectors already stored, which a second part can see and a
    # single transaction cannot: compare the two write paths with it off
    report = _ingestor(parted, PART, entity_merge_threshold=1.0).ingest([long_document], on_part=record)
    _ingestor(whole, 10 * n_chunks, entity_merge_threshold=1.0).ingest([long_document])

    assert len(parts) == -(-n_chunks // PART) > 3
    assert all(p.chunks <= PART and p.doc_ids == ("chronicle",) for p in parts)
    assert [p.chunks_done for p in parts] == sorted({p.chunks_done for p in parts})
    assert parts[-1].chunks_done == parts[-1].chunks_total == n_chunks
    assert set(statuses) == {"pending"}  # not done before every part (graph and vectors) is in
    stats = _stats(parted)
    assert stats["documents_done"] == report.ingested == 1
    assert stats["chunks"] == stats["chunk_vectors"] == report.chunks == n_chunks
    assert stats["qa_pairs"] == stats["qa_vectors"] == report.qa_pairs > n_chunks
    assert stats["qa_edges"] == report.qa_edges and stats["verb_phrases"] == report.verb_phrases
    assert parted.document_status(["chronicle"])["chronicle"]["status"] == "done"
    assert stats == _stats(whole)  # bounded parts lose and duplicate nothing


class Crash(RuntimeError):
    """Stands in for the process dying between two parts."""


def test_crash_between_parts_leaves_pending_and_a_rerun_equals_a_clean_run(
    open_memory, long_document
) -> None:
    crashed, clean = open_memory(), open_memory()

    def crash_after_third(part: PartProgress) -> None:
        if part.chunks_done == 3 * PART:
            raise Crash("killed after the third part")

    with pytest.raises(Crash):
        _ingestor(crashed, PART).ingest([long_document], on_part=crash_after_third)
    half = crashed.stats()
    assert half["documents_pending"] == 1 and half["documents_done"] == 0
    assert half["chunks"] == half["chunk_vectors"] == 3 * PART  # three parts landed, nothing more
    assert half["qa_pairs"] == half["qa_vectors"] > 0

    # a new run (fresh ingestor, as a new process would have) clears the pending document and redoes it
    rerun = _ingestor(crashed, PART).ingest([long_document])
    assert rerun.ingested == 1 and rerun.replaced == 0
    _ingestor(clean, PART).ingest([long_document])
    assert _stats(crashed) == _stats(clean)
    assert _stats(clean)["documents_done"] == 1


def test_deleting_a_long_document_goes_in_parts_and_leaves_nothing(
    open_memory, long_document, monkeypatch
) -> None:
    """Verb phrases go PART chunks per transaction and gists three per transaction here (a 5 MB
    document's slices are 32 and 128 chunks): none of the document's is left, and the other
    document's memory stays."""
    monkeypatch.setattr(gists_stage, "DELETE_SLICE", 3)
    memory = open_memory()
    ingestor = _ingestor(memory, PART, with_stages=True)
    ingestor.ingest([long_document, make_document("Aldric Ashdown was born in Port Selwyn.", id="note")])
    before = memory.stats()
    assert before["gists"] == before["chunks"] > 2 * 3
    report = ingestor.delete("chronicle")
    after = memory.stats()
    assert report is not None and report.deleted_entities > 0
    assert after["documents"] == 1 and after["chunks"] == after["chunk_vectors"] == after["gists"] == 1
    assert 0 < after["verb_phrases"] < before["verb_phrases"]
    assert after["qa_vectors"] == after["qa_pairs"] < before["qa_pairs"]
    assert after["entities"] == after["entity_vectors"] == before["entities"] - report.deleted_entities
    names = {r["name"] for r in memory.driver.execute_query(
        "MATCH (e:Entity {namespace: $ns}) RETURN e.name AS name", ns=memory.namespace).records}  # fmt: skip
    assert {"Aldric Ashdown", "Port Selwyn"} <= names  # the short note's entities survive


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc/self/smaps")
def test_each_part_leaves_none_of_the_vector_files_resident(
    open_memory, long_document, isolated_settings
) -> None:
    """What a part wrote to the embedded vector store is durable when the part ends, so its pages of
    the store's files are given back then: the resident set does not grow with every vector a long
    document writes. A search afterwards maps them in again and finds what the parts stored."""
    memory = open_memory()
    folder = Path(isolated_settings.qdrant_path)
    resident_after_part: list[int] = []
    _ingestor(memory, PART).ingest(
        [long_document], on_part=lambda _: resident_after_part.append(resident_kb(folder))
    )
    assert len(resident_after_part) > 3
    assert max(resident_after_part) <= 64  # KB: at most a page or so touched since the release
    hits = memory.vectors.search(
        "qa", memory.namespace, memory.embedder.embed_query("Who joined the Mirecourt Gazette?"), 3
    )
    assert hits and resident_kb(folder) > 0

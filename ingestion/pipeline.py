"""Ingestion: documents → chunks → GSWs → Neo4j (graph) and Qdrant (QA vectors).

Documents are taken in batches (``batch_size`` documents), and a batch's
chunks in *parts* of at most ``chunks_per_part`` chunks: each part is
extracted, reconciled, written to the graph in one bounded transaction and
embedded before the next part starts, so neither Neo4j's transaction memory
nor this process's memory grows with the length of a document (a novel is
many parts; a batch of short passages is usually one). The next part is
extracted on a worker thread meanwhile (``ingestion/extraction/ahead.py``).

Per-document status makes ingestion resumable: a batch's Document nodes are
written first as ``pending``; only when every part holding their chunks is in
the graph *and* its vectors are upserted is a document marked ``done`` (or
``failed`` when a chunk could not be extracted; the reason is kept on the chunk
and document). A later run skips documents that are ``done`` with the same
content hash and first clears whatever a ``pending``/``failed``/changed
document left behind (also in bounded parts), so an interrupted run followed by
a re-run ends in exactly the state of a clean run.

Each batch's documents are *claimed* before anything is extracted
(``ingestion/claims.py``): writers sharing one Neo4j that are given the same
input at once never do the same document twice; a document another live writer
holds is waited for and then found ``done``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engramdb.ingestion.claims import DEFAULT_LEASE_SECONDS, DocumentClaims
from engramdb.ingestion.documents import Chunk, Document
from engramdb.ingestion.extraction.ahead import ExtractionAhead, may_speculate
from engramdb.ingestion.extraction.cache import ExtractionCache
from engramdb.ingestion.extraction.extractors import ChunkJob, Extraction, Extractor
from engramdb.ingestion.extraction.offline import ChunkText
from engramdb.ingestion.identity import FileIdentity, StoredDocument, resolve
from engramdb.ingestion.loaders import FileProblem
from engramdb.ingestion.reconcile import EntityResolver, StoredEntity
from engramdb.ingestion.stages.base import MemoryStage, StageChunk
from engramdb.ingestion.writer import (
    BatchRows,
    ChunkResult,
    QARecord,
    build_rows,
    write_documents,
    write_rows,
)
from engramdb.platform.embedders import Embedder
from engramdb.platform.graph import Graph
from engramdb.platform.resident_memory import return_large_blocks, trim_heap
from engramdb.platform.storage import (
    CHUNK_COLLECTION,
    ENTITY_COLLECTION,
    QA_COLLECTION,
    ChunkPayload,
    QAPayload,
    passage_text,
)
from engramdb.platform.timing import timed
from engramdb.platform.vectors import VectorPoint, VectorStore

# Bump when what ingestion writes for the same text changes (new stores, fields,
# extractor rules): documents ingested under another version are redone.
PIPELINE_VERSION = "4"
#: Chunks written per graph transaction (and extracted and embedded per step): bounds the
#: transaction's memory in Neo4j and this process's memory for documents of any length.
DEFAULT_CHUNKS_PER_PART = 128
#: Chunks whose verb phrases and QA edges one delete transaction removes (see
#: ``Ingestor._delete_verb_phrases``): a quarter of a part, as Neo4j deletes a smaller transaction's
#: records for less CPU each.
PHRASE_DELETE_CHUNKS = 32
#: First and longest pause between claims of documents another writer is ingesting.
CLAIM_POLL_SECONDS = 0.5
MAX_CLAIM_POLL_SECONDS = 5.0
ProgressCallback = Callable[[int], None]


@dataclass(frozen=True)
class PartProgress:
    """One part of a batch is written (graph and vectors): chunk-level progress within the batch."""

    doc_ids: tuple[str, ...]  # documents with chunks in this part
    chunks: int  # chunks in this part
    chunks_done: int  # chunks of the batch written so far, this part included
    chunks_total: int  # chunks of the batch


PartCallback = Callable[[PartProgress], None]


@dataclass
class IngestReport:
    """What one ingest call did; counts are of what was written."""

    documents: int = 0
    skipped: int = 0
    ingested: int = 0
    failed: int = 0
    replaced: int = 0
    #: Documents another writer sharing this Neo4j ingested while this ingest waited (counted as skipped).
    ingested_elsewhere: int = 0
    chunks: int = 0
    failed_chunks: int = 0
    entity_mentions: int = 0
    verb_phrases: int = 0
    qa_pairs: int = 0
    qa_edges: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: Files of a folder not ingested for their type: (path, reason).
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    #: Things a user should know that are not failures (an id given to a second file of one name).
    notes: list[str] = field(default_factory=list)
    stage_failures: list[tuple[str, str, str]] = field(default_factory=list)  # (stage, chunk id, reason)

    def timed(self, stage: str, started: float) -> None:
        self.add_seconds(stage, time.perf_counter() - started)

    def add_seconds(self, stage: str, seconds: float) -> None:
        """Time spent on ``stage`` elsewhere (another thread), added to its total."""
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds

    def add(self, rows: BatchRows) -> None:
        self.chunks += len(rows.chunks)
        self.failed_chunks += sum(1 for c in rows.chunks if c["status"] == "failed")
        self.entity_mentions += len(rows.mentions)
        self.verb_phrases += len(rows.verb_phrases)
        self.qa_pairs += len(rows.qa_records)
        self.qa_edges += len(rows.qa_edges)


@dataclass(frozen=True)
class DeleteReport:
    doc_id: str
    deleted_entities: int
    surviving_entities: int
    cache_entries: int
    #: Seconds per step ("<stage> stage" for each memory stage, "vectors" with the extraction
    #: cache's entries, "graph"): a large document's delete takes tens of seconds, and this says
    #: where they went. The QA and passage vectors go beside the stages, so the steps may add up
    #: to more than the delete's wall time.
    step_seconds: dict[str, float] = field(default_factory=dict)
    #: The delete's wall time (None from a server that did not send it).
    seconds: float | None = None


def slowest_first(step_seconds: Mapping[str, float]) -> str:
    """Timed steps for a person, slowest first: ``graph 4.2 s, gists stage 0.8 s, ...``."""
    ranked = sorted(step_seconds.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{step} {seconds:.1f} s" for step, seconds in ranked)


@dataclass
class _DocTally:
    """What the parts of a batch wrote for one document (its status is decided from this)."""

    chunks: int = 0
    qa_pairs: int = 0
    errors: list[str] = field(default_factory=list)


def _stored(row: dict[str, Any]) -> StoredDocument:
    return StoredDocument(row["id"], row.get("path"), row.get("source") or "", row.get("content_hash"))


def _jobs(part: Sequence[tuple[Document, Chunk]]) -> list[ChunkJob]:
    """What the extractor is given for a part: the document's title is its topic entity."""
    return [ChunkJob(ChunkText(chunk.text, doc.title or None), doc.id) for doc, chunk in part]


def _title(doc: Document, chunk: Chunk) -> str:
    """A passage's title: ``document › section`` for a document with sections, else the document's."""
    return chunk.title or doc.title


class Ingestor:
    """Runs the ingestion stages for one namespace."""

    def __init__(
        self,
        graph: Graph,
        vectors: VectorStore,
        embedder: Embedder,
        extractor: Extractor,
        *,
        batch_size: int = 64,
        cache: ExtractionCache | None = None,
        entity_merge_threshold: float = 0.85,
        chunks_per_part: int = DEFAULT_CHUNKS_PER_PART,
        stages: Sequence[MemoryStage] = (),
        claim_lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        if chunks_per_part < 1:
            raise ValueError(f"chunks_per_part must be at least 1, got {chunks_per_part}")
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.extractor = extractor
        self.batch_size = batch_size
        self.chunks_per_part = chunks_per_part
        self.cache = cache
        self.entity_merge_threshold = entity_merge_threshold
        self.stages = list(stages)
        similar = self._similar_entities if entity_merge_threshold < 1.0 else None
        self.resolver = EntityResolver(self._existing_entities, similar)
        self.ingest_version = f"{PIPELINE_VERSION}/{extractor.name}/{embedder.name}"
        self.claims = DocumentClaims(graph, self.ingest_version, claim_lease_seconds)
        self.vectors.ensure_collection(QA_COLLECTION, embedder.dim)
        self.vectors.ensure_collection(CHUNK_COLLECTION, embedder.dim)
        self.vectors.ensure_collection(ENTITY_COLLECTION, embedder.dim)

    # ------------------------------------------------------------ ingest
    def ingest(
        self,
        documents: Sequence[Document],
        progress: ProgressCallback | None = None,
        on_part: PartCallback | None = None,
        failed_files: Sequence[FileProblem] = (),
    ) -> IngestReport:
        """Ingest documents; ``progress`` advances per document, ``on_part`` after every written part.

        ``failed_files`` (files of a folder that could not be read) become ``failed`` documents
        with their reason, unless memory already holds a good version of that file."""
        started = time.perf_counter()
        return_large_blocks()  # a part's large buffers go back to the system when freed
        report = IngestReport(documents=len(documents) + len(failed_files))
        documents, failed_files = self._identify(documents, failed_files, report)
        self._record_failed_files(failed_files, report)
        if progress and failed_files:
            progress(len(failed_files))
        known = self._known_documents([d.id for d in documents])
        todo: list[Document] = []
        for doc in documents:
            prior = known.get(doc.id)
            unchanged = prior is not None and prior["content_hash"] == doc.content_hash
            if unchanged and prior["status"] == "done" and prior["ingest_version"] == self.ingest_version:
                report.skipped += 1
                if progress:
                    progress(1)
                continue
            todo.append(doc)
        holders = {known[d.id]["claimed_by"] for d in todo if known.get(d.id, {}).get("claimed_by")}
        written: set[str] = set()
        with ExtractionAhead(self.extractor) as ahead:
            waiting = self._ingest_claimed(todo, holders, written, report, progress, on_part, ahead)
            pause = CLAIM_POLL_SECONDS
            while waiting:  # documents another writer is ingesting right now: theirs to finish
                if progress:
                    progress(0)  # a stopping server interrupts the wait here
                time.sleep(pause)
                pause = min(pause * 2, MAX_CLAIM_POLL_SECONDS)
                waiting = self._ingest_claimed(waiting, holders, written, report, progress, on_part, ahead)
        if report.ingested_elsewhere:
            report.notes.append(f"{report.ingested_elsewhere} document(s) were ingested by another writer "
                                "at the same time; this ingest waited for them")  # fmt: skip
        report.seconds = time.perf_counter() - started
        return report

    def _ingest_claimed(
        self,
        documents: Sequence[Document],
        holders: set[str],
        written: set[str],
        report: IngestReport,
        progress: ProgressCallback | None,
        on_part: PartCallback | None,
        ahead: ExtractionAhead,
    ) -> list[Document]:
        """Claim and ingest ``documents`` batch by batch; returns those another live writer holds.

        ``holders`` collects the writers seen holding claims, so a later round can take over
        the ones that have since died (ingestion/claims.py); ``written`` the ids this ingest wrote.
        ``ahead`` extracts the next part while a part is written, across batches too when the
        extractor allows work on documents not yet claimed (ingestion/extraction/ahead.py)."""
        busy: list[Document] = []
        for start in range(0, len(documents), self.batch_size):
            claim = self.claims.claim(documents[start : start + self.batch_size], holders)
            busy += claim.busy
            holders.update(claim.holders.values())
            report.skipped += len(claim.finished)
            report.ingested_elsewhere += sum(1 for d in claim.finished if d.id not in written)
            if progress and claim.finished:
                progress(len(claim.finished))
            if not claim.claimed:
                continue
            try:
                for doc in claim.claimed:  # changed, left pending/failed, or made by another version
                    if doc.id in claim.has_memory:
                        self._delete_memory(doc.id, keep_document=True)
                    prior_hash = claim.prior_hashes.get(doc.id)
                    report.replaced += bool(prior_hash) and prior_hash != doc.content_hash
                upcoming = documents[start + self.batch_size : start + 2 * self.batch_size]
                self._ingest_batch(claim.claimed, report, on_part, ahead, upcoming)
                written.update(d.id for d in claim.claimed)
            except BaseException:
                self.claims.release([d.id for d in claim.claimed])  # left pending: anyone may resume them
                raise
            if progress:
                progress(len(claim.claimed))
        return busy

    def _identify(
        self, documents: Sequence[Document], failed: Sequence[FileProblem], report: IngestReport
    ) -> tuple[list[Document], list[FileProblem]]:
        """Give each file's document the id memory knows it by (ingestion/identity.py)."""
        files = [FileIdentity(d.id, d.path, d.source, d.content_hash) for d in documents if d.path]
        files += [FileIdentity(f.doc_id, f.abs_path, f.path) for f in failed if f.abs_path]
        if not files:
            return list(documents), list(failed)
        paths = [f.path for f in files]
        by_path: dict[str, StoredDocument] = {}
        for start in range(0, len(paths), 2000):
            for row in self.graph.read("traversals/documents_by_path", paths=paths[start : start + 2000]):
                by_path[row["path"]] = _stored(row)
        by_id = {k: _stored(v) for k, v in self._known_documents([f.wanted_id for f in files]).items()}
        unresolved = [f for f in files if f.path not in by_path]
        legacy: list[StoredDocument] = []
        if unresolved:
            rows = self.graph.read("traversals/pathless_documents", sources=[f.source for f in unresolved],
                                   hashes=[f.content_hash for f in unresolved if f.content_hash])  # fmt: skip
            legacy = [_stored(row) for row in rows]
        resolutions = dict(zip(paths, resolve(files, by_path, by_id, legacy), strict=True))
        moved = [{"id": r.id, "path": p} for p, r in resolutions.items() if r.store_path]
        if moved:
            self.graph.write("writers/set_document_path", rows=moved)
        report.notes.extend(r.note for r in resolutions.values() if r.note)
        docs = [dataclasses.replace(d, id=resolutions[d.path].id) if d.path else d for d in documents]
        bad = [dataclasses.replace(f, doc_id=resolutions[f.abs_path].id) if f.abs_path else f for f in failed]
        return docs, bad

    def _record_failed_files(self, failed: Sequence[FileProblem], report: IngestReport) -> None:
        """A file that could not be read is a ``failed`` document with its reason; a file whose
        earlier version is in memory (``done``) keeps that memory, and the failure is reported."""
        if not failed:
            return
        known = self._known_documents([f.doc_id for f in failed if f.doc_id])
        rows = []
        for f in failed:
            report.failed += 1
            report.failures.append((f.doc_id or f.path, f"{f.path}: {f.reason}"))
            prior = known.get(f.doc_id)
            if not f.doc_id:
                continue
            if prior is not None and prior["status"] == "done":
                report.notes.append(f"{f.path} could not be read; memory keeps its earlier version")
                continue
            if prior is not None:  # an interrupted or failed earlier run: nothing of it may linger
                self._delete_memory(f.doc_id, keep_document=True)
            rows.append(f)
        if not rows:
            return
        self.graph.write("writers/upsert_documents", rows=[
            {"id": f.doc_id, "title": f.path.rsplit("/", 1)[-1], "source": f.path, "path": f.abs_path or None,
             "content_hash": None, "metadata_json": "{}", "status": "failed"} for f in rows
        ])  # fmt: skip
        self.graph.write("writers/set_document_status", rows=[
            {"id": f.doc_id, "status": "failed", "error": f.reason, "chunk_count": 0, "qa_count": 0,
             "ingest_version": self.ingest_version} for f in rows
        ])  # fmt: skip

    def _ingest_batch(
        self,
        batch: Sequence[Document],
        report: IngestReport,
        on_part: PartCallback | None,
        ahead: ExtractionAhead,
        upcoming: Sequence[Document] = (),
    ) -> None:
        """Documents first (pending), then their chunks part by part, then each document's status.

        While a part is written, ``ahead`` extracts the next one: the batch's own, or after the
        last the first part of the ``upcoming`` documents (the next batch, not yet claimed)."""
        t0 = time.perf_counter()
        write_documents(self.graph, batch)
        report.timed("graph_write", t0)
        chunks = [(doc, chunk) for doc in batch for chunk in doc.chunks()]
        tallies = {doc.id: _DocTally() for doc in batch}
        seen_entities: set[str] = set()
        try:
            for start in range(0, len(chunks), self.chunks_per_part):
                part = chunks[start : start + self.chunks_per_part]
                extractions = self._take_extractions(ahead, part, report)
                following = chunks[start + self.chunks_per_part : start + 2 * self.chunks_per_part]
                if not following and may_speculate(self.extractor):
                    following = self._first_part(upcoming)
                ahead.start(_jobs(following))
                self._ingest_part(batch, part, extractions, report, tallies, seen_entities)
                # what the part used goes back to the system before the next one: its pages of the
                # vector files (durable now) and the heap it freed (platform/resident_memory.py)
                self.vectors.release_pages()
                trim_heap()
                if start + self.chunks_per_part < len(chunks):  # the last part's status releases them
                    self.claims.renew([doc.id for doc in batch])
                if on_part:
                    doc_ids = tuple(dict.fromkeys(chunk.doc_id for _, chunk in part))
                    on_part(PartProgress(doc_ids, len(part), start + len(part), len(chunks)))
        except BaseException:
            # the resolver may remember nodes of a part that never landed: start from the graph again
            self.resolver.reset()
            raise
        t0 = time.perf_counter()
        statuses = []
        for doc in batch:
            tally = tallies[doc.id]
            error = "; ".join(tally.errors) or None
            statuses.append({"id": doc.id, "status": "failed" if error else "done", "error": error,
                             "chunk_count": tally.chunks, "qa_count": tally.qa_pairs,
                             "ingest_version": self.ingest_version, "writer": self.claims.writer})  # fmt: skip
            if error:
                report.failed += 1
                report.failures.append((doc.id, error))
            else:
                report.ingested += 1
        self.graph.write("writers/set_document_status", rows=statuses)
        report.timed("status", t0)

    def _first_part(self, documents: Sequence[Document]) -> list[tuple[Document, Chunk]]:
        """The chunks the first part of a batch of ``documents`` would hold."""
        chunks: list[tuple[Document, Chunk]] = []
        for doc in documents:
            chunks += [(doc, chunk) for chunk in doc.chunks()[: self.chunks_per_part - len(chunks)]]
            if len(chunks) == self.chunks_per_part:
                break
        return chunks

    def _take_extractions(
        self, ahead: ExtractionAhead, part: Sequence[tuple[Document, Chunk]], report: IngestReport
    ) -> list[Extraction]:
        """The part's extractions from ``ahead``; ``extract`` is the extractor's own time, wherever it
        ran, and ``extract_wait`` how long this thread waited for it."""
        ran, waited = ahead.extract_seconds, ahead.wait_seconds
        extractions = ahead.take(_jobs(part))
        report.add_seconds("extract", ahead.extract_seconds - ran)
        report.add_seconds("extract_wait", ahead.wait_seconds - waited)
        return extractions

    def _ingest_part(
        self,
        batch: Sequence[Document],
        part: Sequence[tuple[Document, Chunk]],
        extractions: Sequence[Extraction],
        report: IngestReport,
        tallies: dict[str, _DocTally],
        seen_entities: set[str],
    ) -> None:
        """Reconcile, write (one transaction) and embed one bounded slice of extracted chunks."""
        results = [
            ChunkResult(chunk, x.gsw, x.error) for (_, chunk), x in zip(part, extractions, strict=True)
        ]
        for x in extractions:
            report.input_tokens += x.input_tokens
            report.output_tokens += x.output_tokens
        t0 = time.perf_counter()
        rows = build_rows(batch, results, self.resolver, seen_entities=seen_entities, with_documents=False)
        report.timed("reconcile", t0)
        # The graph write waits on Neo4j while this thread embeds: neither needs the other. Documents
        # stay 'pending' until every part's vectors are in, so a crash in either leaves them to be
        # redone, as when the two ran one after the other.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="engramdb-graph-write") as pool:
            graph_write = pool.submit(timed, write_rows, self.graph, rows)
            t0 = time.perf_counter()
            vectors = (
                self.embedder.embed_documents([r.question for r in rows.qa_records])
                if rows.qa_records
                else []
            )
            chunk_vectors = self.embedder.embed_documents(
                [passage_text(_title(d, c), c.text) for d, c in part]
            )
            entity_vectors = (
                self.embedder.embed_documents([e["name"] for e in rows.entities]) if rows.entities else []
            )
            report.timed("embed", t0)
        # leaving the block waited for the write; an error in it is raised here
        report.add_seconds("graph_write", graph_write.result()[1])
        t0 = time.perf_counter()
        self._index_qa(rows.qa_records, vectors)
        self.vectors.upsert(CHUNK_COLLECTION, self.graph.namespace, [
            VectorPoint(key=c.id, vector=v, payload=ChunkPayload(doc_id=c.doc_id, chunk_id=c.id, title=_title(d, c),
                                                                 position=c.position, embedder=self.embedder.name).to_payload())
            for (d, c), v in zip(part, chunk_vectors, strict=True)
        ])  # fmt: skip
        if rows.entities:
            self.vectors.upsert(ENTITY_COLLECTION, self.graph.namespace, [
                VectorPoint(key=e["id"], vector=v, payload={"entity_id": e["id"], "name": e["name"], "kind": e["type"]})
                for e, v in zip(rows.entities, entity_vectors, strict=True)
            ])  # fmt: skip
        report.timed("vector_upsert", t0)
        for result in results:
            tally = tallies[result.chunk.doc_id]
            tally.chunks += 1
            if result.error:
                tally.errors.append(f"{result.chunk.id}: {result.error}")
        for record in rows.qa_records:
            tallies[record.doc_id].qa_pairs += 1
        report.add(rows)
        self._run_stages(part, results, report)

    def _run_stages(
        self, part: Sequence[tuple[Document, Chunk]], results: Sequence[ChunkResult], report: IngestReport
    ) -> None:
        """Each memory stage derives its index for the part's extracted chunks (before the documents are
        marked done, so a crash here re-ingests them; a stage's per-chunk failures are reported and left
        for ``engramdb index`` to retry, without failing the document)."""
        chunks = [
            StageChunk(c.id, c.doc_id, _title(d, c), c.text, c.position)
            for (d, c), r in zip(part, results, strict=True)
            if r.gsw is not None and not r.error
        ]
        if not chunks:
            return
        for stage in self.stages:
            t0 = time.perf_counter()
            stage_report = stage.run(chunks)
            report.timed(f"stage_{stage.name}", t0)
            report.stage_failures.extend(
                (stage.name, chunk_id, why) for chunk_id, why in stage_report.failures
            )

    def _index_qa(self, records: Sequence[QARecord], vectors: Any) -> None:
        if not records:
            return
        points = [
            VectorPoint(
                key=r.id,
                vector=vec,
                payload=QAPayload(
                    doc_id=r.doc_id,
                    chunk_id=r.chunk_id,
                    verb_phrase_id=r.verb_phrase_id,
                    question=r.question,
                    question_entity_ids=r.question_entity_ids,
                    answer_entity_ids=r.answer_entity_ids,
                    answer_names=r.answer_names,
                    answer_types=r.answer_types,
                    embedder=self.embedder.name,
                ).to_payload(),
            )  # fmt: skip
            for r, vec in zip(records, vectors, strict=True)
        ]
        self.vectors.upsert(QA_COLLECTION, self.graph.namespace, points)

    # ------------------------------------------------------------ delete
    def delete(self, doc_id: str) -> DeleteReport | None:
        """Remove a document and its memory everywhere; None if the namespace has no such document."""
        if not self._known_documents([doc_id]):
            return None
        return self._delete_memory(doc_id, keep_document=False)

    def _delete_memory(self, doc_id: str, keep_document: bool) -> DeleteReport:
        """The document is marked pending first, then QA and passage vectors and cache entries go
        before the graph: if the process dies half-way, the document is still in the graph, pending,
        and deleting or ingesting it again finishes the job (were it still 'done', an ingest of the
        same file would skip it and its vectors would stay lost). The graph goes in bounded
        transactions: first the verb phrases and QA edges of ``PHRASE_DELETE_CHUNKS`` chunks at a
        time, two such transactions at once (most of a long document's graph; one at a time left a core
        of Neo4j idle), then parts of ``chunks_per_part`` chunks with their mentions and orphaned
        entities, the Document node last. Entity vectors can only go after each part (the graph
        decides which entities are orphaned); a stale one is harmless, as reconciliation accepts
        only entities that exist."""
        seconds: dict[str, float] = {}

        def took(step: str, since: float) -> float:
            now = time.perf_counter()
            seconds[step] = seconds.get(step, 0.0) + now - since
            return now

        started = t = time.perf_counter()
        self.graph.write("writers/mark_document_pending", doc_id=doc_id)
        t = took("graph", t)
        # Stages hang their memory off the chunks, so they forget it before the chunks go. Each
        # stage's memory is its own (gists, clusters), so the stages forget theirs side by side, and
        # beside them the vector store and the cache, which are not Neo4j (a 5 MB document, one after
        # the other: clusters 5.8 s, gists 4.7 s, vectors 1.8 s). Should two stages' transactions
        # lock the same chunk, Neo4j reports a deadlock and the driver runs one of them again.
        chunk_ids = [r["id"] for r in self.graph.read("stages/document_chunk_ids", doc_id=doc_id)]
        t = took("graph", t)
        with ThreadPoolExecutor(1 + len(self.stages), thread_name_prefix="engramdb-delete") as beside:
            vectors_gone = beside.submit(timed, self._delete_document_vectors, doc_id)
            forgotten = [
                (stage.name, beside.submit(timed, stage.delete_document, doc_id, chunk_ids))
                for stage in self.stages
            ]
            for name, future in forgotten:
                seconds[f"{name} stage"] = future.result()[1]
            cached, seconds["vectors"] = vectors_gone.result()
        t = time.perf_counter()
        self._delete_verb_phrases(chunk_ids)
        t = took("graph", t)
        deleted: list[str] = []
        survivors: dict[str, None] = {}
        while True:
            rows = self.graph.write("writers/delete_document_part", doc_id=doc_id, limit=self.chunks_per_part)
            row = rows[0] if rows else {"deleted_chunks": 0, "deleted_ids": [], "survivors": []}
            t = took("graph", t)
            if row["deleted_ids"]:
                deleted.extend(row["deleted_ids"])
                self.vectors.delete(ENTITY_COLLECTION, self.graph.namespace, keys=row["deleted_ids"])
                t = took("vectors", t)
            survivors.update(dict.fromkeys(row["survivors"]))
            if row["deleted_chunks"] < self.chunks_per_part:
                break
        if not keep_document:
            self.graph.write("writers/delete_document_node", doc_id=doc_id)
        gone = set(deleted)  # a survivor of one part may be orphaned by a later one
        alive = [e for e in survivors if e not in gone]
        for start in range(0, len(alive), 2000):
            self.graph.write("writers/refresh_entity_text", ids=alive[start : start + 2000])
        self.resolver.forget(deleted)
        ended = took("graph", t)
        return DeleteReport(doc_id, len(deleted), len(alive), cached, seconds, ended - started)

    def _delete_verb_phrases(self, chunk_ids: Sequence[str]) -> None:
        """The verb phrases and QA edges of these chunks, ``PHRASE_DELETE_CHUNKS`` chunks per
        transaction (fewer when a part is smaller), two transactions at a time (see
        ``writers/delete_chunk_verb_phrases.cypher``). Neo4j's cost per deleted record grows with
        the transaction: on copies of the 5 MB benchmark's memory (146,370 verb phrases, 340,115 QA
        edges), Neo4j restarted before each run, this step took 20.6-21.6 s and 31-34 s of Neo4j's
        CPU in slices of 128 or 64 chunks, 16.1-17.0 s and 22-24 s in slices of 32 or 16. Earlier,
        on such a copy: one transaction per part of 128 chunks 25.2 / 26.6 s, one thread 22.0 s,
        three 20.0 s, two 20.6 / 19.8 s."""
        step = min(self.chunks_per_part, PHRASE_DELETE_CHUNKS)
        slices = [list(chunk_ids[i : i + step]) for i in range(0, len(chunk_ids), step)]

        def delete(part: list[str]) -> None:
            self.graph.write("writers/delete_chunk_verb_phrases", chunk_ids=part)

        with ThreadPoolExecutor(2, thread_name_prefix="engramdb-delete-phrases") as pool:
            list(pool.map(delete, slices))

    def _delete_document_vectors(self, doc_id: str) -> int:
        """A document's QA and passage vectors and its cached extractions; the number of cache
        entries deleted."""
        self.vectors.delete(QA_COLLECTION, self.graph.namespace, where={"doc_id": doc_id})
        self.vectors.delete(CHUNK_COLLECTION, self.graph.namespace, where={"doc_id": doc_id})
        return self.cache.delete_document(self.graph.namespace, doc_id) if self.cache else 0

    # ------------------------------------------------------------ lookups
    def _known_documents(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 2000):
            for row in self.graph.read("traversals/get_documents", ids=ids[start : start + 2000]):
                found[row["id"]] = row
        return found

    def _similar_entities(self, items: Sequence[tuple[str, str, str]]) -> dict[str, str]:
        """Embedding candidates: (normalized, name, type) -> an existing entity's id, for spelling variants."""
        from engramdb.ingestion.reconcile import spelling_variants

        vectors = self.embedder.embed_documents([name for _, name, _ in items])
        proposals: dict[str, str] = {}
        for (key, name, type_), vector in zip(items, vectors, strict=True):
            hits = self.vectors.search(
                ENTITY_COLLECTION, self.graph.namespace, vector, 1, where={"kind": type_}
            )
            if (
                hits
                and hits[0].score >= self.entity_merge_threshold
                and spelling_variants(name, hits[0].payload["name"])
            ):
                proposals[key] = hits[0].key
        if not proposals:
            return {}
        # a vector may outlive its entity after a crash mid-delete: accept only entities that exist
        existing = {
            r["id"] for r in self.graph.read("traversals/entity_names", ids=sorted(set(proposals.values())))
        }
        return {k: v for k, v in proposals.items() if v in existing}

    def _existing_entities(self, keys: list[str]) -> list[StoredEntity]:
        """Stored entities for normalized names: nodes of that name, and nodes once mentioned under it."""
        found: list[StoredEntity] = []
        for start in range(0, len(keys), 2000):
            part = keys[start : start + 2000]
            for row in self.graph.read("traversals/entities_by_normalized_name", keys=part):
                found.append(stored_entity(row, "name"))
            for row in self.graph.read("traversals/entities_by_alias_key", keys=part):
                found.append(stored_entity(row, "alias"))
        return found


def stored_entity(row: dict[str, Any], via: str) -> StoredEntity:
    """A stored node as a lookup row found it, ``via`` its name or an alias key. The alias read
    runs after the name read, and another writer may commit a node between the two: a key that is
    the node's own name (``own_name``) counts as its name whichever read found it, or a one-word name
    such as "Sweden" would, as an alias, not join across documents and a second node would be made."""
    return StoredEntity(row["key"], row["id"], row["types"], "name" if row.get("own_name") else via)

"""Turn extracted GSWs into graph rows and write them with batched Cypher.

One call writes a whole batch of documents in ONE Neo4j transaction (UNWIND
writers from ``cypher/writers``): all of a batch's memory lands, or none of it.
Local GSW ids become global ids: chunk ``<doc>#<n>``, verb phrase
``<chunk>/v<k>``, QA ``<chunk>/q<k>``; entities are reconciled across documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engramdb.ingestion.documents import Chunk, Document
from engramdb.ingestion.gsw import GSW
from engramdb.ingestion.reconcile import EntityResolver, normalize_name
from engramdb.platform.graph import Graph


@dataclass
class ChunkResult:
    """A chunk with its GSW, or the reason extraction failed."""

    chunk: Chunk
    gsw: GSW | None
    error: str | None = None


@dataclass(frozen=True)
class QARecord:
    """What the vector index needs of one QA pair."""

    id: str
    question: str
    doc_id: str
    chunk_id: str
    verb_phrase_id: str
    question_entity_ids: list[str]
    answer_entity_ids: list[str]
    answer_names: list[str]
    answer_types: list[str]


@dataclass
class BatchRows:
    """Rows for every writer, plus the QA records to embed."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    verb_phrases: list[dict[str, Any]] = field(default_factory=list)
    qa_edges: list[dict[str, Any]] = field(default_factory=list)
    qa_records: list[QARecord] = field(default_factory=list)

    @property
    def entity_ids(self) -> list[str]:
        return sorted({row["id"] for row in self.entities})


def build_rows(
    documents: Sequence[Document], results: Sequence[ChunkResult], resolver: EntityResolver
) -> BatchRows:
    """Global rows for a batch; entity ids resolved against the graph in one lookup."""
    rows = BatchRows()
    resolver.prime(
        normalize_name(name)
        for r in results
        if r.gsw
        for e in r.gsw.entities
        for name in [e.name, *e.aliases]
    )
    resolver.prime_similar((e.name, e.type, e.aliases) for r in results if r.gsw for e in r.gsw.entities)
    seen_entities: set[str] = set()
    for doc in documents:
        rows.documents.append(
            {"id": doc.id, "title": doc.title, "source": doc.source, "content_hash": doc.content_hash,
             "metadata_json": doc.metadata_json, "status": "pending"}
        )  # fmt: skip
    titles = {doc.id: doc.title for doc in documents}
    for result in results:
        chunk = result.chunk
        rows.chunks.append(
            {"id": chunk.id, "doc_id": chunk.doc_id, "title": titles.get(chunk.doc_id, ""), "position": chunk.position, "text": chunk.text,
             "content_hash": chunk.content_hash, "status": "failed" if result.error else "done",
             "error": result.error}
        )  # fmt: skip
        if result.gsw is None:
            continue
        _add_gsw(rows, chunk, result.gsw, resolver, seen_entities)
    return rows


def _add_gsw(rows: BatchRows, chunk: Chunk, gsw: GSW, resolver: EntityResolver, seen: set[str]) -> None:
    global_ids: dict[str, str] = {}
    names: dict[str, str] = {}
    types: dict[str, str] = {}
    for entity in gsw.entities:
        gid, key = resolver.resolve(entity.name, entity.aliases)
        global_ids[entity.id] = gid
        names[gid] = entity.name
        types[gid] = entity.type
        if gid not in seen:
            seen.add(gid)
            rows.entities.append({"id": gid, "name": entity.name, "normalized_name": key, "type": entity.type})
        rows.mentions.append(
            {"chunk_id": chunk.id, "entity_id": gid, "doc_id": chunk.doc_id, "surface": entity.name,
             "type": entity.type, "aliases": entity.aliases,
             "alias_keys": sorted({k for k in map(normalize_name, [entity.name, *entity.aliases]) if k}),
             "roles": sorted({r.role for r in entity.roles}),
             "states": sorted({s for r in entity.roles for s in r.states})}
        )  # fmt: skip
    # Two local entities may reconcile to one node: keep one mention row per pair.
    rows.mentions[:] = list({(m["chunk_id"], m["entity_id"]): m for m in rows.mentions}.values())
    vp_entities: dict[str, set[str]] = {vp.id: set() for vp in gsw.verb_phrases}
    for qa in gsw.qa_pairs:
        vp_entities[qa.verb_phrase_id].update(global_ids[e] for e in qa.question_entity_ids + qa.answer_entity_ids)
    for vp in gsw.verb_phrases:
        rows.verb_phrases.append(
            {"id": f"{chunk.id}/{vp.id}", "text": vp.text, "doc_id": chunk.doc_id, "chunk_id": chunk.id,
             "entity_ids": sorted(vp_entities[vp.id])}
        )  # fmt: skip
    for qa in gsw.qa_pairs:
        qa_id = f"{chunk.id}/{qa.id}"
        question_ids = list(dict.fromkeys(global_ids[e] for e in qa.question_entity_ids))
        answer_ids = list(dict.fromkeys(global_ids[e] for e in qa.answer_entity_ids))
        for answer_id in answer_ids:
            rows.qa_edges.append(
                {"id": qa_id, "key": f"{qa_id}->{answer_id}", "verb_phrase_id": f"{chunk.id}/{qa.verb_phrase_id}",
                 "answer_id": answer_id, "question": qa.question, "question_entity_ids": question_ids,
                 "answer_entity_ids": answer_ids, "doc_id": chunk.doc_id, "chunk_id": chunk.id}
            )  # fmt: skip
        rows.qa_records.append(
            QARecord(
                id=qa_id, question=qa.question, doc_id=chunk.doc_id, chunk_id=chunk.id,
                verb_phrase_id=f"{chunk.id}/{qa.verb_phrase_id}", question_entity_ids=question_ids,
                answer_entity_ids=answer_ids, answer_names=[names[a] for a in answer_ids],
                answer_types=[types[a] for a in answer_ids],
            )
        )  # fmt: skip


def write_rows(graph: Graph, rows: BatchRows) -> None:
    """All writers of one batch in a single transaction."""
    graph.write_many(
        [
            ("writers/upsert_documents", {"rows": rows.documents}),
            ("writers/upsert_chunks", {"rows": rows.chunks}),
            ("writers/upsert_entities", {"rows": rows.entities}),
            ("writers/merge_mentions", {"rows": rows.mentions}),
            ("writers/upsert_verb_phrases", {"rows": rows.verb_phrases}),
            ("writers/upsert_qa_edges", {"rows": rows.qa_edges}),
            ("writers/refresh_entity_text", {"ids": rows.entity_ids}),
        ]
    )

"""Turn extracted GSWs into graph rows and write them with batched Cypher.

:func:`write_rows` writes one set of rows in ONE Neo4j transaction (UNWIND
writers from ``cypher/writers``): all of it lands, or none of it. Ingestion
calls it once per *part* of a batch (a bounded number of chunks), so a very
long document is written in several bounded transactions instead of one that
outgrows the server's transaction memory; the document stays ``pending`` until
every part is in (see :mod:`.pipeline`).

Local GSW ids become global ids: chunk ``<doc>#<n>``, verb phrase
``<chunk>/v<k>``, QA ``<chunk>/q<k>``; entities are reconciled across documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engramdb.ingestion.documents import Chunk, Document
from engramdb.ingestion.gsw import GSW, Entity
from engramdb.ingestion.reconcile import EntityResolver, normalize_name, type_family
from engramdb.platform.graph import Graph

#: How each namespace character is spelled in :func:`namespace_key` (``z`` escapes everything but a-y).
_KEY_SPELLING = {
    **{c: c for c in "abcdefghijklmnopqrstuvwxy"},
    "z": "zz",
    **{c: "zu" + c.lower() for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
    **{str(d): "z" + "abcdefghij"[d] for d in range(10)},
    "_": "zk",
    ".": "zl",
    "-": "zm",
}


def namespace_key(namespace: str) -> str:
    """The namespace as one lowercase-letters-only word, for the full-text indexes.

    Keyword search filters by namespace inside Lucene, where the analyzer would
    split ``my_ns.v2`` or ``wiki-2`` into pieces (and fold case); a run of
    ``a``-``z`` is one token for every analyzer, and this spelling is injective,
    so ``+namespace_key:<key>`` matches exactly one namespace. The writers and the
    schema migration compute the same key in Cypher (``writers/upsert_documents``).
    """
    try:
        return "ns" + "".join(_KEY_SPELLING[c] for c in namespace)
    except KeyError as exc:
        raise ValueError(f"namespace {namespace!r} has a character namespaces cannot have: {exc}") from exc


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
    """Rows for every writer, plus the QA records to embed.

    ``entities`` holds the entities first seen in this set of rows (to create and embed);
    the mentions may also point at entities an earlier part of the batch created.
    """

    documents: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    verb_phrases: list[dict[str, Any]] = field(default_factory=list)
    qa_edges: list[dict[str, Any]] = field(default_factory=list)
    qa_records: list[QARecord] = field(default_factory=list)

    @property
    def entity_ids(self) -> list[str]:
        """Every entity these rows touch (their index text is refreshed after the write)."""
        return sorted({row["id"] for row in self.entities} | {row["entity_id"] for row in self.mentions})


def document_rows(documents: Sequence[Document]) -> list[dict[str, Any]]:
    """Document rows as written before any of their chunks: ``pending`` until every part is in."""
    return [
        {"id": doc.id, "title": doc.title, "source": doc.source, "path": doc.path or None,
         "content_hash": doc.content_hash, "metadata_json": doc.metadata_json, "status": "pending"}
        for doc in documents
    ]  # fmt: skip


def build_rows(
    documents: Sequence[Document],
    results: Sequence[ChunkResult],
    resolver: EntityResolver,
    *,
    seen_entities: set[str] | None = None,
    with_documents: bool = True,
) -> BatchRows:
    """Global rows for chunks of ``documents``; entity ids resolved against the graph in one lookup.

    ``seen_entities`` carries the entities already created by earlier parts of the same batch;
    ``with_documents=False`` leaves out the document rows (already written on their own).
    """
    rows = BatchRows()
    resolver.prime(
        normalize_name(name)
        for r in results
        if r.gsw
        for e in r.gsw.entities
        for name in [e.name, *e.aliases]
    )
    resolver.prime_similar(
        (e.name, e.type, e.aliases, r.chunk.doc_id) for r in results if r.gsw for e in r.gsw.entities
    )
    seen = seen_entities if seen_entities is not None else set()
    if with_documents:
        rows.documents.extend(document_rows(documents))
    titles = {doc.id: doc.title for doc in documents}
    for result in results:
        chunk = result.chunk
        rows.chunks.append(
            {"id": chunk.id, "doc_id": chunk.doc_id, "title": chunk.title or titles.get(chunk.doc_id, ""), "position": chunk.position, "text": chunk.text,
             "content_hash": chunk.content_hash, "status": "failed" if result.error else "done",
             "error": result.error}
        )  # fmt: skip
        if result.gsw is None:
            continue
        _add_gsw(rows, chunk, result.gsw, resolver, seen)
    return rows


def _mention_row(chunk: Chunk, entity_id: str, entity: Entity) -> dict[str, Any]:
    return {
        "chunk_id": chunk.id, "entity_id": entity_id, "doc_id": chunk.doc_id, "surface": entity.name,
        "type": entity.type, "aliases": sorted(set(entity.aliases) - {entity.name}),
        "alias_keys": sorted({k for k in map(normalize_name, [entity.name, *entity.aliases]) if k}),
        "roles": sorted({r.role for r in entity.roles}),
        "states": sorted({s for r in entity.roles for s in r.states}),
    }  # fmt: skip


def merge_mention(kept: dict[str, Any], other: dict[str, Any]) -> None:
    """Fold a second local entity that resolved to the same node (in the same chunk) into ``kept``.

    Nothing is dropped: roles, states, aliases and alias keys are united (sorted), and the other
    surface name becomes an alias. The first mention keeps its surface name; its type is kept
    unless it is generic (THING, ...) and the other's is specific, so the row's type is the
    first specific one in extraction order.
    """
    if type_family(kept["type"]) is None and type_family(other["type"]) is not None:
        kept["type"] = other["type"]
    aliases = set(kept["aliases"]) | set(other["aliases"]) | {other["surface"]}
    kept["aliases"] = sorted(aliases - {kept["surface"]})
    for name in ("alias_keys", "roles", "states"):
        kept[name] = sorted(set(kept[name]) | set(other[name]))


def _add_gsw(rows: BatchRows, chunk: Chunk, gsw: GSW, resolver: EntityResolver, seen: set[str]) -> None:
    global_ids: dict[str, str] = {}
    mentions: dict[str, dict[str, Any]] = {}  # one row per (chunk, entity node)
    for entity in gsw.entities:
        gid, key = resolver.resolve(entity.name, entity.aliases, entity.type, chunk.doc_id)
        global_ids[entity.id] = gid
        if gid not in seen:
            seen.add(gid)
            rows.entities.append(
                {"id": gid, "name": entity.name, "normalized_name": key, "type": entity.type}
            )
        row = _mention_row(chunk, gid, entity)
        if gid in mentions:  # two local entities reconciled to one node: merge, never drop one
            merge_mention(mentions[gid], row)
        else:
            mentions[gid] = row
    rows.mentions.extend(mentions.values())
    vp_entities: dict[str, set[str]] = {vp.id: set() for vp in gsw.verb_phrases}
    for qa in gsw.qa_pairs:
        vp_entities[qa.verb_phrase_id].update(
            global_ids[e] for e in qa.question_entity_ids + qa.answer_entity_ids
        )
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
                answer_entity_ids=answer_ids, answer_names=[mentions[a]["surface"] for a in answer_ids],
                answer_types=[mentions[a]["type"] for a in answer_ids],
            )
        )  # fmt: skip


def write_documents(graph: Graph, documents: Sequence[Document]) -> None:
    """Document nodes alone (``pending``), before the parts holding their chunks."""
    graph.write("writers/upsert_documents", rows=document_rows(documents))


def write_rows(graph: Graph, rows: BatchRows) -> None:
    """All writers of one set of rows in a single transaction."""
    steps: list[tuple[str, dict[str, Any]]] = []
    if rows.documents:
        steps.append(("writers/upsert_documents", {"rows": rows.documents}))
    steps += [
        ("writers/upsert_chunks", {"rows": rows.chunks}),
        ("writers/upsert_entities", {"rows": rows.entities}),
        ("writers/merge_mentions", {"rows": rows.mentions}),
        ("writers/upsert_verb_phrases", {"rows": rows.verb_phrases}),
        ("writers/upsert_qa_edges", {"rows": rows.qa_edges}),
        ("writers/refresh_entity_text", {"ids": rows.entity_ids}),
    ]
    graph.write_many(steps)

"""Helpers every strategy shares: passages as evidence, citations, and the finished result.

Kept apart from the strategies so that a new strategy builds its
:class:`AskResult` the same way as the others (same citation lookup, same token
count), which is what makes their numbers comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.platform.embedders import Embedder, count_tokens
from engramdb.platform.graph import Graph
from engramdb.platform.storage import CHUNK_COLLECTION, passage_text
from engramdb.platform.vectors import VectorStore
from engramdb.retrieval.results import Citation, Evidence


def passage_evidence(rows: Sequence[dict[str, Any]], scores: Sequence[float] | None = None) -> list[Evidence]:
    """Chunk rows (``chunk_id``, ``doc_id``, ``title``, ``text``) as passage evidence, in the order given."""
    out = []
    for i, row in enumerate(rows):
        score = float(scores[i]) if scores is not None else float(row.get("score") or 0.0)
        out.append(
            Evidence(
                kind="passage",
                id=row["chunk_id"],
                text=passage_text(row.get("title") or "", row["text"]),
                score=score,
                doc_id=row["doc_id"],
                chunk_ids=(row["chunk_id"],),
                metadata={"title": row.get("title") or ""},
            )  # fmt: skip
        )
    return out


def citations(graph: Graph, evidence: Sequence[Evidence]) -> list[Citation]:
    """One citation per (evidence, chunk): chunk → document, read in one query."""
    chunk_ids = sorted({c for e in evidence for c in e.chunk_ids})
    if not chunk_ids:
        return []
    rows = {r["chunk_id"]: r for r in graph.read("traversals/citations", chunk_ids=chunk_ids)}
    out = []
    for e in evidence:
        for chunk_id in e.chunk_ids:
            row = rows.get(chunk_id)
            if row is not None:
                out.append(Citation(e.id, chunk_id, row["doc_id"], row["title"] or "", row["source"] or ""))
    return out


def evidence_tokens(evidence: Sequence[Evidence]) -> int:
    """The evidence's size in the shared token count (what a reader would be given)."""
    return count_tokens([e.text for e in evidence])


def dense_passage_rows(
    graph: Graph, vectors: VectorStore, embedder: Embedder, question: str, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` passages most similar to ``question`` as chunk rows (``chunk_id``, ``doc_id``,
    ``title``, ``text``, ``score``), best first: the dense baseline's retrieval, and the passage
    tier every strategy's budgeted ranking ends with."""
    hits = vectors.search(CHUNK_COLLECTION, graph.namespace, embedder.embed_query(question), limit)
    rows = graph.read("traversals/chunks_by_id", ids=[h.key for h in hits])
    scores = {h.key: h.score for h in hits}
    return [{**r, "score": scores.get(r["chunk_id"], 0.0)} for r in rows]

"""Helpers every strategy shares: passages as evidence, citations, and the finished result.

Kept apart from the strategies so that a new strategy builds its
:class:`AskResult` the same way as the others (same citation lookup, same token
count), which is what makes their numbers comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.platform.embedders import Embedder, count_tokens, embed_queries
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


def dense_passages(
    graph: Graph, vectors: VectorStore, embedder: Embedder, queries: Sequence[str], limit: int
) -> list[Evidence]:
    """Passages by vector similarity: the first query's (the question's) ranking, then passages
    only the other queries (its sub-questions) found, by score; the passage tier every strategy's
    ranking ends with. The question's own top passage leads, as in the plain baseline."""
    queries = [q for q in dict.fromkeys(queries) if q and q.strip()]
    if not queries or limit < 1:
        return []
    query_vectors = embed_queries(embedder, queries)  # one model run for the sub-questions
    first = [
        (h.key, h.score) for h in vectors.search(CHUNK_COLLECTION, graph.namespace, query_vectors[0], limit)
    ]
    others: dict[str, float] = {}
    for vector in query_vectors[1:]:
        for hit in vectors.search(CHUNK_COLLECTION, graph.namespace, vector, limit):
            others[hit.key] = max(others.get(hit.key, -1.0), hit.score)
    scores = dict(first)
    extra = sorted((k for k in others if k not in scores), key=lambda k: (-others[k], k))
    scores.update({k: others[k] for k in extra})
    ranked = [k for k, _ in first] + extra
    rows = {r["chunk_id"]: r for r in graph.read("traversals/chunks_by_id", ids=ranked[: 2 * limit])}
    found = [rows[k] for k in ranked if k in rows][: 2 * limit]
    return passage_evidence(found, [scores[r["chunk_id"]] for r in found])

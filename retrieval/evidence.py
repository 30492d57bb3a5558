"""Helpers every strategy shares: passages as evidence, citations, and the finished result.

Kept apart from the strategies so that a new strategy builds its
:class:`AskResult` the same way as the others (same citation lookup, same token
count), which is what makes their numbers comparable.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from engramdb.platform.embedders import Embedder, token_counts
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


def citations(
    graph: Graph, evidence: Sequence[Evidence], known: Sequence[dict[str, Any]] = ()
) -> list[Citation]:
    """One citation per (evidence, chunk): chunk → document. ``known`` are chunk rows the strategy
    read already with their document (``chunk_id``, ``doc_id``, ``doc_title``, ``source``: what
    ``traversals/chunks_by_id`` returns); only the other chunks are read, in one query."""
    documents = {
        r["chunk_id"]: (r["doc_id"], r["doc_title"] or "", r["source"] or "")
        for r in known
        if "doc_title" in r
    }
    missing = sorted({c for e in evidence for c in e.chunk_ids} - documents.keys())
    if missing:
        for r in graph.read("traversals/citations", chunk_ids=missing):
            documents[r["chunk_id"]] = (r["doc_id"], r["title"] or "", r["source"] or "")
    return [
        Citation(e.id, chunk_id, *documents[chunk_id])
        for e in evidence
        for chunk_id in e.chunk_ids
        if chunk_id in documents
    ]


def evidence_tokens(evidence: Sequence[Evidence]) -> int:
    """The evidence's size in the shared token count (what a reader would be given)."""
    return sum(text_tokens([e.text for e in evidence]))


#: Texts whose token counts are remembered (passages and pairs recur from ask to ask).
TOKEN_CACHE_SIZE = 20_000
_token_cache: OrderedDict[str, int] = OrderedDict()
_token_cache_lock = threading.Lock()


def text_tokens(texts: Sequence[str]) -> list[int]:
    """Each text's size in the shared token count (:func:`engramdb.platform.embedders.token_counts`),
    remembered per text: a budgeted ask counts its candidates, their sentences and its result, and
    the same passages come back for the next question, so most counts are already known."""
    with _token_cache_lock:
        known = [_token_cache.get(t) for t in texts]
    missing = list(dict.fromkeys(t for t, n in zip(texts, known, strict=True) if n is None))
    if missing:
        counted = dict(zip(missing, token_counts(missing), strict=True))
        with _token_cache_lock:
            _token_cache.update(counted)
            while len(_token_cache) > TOKEN_CACHE_SIZE:
                _token_cache.popitem(last=False)
        known = [counted[t] if n is None else n for t, n in zip(texts, known, strict=True)]
    return known  # type: ignore[return-value]


def dense_passage_rows(
    graph: Graph,
    vectors: VectorStore,
    embedder: Embedder,
    question: str,
    limit: int,
    query: Sequence[float] | None = None,
) -> list[dict[str, Any]]:
    """The ``limit`` passages most similar to ``question`` as chunk rows (``chunk_id``, ``doc_id``,
    ``title``, ``text``, ``score``), best first: the dense baseline's retrieval, and the passage
    tier every strategy's budgeted ranking ends with. ``query`` is the question's vector when the
    caller has it already."""
    query = embedder.embed_query(question) if query is None else query
    hits = vectors.search(CHUNK_COLLECTION, graph.namespace, query, limit)
    rows = graph.read("traversals/chunks_by_id", ids=[h.key for h in hits])
    scores = {h.key: h.score for h in hits}
    return [{**r, "score": scores.get(r["chunk_id"], 0.0)} for r in rows]

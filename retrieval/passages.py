"""Strategies ``bm25`` and ``dense``: plain passage retrieval, the baselines every method is measured against.

They return passages (chunks) as evidence with citations. With a chat model
configured, the same answer model as every other strategy reads the passages
and answers or says ``N/A``; offline, the answer is the best QA pair the
passages' chunks hold, or ``N/A`` below this memory's bar
(:mod:`engramdb.retrieval.evidence_answer`), as for every other strategy.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from engramdb.platform.graph import version_token
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import Decomposition
from engramdb.retrieval.evidence import citations, dense_passage_rows, evidence_tokens, passage_evidence
from engramdb.retrieval.evidence_answer import EvidenceAnswerer
from engramdb.retrieval.hop_retrieval import lucene_query
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.packing import PASSAGE_POOL, pack
from engramdb.retrieval.results import AskResult, PassageDetails
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy, require_question


class PassageRecipe(Recipe):
    top_k: int = Field(
        5, ge=1, le=100, description="Passages returned as evidence (with a budget: at least)."
    )


class PassageStrategy(AskStrategy):
    """Rank passages for the question; the LLM (if any) answers from the top ``top_k``."""

    recipe_type = PassageRecipe
    recipe: PassageRecipe
    #: Whether ranking embeds the question. When it does not (BM25), the offline answer's QA search
    #: needs the vector all the same: it is computed on the I/O pool while the ranking waits on Neo4j.
    ranks_by_vector: ClassVar[bool] = True

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        super().__init__(context, recipe)
        self.answerer = LLMAnswerer(context.chat_model) if context.chat_model is not None else None
        self.evidence_answerer = EvidenceAnswerer(context, budget=self.recipe.budget)

    @abstractmethod
    def passages(self, question: str, limit: int) -> list[dict[str, Any]]:
        """The top passages (chunk rows: chunk_id, doc_id, title, text, score), best first."""

    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        question = require_question(question)
        started = time.perf_counter()
        budget = self.recipe.budget
        offline = self.answerer is None
        vector = (
            IO_POOL.submit(self.context.embedder.embed_query, question)
            if offline and not self.ranks_by_vector
            else None
        )
        rows = self.passages(
            question, self.recipe.top_k if budget is None else max(self.recipe.top_k, PASSAGE_POOL)
        )
        timings = {"retrieve": time.perf_counter() - started}
        evidence = passage_evidence(rows)
        if budget is not None:  # top passages until the budget is full, the last one cut to whole sentences
            evidence = pack(evidence, budget, focus=[question])
        t0 = time.perf_counter()
        citing = IO_POOL.submit(citations, self.context.graph, evidence, rows)
        if self.answerer is not None:
            reply = self.answerer.answer_texts(question, [e.text for e in evidence])
            answer, answered_by = reply.text, reply.source
        else:
            query = None if vector is None else vector.result()
            version = memory_version_of(rows)
            answer = self.evidence_answerer.answer(question, evidence, query, version).text
            answered_by = "offline"
        timings["answer"] = time.perf_counter() - t0
        cited = citing.result()
        timings["total"] = time.perf_counter() - started
        return AskResult(
            question=question, answer=answer, evidence=evidence, citations=cited, decomposition=[],
            evidence_tokens=evidence_tokens(evidence), timings=timings, strategy=self.name,
            answered_by=answered_by,
            details=PassageDetails(method=self.name, scores=[{"chunk_id": e.id, "score": e.score} for e in evidence]),
        )  # fmt: skip


def memory_version_of(rows: Sequence[dict[str, Any]]) -> str | None:
    """The memory version the passage read returned beside its rows (BM25's and the dense passages'
    reads take it in the same transaction), or None when it did not (the N/A bar then reads it
    itself: one more round trip to Neo4j per ask)."""
    if not rows or "memory_version" not in rows[0]:
        return None
    return version_token(rows[0]["memory_epoch"], rows[0]["memory_version"])


@register_strategy
class BM25Passages(PassageStrategy):
    """Passages ranked by Lucene BM25 over their title and text."""

    name = "bm25"
    summary = "baseline: top passages by BM25 keyword search"
    ranks_by_vector = False

    def passages(self, question: str, limit: int) -> list[dict[str, Any]]:
        graph = self.context.graph
        query = lucene_query(question, graph.namespace, {"title": 1.0, "text": 1.0})
        if query is None:
            return []
        return graph.read("traversals/chunk_bm25", lucene=query, limit=limit)


@register_strategy
class DensePassages(PassageStrategy):
    """Passages ranked by cosine similarity of the configured embedder."""

    name = "dense"
    summary = "baseline: top passages by vector similarity"

    def passages(self, question: str, limit: int) -> list[dict[str, Any]]:
        ctx = self.context
        return dense_passage_rows(ctx.graph, ctx.vectors, ctx.embedder, question, limit)

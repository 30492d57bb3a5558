"""``ask``: decompose → chain beam search → grounded answer, with citations and timings.

An :class:`AskRecipe` (a small, frozen settings object in the spirit of
search recipes) fixes the knobs; the defaults are the paper's (B = 5, entity
top-k 20, reranked QA top-k 15).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from engramdb.platform.embedders import Embedder, count_tokens
from engramdb.platform.graph import Graph
from engramdb.platform.vectors import VectorStore
from engramdb.retrieval.answering import DEFAULT_NA_THRESHOLD, LLMAnswerer, OfflineAnswerer
from engramdb.retrieval.chain_search import BeamSettings, ChainSearch
from engramdb.retrieval.decomposition import (
    Decomposition,
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    make_decomposition,
)
from engramdb.retrieval.hop_retrieval import HopRetriever, HopSettings
from engramdb.retrieval.rerankers import Reranker
from engramdb.retrieval.results import AskResult, Chain, Citation, Evidence


@dataclass(frozen=True)
class AskRecipe:
    beam_width: int = 5
    qa_top_k: int = 15
    entity_top_k: int = 20
    dense_top_k: int = 30
    qa_per_entity: int = 40
    na_threshold: float = DEFAULT_NA_THRESHOLD


class Asker:
    """Answers questions from one namespace's memory."""

    def __init__(
        self,
        graph: Graph,
        vectors: VectorStore,
        embedder: Embedder,
        reranker: Reranker,
        *,
        decomposer: LLMDecomposer | OfflineDecomposer | None = None,
        answerer: LLMAnswerer | OfflineAnswerer | None = None,
        recipe: AskRecipe | None = None,
    ) -> None:
        self.recipe = recipe or AskRecipe()
        self.graph = graph
        self.decomposer = decomposer or OfflineDecomposer()
        self.offline_decomposer = OfflineDecomposer() if isinstance(self.decomposer, LLMDecomposer) else None
        self.answerer = answerer or OfflineAnswerer(self.recipe.na_threshold)
        hops = HopRetriever(
            graph, vectors, HopSettings(self.recipe.entity_top_k, self.recipe.qa_per_entity, self.recipe.dense_top_k)
        )
        self.search = ChainSearch(hops, reranker, embedder, BeamSettings(self.recipe.beam_width, self.recipe.qa_top_k))

    def ask(
        self,
        question: str,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        *,
        trace: bool = False,
    ) -> AskResult:
        if not isinstance(question, str) or not question.strip():
            raise DecompositionError("the question is empty")
        started = time.perf_counter()
        timings: dict[str, float] = {}
        decomp = self._decompose(question.strip(), decomposition, timings)
        outcome = self.search.run(decomp.sequences, trace=trace)
        timings.update({f"search_{k}": v for k, v in outcome.timings.items()})
        timings["search"] = sum(outcome.timings.values())
        chains = [c for per_sequence in outcome.chains for c in per_sequence]
        evidence = _evidence(chains)
        t0 = time.perf_counter()
        final = [seq[0] for seq in outcome.chains if seq]
        answer = self.answerer.answer(question, final, evidence)
        timings["answer"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        citations = self._citations(evidence)
        timings["citations"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started
        return AskResult(
            question=question, answer=answer.text, evidence=evidence, chains=chains, citations=citations,
            decomposition=[list(s) for s in decomp.sequences],
            evidence_tokens=count_tokens([e.text for e in evidence]),
            timings=timings, trace=outcome.trace, answered_by=self.answerer.name,
        )  # fmt: skip

    def _decompose(
        self, question: str, given: Decomposition | Sequence[Sequence[str]] | None, timings: dict[str, float]
    ) -> Decomposition:
        t0 = time.perf_counter()
        try:
            if isinstance(given, Decomposition):
                return given
            if given is not None:
                return make_decomposition(given)
            try:
                return self.decomposer.decompose(question)
            except DecompositionError:
                if self.offline_decomposer is None:
                    raise
                timings["decompose_fallback"] = 1.0
                return self.offline_decomposer.decompose(question)
        finally:
            timings["decompose"] = time.perf_counter() - t0

    def _citations(self, evidence: Sequence[Evidence]) -> list[Citation]:
        chunk_ids = sorted({e.chunk_id for e in evidence})
        if not chunk_ids:
            return []
        rows = {r["chunk_id"]: r for r in self.graph.read("traversals/citations", chunk_ids=chunk_ids)}
        return [
            Citation(e.qa_id, e.chunk_id, rows[e.chunk_id]["doc_id"], rows[e.chunk_id]["title"] or "",
                     rows[e.chunk_id]["source"] or "")  # fmt: skip
            for e in evidence
            if e.chunk_id in rows
        ]


def _evidence(chains: Sequence[Chain]) -> list[Evidence]:
    """Deduplicated QA pairs of the surviving chains, best score first."""
    best: dict[str, Evidence] = {}
    for chain in chains:
        for step in chain.steps:
            qa = step.qa
            if qa.qa_id not in best or best[qa.qa_id].score < step.score:
                best[qa.qa_id] = Evidence(qa.qa_id, qa.question, qa.answer_names, step.score, qa.doc_id, qa.chunk_id)
    return sorted(best.values(), key=lambda e: (-e.score, e.qa_id))


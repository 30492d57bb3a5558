"""Strategy ``chain`` (Panini / GSW): decompose → chain beam search over QA pairs → grounded answer.

The recipe's defaults are the paper's (beam width 5, entity top-k 20,
reranked QA top-k 15). Sub-questions come from the caller, the LLM
decomposer, or the offline rules; if the LLM's decomposition is unusable (or
the provider keeps failing) the offline rules take over and the result says so
(``decomposed_by``); the same holds for the answer (``answered_by``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pydantic import Field

from engramdb.retrieval.answering import DEFAULT_NA_THRESHOLD, LLMAnswerer, OfflineAnswerer
from engramdb.retrieval.chain_search import BeamSettings, ChainSearch
from engramdb.retrieval.decomposition import (
    Decomposition,
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    make_decomposition,
)
from engramdb.retrieval.evidence import citations, evidence_tokens
from engramdb.retrieval.hop_retrieval import HopRetriever, HopSettings
from engramdb.retrieval.results import AskResult, Chain, ChainDetails, Evidence, qa_evidence
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy


class ChainRecipe(Recipe):
    beam_width: int = Field(5, ge=1, le=64, description="Chains kept after each hop.")
    qa_top_k: int = Field(15, ge=1, le=200, description="Reranked QA pairs considered per hop.")
    entity_top_k: int = Field(20, ge=1, le=500, description="BM25 entities per hop.")
    dense_top_k: int = Field(30, ge=0, le=500, description="QA pairs by vector similarity per hop.")
    qa_per_entity: int = Field(40, ge=1, le=1000, description="QA pairs collected per matched entity.")
    na_threshold: float = Field(
        DEFAULT_NA_THRESHOLD, ge=0.0, le=1.0, description="Offline: below this chain score, N/A."
    )


@register_strategy
class ChainStrategy(AskStrategy):
    """Panini's chain beam search over the GSW question-answer pairs."""

    name = "chain"
    summary = "decompose, then chain beam search over QA pairs; answers only from them, else N/A"
    recipe_type = ChainRecipe
    recipe: ChainRecipe

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        super().__init__(context, recipe)
        r = self.recipe
        model = context.chat_model
        use_llm = model is not None and context.decomposition in ("auto", "llm")
        offline_answerer = OfflineAnswerer(r.na_threshold)
        self.decomposer: LLMDecomposer | OfflineDecomposer = (
            LLMDecomposer(model, fallback=OfflineDecomposer())
            if use_llm and model is not None
            else OfflineDecomposer()
        )
        self.answerer: LLMAnswerer | OfflineAnswerer = (
            LLMAnswerer(model, evidence_floor=r.na_threshold, fallback=offline_answerer)
            if model is not None
            else offline_answerer
        )
        hops = HopRetriever(
            context.graph, context.vectors, HopSettings(r.entity_top_k, r.qa_per_entity, r.dense_top_k)
        )
        self.search = ChainSearch(
            hops, context.reranker, context.embedder, BeamSettings(r.beam_width, r.qa_top_k)
        )

    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        if not isinstance(question, str) or not question.strip():
            raise DecompositionError("the question is empty")
        started = time.perf_counter()
        timings: dict[str, float] = {}
        decomp, decomposed_by = self._decompose(question.strip(), decomposition, timings)
        outcome = self.search.run(decomp.sequences, trace=trace)
        timings.update({f"search_{k}": v for k, v in outcome.timings.items()})
        timings["search"] = sum(outcome.timings.values())
        chains = [c for per_sequence in outcome.chains for c in per_sequence]
        evidence = chain_evidence(chains)
        t0 = time.perf_counter()
        final = [seq[0] for seq in outcome.chains if seq]
        answer = self.answerer.answer(question, final, evidence)
        timings["answer"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        cited = citations(self.context.graph, evidence)
        timings["citations"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started
        return AskResult(
            question=question, answer=answer.text, evidence=evidence, citations=cited,
            decomposition=[list(s) for s in decomp.sequences], evidence_tokens=evidence_tokens(evidence),
            timings=timings, strategy=self.name, answered_by=answer.source, decomposed_by=decomposed_by,
            details=ChainDetails(chains=chains, trace=outcome.trace),
        )  # fmt: skip

    def _decompose(
        self, question: str, given: Decomposition | Sequence[Sequence[str]] | None, timings: dict[str, float]
    ) -> tuple[Decomposition, str]:
        t0 = time.perf_counter()
        try:
            if isinstance(given, Decomposition):
                return given, "given"
            if given is not None:
                return make_decomposition(given), "given"
            decomp = self.decomposer.decompose(question)  # an unusable LLM reply falls back, and says so
            return decomp, decomp.source
        finally:
            timings["decompose"] = time.perf_counter() - t0


def chain_evidence(chains: Sequence[Chain]) -> list[Evidence]:
    """Deduplicated QA pairs of the surviving chains, best score first."""
    best: dict[str, tuple[float, Evidence]] = {}
    for chain in chains:
        for step in chain.steps:
            qa = step.qa
            if qa.qa_id not in best or best[qa.qa_id][0] < step.score:
                best[qa.qa_id] = (step.score, qa_evidence(qa, step.score))
    return sorted((e for _, e in best.values()), key=lambda e: (-e.score, e.id))

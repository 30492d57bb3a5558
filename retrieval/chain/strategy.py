"""Strategy ``chain`` (Panini / GSW): decompose → chain beam search over QA pairs → grounded answer.

The recipe's defaults are the paper's (beam width 5, entity top-k 20,
reranked QA top-k 15). Sub-questions come from the caller, the LLM
decomposer, or the offline rules; if the LLM's decomposition is unusable (or
the provider keeps failing) the offline rules take over and the result says so
(``decomposed_by``); the same holds for the answer (``answered_by``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from neo4j.exceptions import Neo4jError
from pydantic import Field

from engramdb.platform.timing import timed
from engramdb.retrieval.answering import NA, LLMAnswerer, OfflineAnswerer
from engramdb.retrieval.chain.search import BeamSettings, ChainSearch
from engramdb.retrieval.decomposition import (
    Comparison,
    Decomposition,
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    make_decomposition,
)
from engramdb.retrieval.evidence import citations, evidence_tokens, passage_evidence
from engramdb.retrieval.grounding import ground_qa_evidence, sentence_evidence, source_sentence
from engramdb.retrieval.hop_retrieval import HopRetriever, HopSettings
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.na_calibration import FALLBACK_THRESHOLD, NACalibration, calibrate, namespace_seed
from engramdb.retrieval.na_calibration import VERSION as CALIBRATION_VERSION
from engramdb.retrieval.packing import fill_budget, pack, passage_tier
from engramdb.retrieval.results import AskResult, Chain, ChainDetails, Evidence, ScoredQA, qa_evidence
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy

log = logging.getLogger("engramdb")
#: How many of the retrieved QA pairs an N/A result shows as near misses.
NEAR_MISSES = 5


class ChainRecipe(Recipe):
    beam_width: int = Field(5, ge=1, le=64, description="Chains kept after each hop.")
    qa_top_k: int = Field(15, ge=1, le=200, description="Reranked QA pairs considered per hop.")
    entity_top_k: int = Field(20, ge=1, le=500, description="BM25 entities per hop.")
    dense_top_k: int = Field(30, ge=0, le=500, description="QA pairs by vector similarity per hop.")
    qa_per_entity: int = Field(40, ge=1, le=1000, description="QA pairs collected per matched entity.")
    related_evidence: int = Field(
        2, ge=0, le=50, description="Evidence also holds this many best last-hop pairs about other entities."
    )
    source_sentences: bool = Field(
        True,
        description="Follow each QA pair in the evidence with the sentence of its passage it was drawn from "
        "(provenance a reader can check; off: the pairs alone, as in the paper).",
    )
    na_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Offline: N/A when the best chain's support (its weakest hop) is below this. Unset: calibrated on each memory from "
        "probes it provides (questions rebuilt from its QA pairs, and the same with invented names).",
    )
    na_false_accept: float = Field(
        0.2, gt=0.0, lt=1.0, description="Calibration: share of absent-name probes allowed an answer."
    )
    na_probes: int = Field(
        30, ge=0, le=1000, description="Calibration: answerable probes (and as many absent)."
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
        initial = r.na_threshold if r.na_threshold is not None else FALLBACK_THRESHOLD
        offline_answerer = OfflineAnswerer(initial)
        self.decomposer: LLMDecomposer | OfflineDecomposer = (
            LLMDecomposer(model, fallback=OfflineDecomposer())
            if use_llm and model is not None
            else OfflineDecomposer()
        )
        self.answerer: LLMAnswerer | OfflineAnswerer = (
            LLMAnswerer(model, evidence_floor=initial, fallback=offline_answerer)
            if model is not None
            else offline_answerer
        )
        hops = HopRetriever(
            context.graph, context.vectors, HopSettings(r.entity_top_k, r.qa_per_entity, r.dense_top_k)
        )
        self.search = ChainSearch(
            hops,
            context.reranker,
            context.embedder,
            BeamSettings(r.beam_width, r.qa_top_k, r.related_evidence),
        )
        self._offline_answerer = offline_answerer
        self._calibration: tuple[str, NACalibration] | None = None  # (memory fingerprint, calibration)
        self._lock = threading.Lock()

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
        budget = self.recipe.budget
        tier = passage_tier(self.context, question.strip()) if budget is not None else None
        decomp, decomposed_by = self._decompose(question.strip(), decomposition, timings)
        outcome = self.search.run(decomp.sequences, trace=trace)
        timings.update({f"search_{k}": v for k, v in outcome.timings.items()})
        timings["search"] = sum(outcome.timings.values())
        chains = [c for per_sequence in outcome.chains for c in per_sequence]
        related = [s for per_sequence in outcome.related for s in per_sequence]
        t0 = time.perf_counter()
        if budget is not None:
            evidence = self._packed(question, decomp, outcome.chains, related, budget, tier)
            timings["pack"] = time.perf_counter() - t0
        else:
            evidence = chain_evidence(outcome.chains, related)
            if self.recipe.source_sentences:
                evidence = ground_qa_evidence(self.context.graph, evidence)
                timings["ground"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        citing = IO_POOL.submit(timed, citations, self.context.graph, evidence)
        final = [seq[0] for seq in outcome.chains if seq]
        na = self._set_threshold() if chains else {}
        timings["calibrate"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if decomp.comparison is not None and isinstance(self.answerer, OfflineAnswerer):
            answer = self.answerer.answer_comparison(decomp.comparison, outcome.chains)
        else:
            answer = self.answerer.answer(question, final, evidence)
        timings["answer"] = time.perf_counter() - t0
        cited, timings["citations"] = citing.result()
        timings["total"] = time.perf_counter() - started
        notes, near = [], []
        if answer.text == NA:
            if decomp.comparison is not None:
                supports = [
                    max(seq, key=lambda c: c.score).support if seq else None for seq in outcome.chains
                ]
            else:
                supports = [max(final, key=lambda c: c.score).support if final else None]
            notes.append(
                na_note(supports, na.get("threshold"), bool(na.get("calibration")), decomp.comparison)
            )
            near = evidence[:NEAR_MISSES]
        return AskResult(
            question=question, answer=answer.text, evidence=evidence, citations=cited,
            decomposition=[list(s) for s in decomp.sequences], evidence_tokens=evidence_tokens(evidence),
            timings=timings, strategy=self.name, answered_by=answer.source, decomposed_by=decomposed_by,
            details=ChainDetails(chains=chains, trace=outcome.trace, na=na), near_misses=near, notes=notes,
        )  # fmt: skip

    def _packed(
        self,
        question: str,
        decomp: Decomposition,
        per_sequence: Sequence[Sequence[Chain]],
        related: Sequence[ScoredQA],
        budget: int,
        tier: Future[list[Evidence]] | None = None,
    ) -> list[Evidence]:
        """Evidence a reader can follow, within ``budget`` tokens: each sequence's best chain hop by
        hop (every pair followed by its source sentence), then the other chains, then the passages
        the chains went through, then passages found for the question and its sub-questions, and
        last the pairs that belong to no chain."""
        ordered = reading_order(per_sequence)
        steps = [step for chain in ordered for step in chain.steps]
        chunk_ids = list(dict.fromkeys(s.qa.chunk_id for s in steps if s.qa.chunk_id))
        rows = {r["chunk_id"]: r for r in self.context.graph.read("traversals/chunks_by_id", ids=chunk_ids)}
        units, lead = reading_units(ordered, sum(1 for seq in per_sequence if seq), rows,
                                    self.recipe.source_sentences)  # fmt: skip
        passages = passage_evidence([rows[c] for c in chunk_ids if c in rows])
        best_steps = [step for chain in per_sequence if chain for step in chain[0].steps]
        queries = [
            question,
            *(s.sub_question for s in best_steps),
            *(q for seq in decomp.sequences for q in seq),
        ]
        queries = [q for q in queries if "<ENTITY" not in q]
        tail = [qa_evidence(s.qa, s.score) for s in related]
        answers = [step.answer_name for chain in ordered[:2] for step in chain.steps]
        packed = fill_budget(
            self.context, budget, units, queries, focus=answers, passages=passages, tier=tier, lead=lead
        )
        if not tail or budget - evidence_tokens(packed) < 6:
            return packed
        return pack([*packed, *tail], budget, focus=[question])

    # N/A threshold -----------------------------------------------------------------------
    def _set_threshold(self) -> dict[str, Any]:
        """Point both answerers at this memory's threshold; returns what the result reports about it."""
        if self.recipe.na_threshold is not None:
            threshold, report = self.recipe.na_threshold, {}
        else:
            calibration = self.calibration()
            threshold, report = calibration.threshold, calibration.summary()
        self._offline_answerer.na_threshold = threshold
        if isinstance(self.answerer, LLMAnswerer):
            self.answerer.evidence_floor = threshold
        return {"threshold": threshold, "calibration": report}

    def calibration_key(self) -> str:
        r = self.recipe
        return (
            f"v{CALIBRATION_VERSION}|{self.context.reranker.name}|b{r.beam_width}|k{r.qa_top_k}|e{r.entity_top_k}"
            f"|d{r.dense_top_k}|p{r.qa_per_entity}|n{r.na_probes}|f{r.na_false_accept}"
        )

    def calibration(self) -> NACalibration:
        """This memory's N/A calibration: cached while the memory is unchanged, stored in the graph
        for other processes, computed from probes when neither is current."""
        graph = self.context.graph
        fingerprint = graph.memory_version()
        with self._lock:
            if self._calibration is not None and self._calibration[0] == fingerprint:
                return self._calibration[1]
            key = self.calibration_key()
            stored = graph.read("chain/get_calibration", key=key)
            found = None
            if stored and stored[0]["fingerprint"] == fingerprint:
                found = NACalibration.from_json(stored[0]["report"] or "")
            if found is None:
                found = calibrate(graph, self.context.embedder, self.best_chains, probes=self.recipe.na_probes,
                                  false_accept=self.recipe.na_false_accept, seed=namespace_seed(graph.namespace))  # fmt: skip
                try:
                    graph.write(
                        "chain/put_calibration", key=key, fingerprint=fingerprint, report=found.to_json()
                    )
                except Neo4jError as exc:  # a read-only user still gets answers; only the cache is lost
                    log.warning("could not store the chain N/A calibration: %s", exc)
            self._calibration = (fingerprint, found)
            return found

    def best_chains(self, sequences: Sequence[tuple[str, ...]]) -> list[tuple[float, str]]:
        """Each sequence's best chain as (support, answer), searched as independent questions; the
        support (weakest hop) is what the N/A threshold is compared with."""
        out = []
        for chains in self.search.run(sequences).chains:
            best = max(chains, key=lambda c: c.score, default=None)
            out.append((best.support, best.answer_name) if best is not None else (0.0, ""))
        return out

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


def na_note(
    supports: Sequence[float | None], threshold: float | None, calibrated: bool, comparison: Comparison | None
) -> str:
    """Why the answer is N/A, in words a user reads. ``supports``: the best chain's support (its
    weakest hop) for each sequence, None where no chain reached the last sub-question."""
    head = "no evidence in memory supports an answer: "
    tail = "; what was retrieved is shown as near misses"
    if not supports or any(s is None for s in supports):
        what = "one of the compared items" if comparison is not None and len(supports) > 1 else "the question"
        return head + f"no chain of QA pairs answered every sub-question of {what}" + tail
    weakest = min(s for s in supports if s is not None)
    if comparison is not None and threshold is not None and weakest >= threshold:
        return head + f"the answers found for {', '.join(comparison.options)} could not be compared" + tail
    bar = "this memory's calibrated threshold" if calibrated else "the threshold"
    where = f" {threshold:.2f}" if threshold is not None else ""
    return head + f"the best chain's weakest hop scored {weakest:.2f}, below {bar}{where}" + tail


def reading_order(per_sequence: Sequence[Sequence[Chain]]) -> list[Chain]:
    """Chains in the order a reader follows them: each sequence's best chain, then the others by score."""
    ordered = [seq[0] for seq in per_sequence if seq]
    return ordered + sorted((c for seq in per_sequence for c in seq[1:]), key=lambda c: -c.score)


def reading_units(
    ordered: Sequence[Chain], best_chains: int, rows: dict[str, dict[str, Any]], sentences: bool
) -> tuple[list[Evidence], int]:
    """The chains in reading order as evidence units (each pair, then with ``sentences`` its source
    sentence from its chunk's row), and how many of them lead (come before any passage).

    The lead runs to the last unit of a step that one of the first ``best_chains`` chains (each
    sequence's best) took. Chains grown from one beam share their first steps, so the lead also
    holds the other chains that go on from the best chain's first hop, up to the last of them:
    the alternatives for the hops after it. Counting the best chains alone was measured (session
    27, retrieval-only copies of one memory): it lost 1 to 6 questions at some budget on every
    question set (sets B, C, MuSiQue dev at every budget; the wide silver set 56.7 -> 51.7% at 128)
    and gained on one row only, so the alternatives stay in the lead."""
    best = {id(step) for chain in ordered[:best_chains] for step in chain.steps}
    units: list[Evidence] = []
    lead = 0
    for chain in ordered:
        for step in chain.steps:
            units.append(qa_evidence(step.qa, step.score))
            row = rows.get(step.qa.chunk_id)
            if sentences and row:
                sentence = source_sentence(step.qa.question, step.qa.answer_names, row["text"] or "")
                if sentence:
                    units.append(sentence_evidence(sentence, step.qa, step.score))
            if id(step) in best:
                lead = len(units)
    return units, lead


def chain_evidence(
    per_sequence: Sequence[Sequence[Chain]], related: Sequence[ScoredQA] = ()
) -> list[Evidence]:
    """The QA pairs of the surviving chains in reading order (each sequence's best chain hop by
    hop, then the other chains), each pair once, then the related last-hop pairs (the same
    question about other entities), which belong to no chain and so come last."""
    seen: set[str] = set()
    out: list[Evidence] = []
    for chain in reading_order(per_sequence):
        for step in chain.steps:
            if step.qa.qa_id not in seen:
                seen.add(step.qa.qa_id)
                out.append(qa_evidence(step.qa, step.score))
    for item in sorted(related, key=lambda s: -s.score):
        if item.qa.qa_id not in seen:
            seen.add(item.qa.qa_id)
            out.append(qa_evidence(item.qa, item.score))
    return out

"""An offline answer from any strategy's evidence: the best QA pair its chunks hold, or N/A.

Why shared: without a chat model, passages, gists and cluster summaries have
no reader. But every chunk in memory carries the QA pairs its extraction
produced, so the chunks a strategy chose as evidence hold candidate answers.
The reranker (the same one chain search uses: content overlap, answer type)
picks the pair that best fits the question; its answer is the offline answer
when it scores above this memory's N/A bar, and N/A below it.

The bar is calibrated on the memory itself, never on a question set, from
questions whose answer memory does not hold, asked the way users ask: chain
search's absent probes (a stored pair reworded in the decomposers' templates
about an invented name; two hops composed into one question, "Where was the
author of <invented> born?"), each given the passages dense search finds for
it. The scores a wrong answer reaches there set the bar (a quantile of them).
Asking stored pairs' own questions against other documents' passages instead
was measured to put the bar far too high: real questions match the extractor's
wording less well than its own questions do, so on the MuSiQue memory the
median answerable question's best pair scored under that bar, while wrong
answers to user-worded absent questions scored lower still. A memory too small
for enough probes falls back to that older draw. The bar is recomputed when
the memory changes.

With a token budget, each probe is given what dense passages fill that budget
(the packer's cut), not five whole passages: the answer is picked from a
budget's worth of chunks, so its bar is drawn from as many. A bar drawn from
five passages holds two or three times the candidate pairs a 128-token answer
sees, so it sat above what such answers reach and sent answerable questions
to N/A.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engramdb.platform.embedders import embed_queries
from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION
from engramdb.platform.vectors import VectorHit
from engramdb.retrieval.evidence import dense_passage_rows, passage_evidence
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.na_calibration import MIN_PROBES, build_probes, composed_question, namespace_seed
from engramdb.retrieval.packing import PASSAGE_POOL, pack
from engramdb.retrieval.results import NA, Evidence, QACandidate
from engramdb.retrieval.strategy import AskContext

#: Quantile of the absent-answer scores that is the N/A bar, unless a strategy sets its own.
DEFAULT_NA_QUANTILE = 0.5
#: Probes drawn from memory to set the bar. The bar is a median of their scores, so its sample's
#: luck shows: over set B's corpus (``benchmarks/calibrate_na.py --passage-bar --corpus ...``) five
#: draws of 40 probes gave bars with a standard deviation of 0.048, five of 120 0.017, for 1.6 s per
#: calibration against 1.0 s.
DEFAULT_NA_SAMPLE = 120
#: Passages each probe is asked against.
DEFAULT_PASSAGES = 5


@dataclass(frozen=True)
class EvidenceAnswer:
    """The offline answer, the pair it came from (if any), its score and the bar it was held to."""

    text: str
    qa: QACandidate | None
    score: float | None
    threshold: float


class EvidenceAnswerer:
    """Answers from the QA pairs of the chunks a strategy's evidence cites."""

    def __init__(
        self,
        context: AskContext,
        *,
        passages: int = DEFAULT_PASSAGES,
        na_sample: int = DEFAULT_NA_SAMPLE,
        na_quantile: float = DEFAULT_NA_QUANTILE,
        budget: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.context = context
        self.passages = passages
        self.na_sample = na_sample
        self.na_quantile = na_quantile
        self.budget = budget  # the strategy's evidence-token budget: the probes get as much
        self.seed = namespace_seed(context.namespace) if seed is None else seed  # another seed, another draw
        self._bar: tuple[object, float] | None = None  # (memory version, bar)
        self._lock = threading.Lock()

    def answer(
        self,
        question: str,
        evidence: Sequence[Evidence],
        query: np.ndarray | None = None,
        version: str | None = None,
    ) -> EvidenceAnswer:
        """The answer from ``evidence``: one search of its chunks' QA pairs (``query`` is the
        question's vector when the strategy has it). ``version`` is the memory version when the
        strategy has just read it (spares the bar's freshness check)."""
        chunk_ids = list(dict.fromkeys(c for e in evidence for c in e.chunk_ids))
        # without the version, the bar's freshness check (one read) waits on Neo4j while this thread reranks
        bar = IO_POOL.submit(self.na_threshold) if version is None else None
        best = self.best_qa(question, chunk_ids, query)
        threshold = self.na_threshold(version) if bar is None else bar.result()
        if best is None:
            return EvidenceAnswer(NA, None, None, threshold)
        qa, score = best
        text = ", ".join(qa.answer_names) if score >= threshold and qa.answer_names else NA
        return EvidenceAnswer(text, qa, score, threshold)

    def best_qa(
        self, question: str, chunk_ids: Sequence[str], query: np.ndarray | None = None
    ) -> tuple[QACandidate, float] | None:
        """The reranker's best QA pair extracted from these chunks, with its score."""
        if not chunk_ids:
            return None
        ctx = self.context
        query = ctx.embedder.embed_query(question) if query is None else query
        return self._best(question, qa_candidates(ctx, np.asarray(query, dtype=np.float32), chunk_ids))

    def _best(self, question: str, candidates: Sequence[QACandidate]) -> tuple[QACandidate, float] | None:
        scored = self.context.reranker.score(question, list(candidates))
        return (scored[0].qa, float(scored[0].score)) if scored else None

    def na_threshold(self, version: str | None = None) -> float:
        """This memory's N/A bar (1.0, always N/A, for a memory without QA pairs); cached per memory
        version (``version`` when the caller knows it, else read)."""
        version = self.context.graph.memory_version() if version is None else version
        with self._lock:
            if self._bar is not None and self._bar[0] == version:
                return self._bar[1]
            bar = self._calibrate()
            self._bar = (version, bar)
            return bar

    def _calibrate(self) -> float:
        scores = self._absent_scores()
        if len(scores) < MIN_PROBES:
            scores = self._other_document_scores()
        return float(np.quantile(scores, self.na_quantile)) if scores else 1.0

    def _absent_scores(self) -> list[float]:
        """The best pair's score for each user-worded absent probe, over its dense passages."""
        ctx = self.context
        probes = build_probes(ctx.graph, ctx.embedder, self.na_sample, self.seed).absent
        asked = [q for p in probes if (q := composed_question(p.sequence))]
        scores = []
        for question, vector in zip(asked, embed_queries(ctx.embedder, asked), strict=True):
            query = np.asarray(vector, dtype=np.float32)
            best = self.best_qa(question, self._probe_chunks(question, query), query)
            scores.append(best[1] if best else 0.0)
        return scores

    def _probe_chunks(self, question: str, query: np.ndarray) -> list[str]:
        """The chunks a probe is answered from: its top dense passages, or with a budget the ones
        (whole or shortened) that the packer fits into it."""
        ctx = self.context
        if self.budget is None:
            return [h.key for h in ctx.vectors.search(CHUNK_COLLECTION, ctx.namespace, query, self.passages)]
        rows = dense_passage_rows(ctx.graph, ctx.vectors, ctx.embedder, question, PASSAGE_POOL, query)
        packed = pack(passage_evidence(rows), self.budget, focus=[question])
        return list(dict.fromkeys(c for e in packed for c in e.chunk_ids))

    def _other_document_scores(self) -> list[float]:
        """Stored pairs' own questions against the best passages of other documents."""
        ctx = self.context
        sample = ctx.graph.read("traversals/qa_sample", limit=self.na_sample)
        vectors = ctx.vectors.get_vectors(QA_COLLECTION, ctx.namespace, [s["id"] for s in sample])
        scores = []
        for item in sample:
            vector = vectors.get(item["id"])
            if vector is None:
                continue
            hits = ctx.vectors.search(CHUNK_COLLECTION, ctx.namespace, vector, self.passages + 10)
            others = [h.key for h in hits if h.payload.get("doc_id") != item["doc_id"]][: self.passages]
            best = self.best_qa(item["question"], others, vector)
            scores.append(best[1] if best else 0.0)
        return scores


#: Most QA pairs read per passage for the offline answer (MuSiQue passages hold 10 on average, 62 at most).
QA_PER_PASSAGE = 500


def qa_candidates(
    context: AskContext, vector: np.ndarray, chunk_ids: Sequence[str], via: str = "evidence"
) -> list[QACandidate]:
    """The QA pairs of these passages, each with its cosine to ``vector``: one filtered vector
    search (the QA points carry question, answers and types in their payload), so no graph read
    sits on the answer's path (measured: a graph read of the pairs and a second fetch of their
    vectors cost about 10 ms more per ask)."""
    if not chunk_ids:
        return []
    hits = context.vectors.search(
        QA_COLLECTION, context.namespace, vector, QA_PER_PASSAGE * len(chunk_ids),
        where={"chunk_id": list(chunk_ids)},
    )  # fmt: skip
    return [_candidate(h, via) for h in hits]


def _candidate(hit: VectorHit, via: str) -> QACandidate:
    p = hit.payload
    return QACandidate(
        qa_id=hit.key, question=p.get("question") or "", answer_ids=tuple(p.get("answer_entity_ids") or ()),
        answer_names=tuple(p.get("answer_names") or ()), answer_types=tuple(p.get("answer_types") or ()),
        question_entity_ids=tuple(p.get("question_entity_ids") or ()), doc_id=p.get("doc_id") or "",
        chunk_id=p.get("chunk_id") or "", dense_score=float(hit.score), via=(via,),
    )  # fmt: skip

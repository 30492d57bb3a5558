"""An offline answer from any strategy's evidence: the best QA pair its chunks hold, or N/A.

Why shared: without a chat model, passages, gists and cluster summaries have
no reader. But every chunk in memory carries the QA pairs its extraction
produced, so the chunks a strategy chose as evidence hold candidate answers.
The reranker (the same one chain search uses: content overlap, answer type)
picks the pair that best fits the question; its answer is the offline answer
when it scores above this memory's N/A bar, and N/A below it.

The bar is calibrated on the memory itself, never on a question set: QA
pairs sampled evenly from memory are asked against the best passages *of
other documents* (where their answer is not), and the scores a wrong answer
reaches there set the bar (a quantile of them). It is recomputed when the
memory changes.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION
from engramdb.retrieval.results import NA, Evidence, QACandidate
from engramdb.retrieval.strategy import AskContext

#: Quantile of the withheld-answer scores that is the N/A bar, unless a strategy sets its own.
DEFAULT_NA_QUANTILE = 0.5
#: QA pairs sampled from memory to set the bar.
DEFAULT_NA_SAMPLE = 40
#: Passages of other documents each sampled question is asked against.
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
    ) -> None:
        self.context = context
        self.passages = passages
        self.na_sample = na_sample
        self.na_quantile = na_quantile
        self._bar: tuple[object, float] | None = None  # (memory version, bar)
        self._lock = threading.Lock()

    def answer(
        self, question: str, evidence: Sequence[Evidence], query: np.ndarray | None = None
    ) -> EvidenceAnswer:
        chunk_ids = list(dict.fromkeys(c for e in evidence for c in e.chunk_ids))
        threshold = self.na_threshold()
        best = self.best_qa(question, chunk_ids, query)
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
        rows = ctx.graph.read("traversals/qa_pairs_of_chunks", chunk_ids=list(chunk_ids))
        if not rows:
            return None
        query = ctx.embedder.embed_query(question) if query is None else query
        vectors = ctx.vectors.get_vectors(QA_COLLECTION, ctx.namespace, [r["qa_id"] for r in rows])
        candidates = [
            QACandidate(
                qa_id=r["qa_id"], question=r["question"], answer_ids=tuple(r["answer_ids"]),
                answer_names=tuple(r["answer_names"]), answer_types=tuple(t or "" for t in r["answer_types"]),
                question_entity_ids=tuple(r["question_entity_ids"] or ()), doc_id=r["doc_id"], chunk_id=r["chunk_id"],
                verb_phrase=r["verb_phrase"] or "", via=("evidence",),
                dense_score=float(np.dot(vectors[r["qa_id"]], query)) if r["qa_id"] in vectors else None,
            )
            for r in rows
        ]  # fmt: skip
        scored = ctx.reranker.score(question, candidates)
        return (scored[0].qa, float(scored[0].score)) if scored else None

    def na_threshold(self) -> float:
        """This memory's N/A bar (1.0, always N/A, for a memory without QA pairs); cached per memory version."""
        version = self.context.graph.memory_version()
        with self._lock:
            if self._bar is not None and self._bar[0] == version:
                return self._bar[1]
            bar = self._calibrate()
            self._bar = (version, bar)
            return bar

    def _calibrate(self) -> float:
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
        return float(np.quantile(scores, self.na_quantile)) if scores else 1.0

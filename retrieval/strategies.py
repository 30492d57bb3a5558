"""Retrieval strategies evaluated side by side: engramdb's own and the baselines.

Every strategy turns an :class:`EvalItem` into a :class:`StrategyOutput`
(answer or None, evidence texts, ranked passage ids, timing) and registers
itself by name with :func:`register`, so ``engramdb eval --strategy NAME``
treats them all the same way.

* ``chain`` — Panini chain beam search over QA pairs (the default ``ask``).
* ``bm25`` — Lucene BM25 over passages, top 5.
* ``dense`` — the configured embedder over passages, top 5.

Baselines have no reader offline (their answer is None, and the table shows
only retrieval metrics); with an LLM configured they answer from their
passages with the same answer model as ``chain``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from langchain_core.language_models import BaseChatModel

from engramdb.ingestion.pipeline import CHUNK_COLLECTION, passage_text
from engramdb.platform.embedders import count_tokens
from engramdb.platform.memory import Memory
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import Decomposition, from_musique
from engramdb.retrieval.eval_data import EvalItem
from engramdb.retrieval.hop_retrieval import lucene_query

PASSAGE_TOP_K = 5


@dataclass(frozen=True)
class StrategyOutput:
    answer: str | None
    evidence_texts: list[str]
    passage_ids: list[str]  # document ids, best first
    evidence_tokens: int
    seconds: float
    extra: dict[str, object] | None = None


class Strategy(Protocol):
    name: str

    def run(self, item: EvalItem) -> StrategyOutput: ...


@dataclass(frozen=True)
class EvalContext:
    memory: Memory
    decomposition: str = "gold"  # gold | llm | offline
    chat_model: BaseChatModel | None = None  # answers (all strategies) and decomposes (chain, "llm")

    @property
    def answerer(self) -> LLMAnswerer | None:
        return LLMAnswerer(self.chat_model) if self.chat_model is not None else None


StrategyFactory = Callable[[EvalContext], Strategy]
REGISTRY: dict[str, StrategyFactory] = {}


def register(name: str) -> Callable[[StrategyFactory], StrategyFactory]:
    def add(factory: StrategyFactory) -> StrategyFactory:
        REGISTRY[name] = factory
        return factory

    return add


def make_strategy(name: str, context: EvalContext) -> Strategy:
    from engramdb.platform.errors import InputError

    if name not in REGISTRY:
        raise InputError(f"unknown strategy {name!r}; available: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name](context)


@register("chain")
class ChainStrategy:
    """Panini's RICR over the GSW QA pairs."""

    name = "chain"

    def __init__(self, context: EvalContext) -> None:
        self.context = context
        mode = "offline" if context.decomposition in ("gold", "offline") else "llm"
        self.asker = context.memory.make_asker(chat_model=context.chat_model, decomposition=mode)

    def _decomposition(self, item: EvalItem) -> Decomposition | None:
        if self.context.decomposition == "gold":
            if not item.gold_decomposition:
                from engramdb.platform.errors import InputError

                raise InputError(f"item {item.id} has no gold decomposition; use --decomposition offline or llm")
            return from_musique(item.gold_decomposition)
        return None  # the asker's decomposer (LLM if configured, else offline)

    def run(self, item: EvalItem) -> StrategyOutput:
        started = time.perf_counter()
        result = self.asker.ask(item.question, self._decomposition(item))
        seconds = time.perf_counter() - started
        passages = [e.doc_id for e in result.evidence]
        return StrategyOutput(
            answer=result.answer, evidence_texts=[e.text for e in result.evidence], passage_ids=passages,
            evidence_tokens=result.evidence_tokens, seconds=seconds,
            extra={"decomposition": result.decomposition, "answered_by": result.answered_by},
        )  # fmt: skip


class _PassageStrategy(ABC):
    """Retrieve passages, optionally let the answer model read them."""

    name = "passages"

    def __init__(self, context: EvalContext) -> None:
        self.context = context
        self.answerer = context.answerer

    @abstractmethod
    def passages(self, question: str) -> list[dict[str, str]]:
        """The top passages (chunk rows: doc_id, title, text) for a question."""

    def run(self, item: EvalItem) -> StrategyOutput:
        started = time.perf_counter()
        rows = self.passages(item.question)
        texts = [passage_text(r["title"] or "", r["text"]) for r in rows]
        answer = self.answerer.answer_texts(item.question, texts).text if self.answerer else None
        seconds = time.perf_counter() - started
        return StrategyOutput(answer, texts, [r["doc_id"] for r in rows], count_tokens(texts), seconds)


@register("bm25")
class BM25Passages(_PassageStrategy):
    """Top-5 passages by Lucene BM25 over title and text."""

    name = "bm25"

    def passages(self, question: str) -> list[dict[str, str]]:
        graph = self.context.memory.graph
        query = lucene_query(question, graph.namespace, {"title": 1.0, "text": 1.0})
        if query is None:
            return []
        return graph.read("traversals/chunk_bm25", lucene=query, limit=PASSAGE_TOP_K)


@register("dense")
class DensePassages(_PassageStrategy):
    """Top-5 passages by cosine similarity of the configured embedder."""

    name = "dense"

    def passages(self, question: str) -> list[dict[str, str]]:
        memory = self.context.memory
        vector = memory.embedder.embed_query(question)
        hits = memory.vectors.search(CHUNK_COLLECTION, memory.namespace, vector, PASSAGE_TOP_K)
        return memory.graph.read("traversals/chunks_by_id", ids=[h.key for h in hits])

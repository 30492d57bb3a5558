"""Strategy ``cluster`` (CAM's Prune-and-Grow) over the hierarchy of the ``clusters`` stage.

1. **Localise**: the top-s nodes of *all* levels by cosine with the question
   (cluster summaries from the ``clusters`` collection and chunks from the
   ``chunks`` collection, merged by score; a cluster of one chunk shares its
   chunk's vector, so only the chunk is searched for).
2. **Prune**: keep the useful candidates. With a chat model, the model picks
   them (our own prompt); offline, a candidate is kept when its cosine is at
   least ``keep_ratio`` times the best first-round match, a bar relative to
   the question, since absolute cosines vary from question to question.
3. **Grow**: the kept nodes' same-level neighbours (``SIMILAR``) and children
   (``HAS_MEMBER``) are the next candidates; repeat until nothing new is kept
   or ``max_rounds``. Every round's candidates and kept nodes are in the
   result's details (``ask --trace`` prints them).
4. **Answer** from the active memory: the best ``passages`` chunks (active
   chunks and the chunks under active clusters) and the best ``summaries``
   cluster summaries (of clusters of more than one chunk) are the evidence (a summary is cited by the chunks its
   text comes from; one spanning documents has an empty ``doc_id``). With a chat model it answers from them
   or says N/A. Offline, the answer is the best QA pair (by the configured
   reranker) extracted from the evidence passages, and N/A when it scores
   below a threshold the memory itself gives: the ``na_quantile`` quantile of
   the best scores that questions whose answer memory does not hold reach over
   the passages found for them (``retrieval/evidence_answer.py``), i.e. how well
   a question whose answer is *not* in the evidence still seems to match. It is
   recomputed when the memory changes and never fitted to any evaluation question.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from pydantic import Field
from rich.console import Console
from rich.markup import escape

from engramdb.ingestion.stages.clusters import CLUSTER_COLLECTION, SUMMARY_KINDS
from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION, passage_text
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import Decomposition
from engramdb.retrieval.evidence import citations, evidence_tokens
from engramdb.retrieval.evidence_answer import DEFAULT_NA_SAMPLE, EvidenceAnswerer
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.packing import PASSAGE_POOL, fill_budget, passage_tier
from engramdb.retrieval.render import MAX_CANDIDATES_SHOWN, register_renderer
from engramdb.retrieval.results import AskResult, Details, Evidence
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy, require_question

#: Chunks read under each active cluster when the activated chunks are fewer than the evidence needs.
FILL_PER_CLUSTER = 30
#: Share of a budget that dense search's surest passages fill before Prune-and-Grow's passages take
#: turns with the rest. Its members are passages like dense's, and from the first turn on they pushed
#: dense's third to fifth passages out at 512 tokens; with half the budget theirs, over the nine
#: question sets +5 / -1 question-cells (C@512, W@128, W@512, A2@128, B3@512 up; A3@256 down, level
#: with dense). The same share for every strategy lost 28 cells and gained 14 (diffusion at 512 most).
DENSE_SHARE = 0.5

SELECT_PROMPT = """You help answer a question from a hierarchical memory. Below are numbered memory items: \
summaries of groups of passages (level 1 and up) and single passages (level 0).
Pick every item that could help answer the question, directly or as a step towards the answer \
(for example an item about an entity the question depends on). Reply with the numbers of the items \
you pick, separated by commas, or with 0 if none helps."""


class ClusterRecipe(Recipe):
    top_s: int = Field(5, ge=1, le=100, description="Nodes of all levels found by similarity first.")
    keep_ratio: float = Field(
        0.85, ge=0.0, le=1.0, description="Offline prune: keep nodes scoring >= ratio x best."
    )
    max_rounds: int = Field(3, ge=0, le=20, description="Grow rounds after the first selection.")
    max_active: int = Field(40, ge=1, le=1000, description="Cap on activated nodes.")
    passages: int = Field(5, ge=1, le=50, description="Chunks given as evidence.")
    summaries: int = Field(2, ge=0, le=20, description="Cluster summaries given as evidence.")
    na_quantile: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Offline: quantile of the absent-answer scores that is the N/A bar.",
    )
    na_sample: int = Field(
        DEFAULT_NA_SAMPLE, ge=5, le=1000, description="Offline: probes drawn from memory for the N/A bar."
    )


@dataclass
class Node:
    """A memory node as Prune-and-Grow sees it: a chunk (level 0) or a cluster."""

    id: str
    level: int
    score: float
    via: str = "similarity"  # "similarity" (first round), "neighbour" or "child" of an active node
    title: str = ""
    text: str = ""
    doc_id: str = ""
    size: int = 1  # members of a cluster (a cluster of one chunk stands for that chunk)


@dataclass
class ClusterRound:
    """One Prune-and-Grow round: the candidates looked at and the ones kept, as (id, level, score, text)."""

    round: int
    candidates: list[tuple[str, int, float, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


@dataclass
class ClusterDetails(Details):
    """Prune-and-Grow: every round, the active nodes and how the answer was chosen."""

    kind: ClassVar[str] = "cluster"
    rounds: list[ClusterRound] = field(default_factory=list)
    active: list[tuple[str, int, float]] = field(default_factory=list)
    best_qa: str = ""
    best_qa_score: float | None = None
    na_threshold: float | None = None


@register_strategy
class ClusterStrategy(AskStrategy):
    """CAM Prune-and-Grow over cluster summaries and chunks."""

    name = "cluster"
    summary = "Prune-and-Grow over the cluster hierarchy (CAM): similarity, then neighbours and children"
    recipe_type = ClusterRecipe
    recipe: ClusterRecipe

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        super().__init__(context, recipe)
        for collection in (CHUNK_COLLECTION, CLUSTER_COLLECTION, QA_COLLECTION):
            context.vectors.ensure_collection(collection, context.embedder.dim)
        self.answerer = LLMAnswerer(context.chat_model) if context.chat_model is not None else None
        r = self.recipe
        self.evidence_answerer = EvidenceAnswerer(
            context, passages=r.passages, na_sample=r.na_sample, na_quantile=r.na_quantile, budget=r.budget
        )

    # ------------------------------------------------------------------ ask
    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        question = require_question(question)
        started = time.perf_counter()
        timings: dict[str, float] = {}
        query = self.context.embedder.embed_query(question)
        tier = passage_tier(self.context, question, query) if self.recipe.budget is not None else None
        details = ClusterDetails()
        active = self._prune_and_grow(question, query, details, trace)
        timings["retrieve"] = time.perf_counter() - started
        passages, summaries = self._evidence_nodes(active, query)
        passage_units, summary_units = self._passage_evidence(passages), self._summary_evidence(summaries)
        evidence = passage_units + summary_units
        if tier is not None:
            # member passages taken in turn with passages by similarity; the summaries fill the room
            # where those passages' whole units end (a summary taking its turn beside the passages
            # pushed out dense search's last ones: on copies of the 4.0 home, in questions at
            # 128 / 256 / 512, set A 0 / 0 / 0, set B +2 / +1 / 0, set C +1 / +1 / 0, set W +4 / 0 / 0
            # with them in reserve; MuSiQue dev +2 / +1 / 0, and B2, run after, -2 / -1 / 0)
            evidence = fill_budget(
                self.context, self.recipe.budget or 0, passage_units, [question], tier=tier,
                reserve=summary_units, dense_share=DENSE_SHARE,
            )  # fmt: skip
        citing = IO_POOL.submit(citations, self.context.graph, evidence, tier.result() if tier else [])
        t0 = time.perf_counter()
        answer = self._answer(question, query, evidence, passages, details)
        timings["answer"] = time.perf_counter() - t0
        details.active = [(n.id, n.level, round(n.score, 4)) for n in sorted(active.values(), key=_rank)]
        cited = citing.result()
        timings["total"] = time.perf_counter() - started
        return AskResult(
            question=question, answer=answer, evidence=evidence, citations=cited, decomposition=[],
            evidence_tokens=evidence_tokens(evidence), timings=timings, strategy=self.name,
            answered_by="llm" if self.answerer else "offline", details=details,
        )  # fmt: skip

    # ------------------------------------------------------------------ prune and grow
    def _prune_and_grow(
        self, question: str, query: np.ndarray, details: ClusterDetails, trace: bool
    ) -> dict[str, Node]:
        r, ctx = self.recipe, self.context
        hits = [
            Node(h.key, 0, float(h.score))
            for h in ctx.vectors.search(CHUNK_COLLECTION, ctx.namespace, query, r.top_s)
        ]
        # Clusters of one chunk share their chunk's vector: the chunk search already finds them.
        hits += [Node(h.key, int(h.payload.get("level") or 0), float(h.score))
                 for h in ctx.vectors.search(CLUSTER_COLLECTION, ctx.namespace, query, r.top_s,
                                             where={"kind": list(SUMMARY_KINDS)})]  # fmt: skip
        candidates = self._described(sorted(hits, key=_rank)[: r.top_s])
        best = max((n.score for n in candidates), default=0.0)
        seen = {n.id for n in candidates}
        active: dict[str, Node] = {}
        for round_number in range(r.max_rounds + 1):
            kept = self._prune(question, candidates, best)
            room = r.max_active - len(active)
            kept = sorted(kept, key=_rank)[: max(room, 0)]
            details.rounds.append(ClusterRound(
                round_number, [(n.id, n.level, round(n.score, 4), _clip(n.text, 160) if trace else "")
                               for n in sorted(candidates, key=_rank)], [n.id for n in kept]))  # fmt: skip
            active.update((n.id, n) for n in kept)
            if not kept or len(active) >= r.max_active or round_number == r.max_rounds:
                break
            candidates = self._grow(kept, query, seen)
            if not candidates:
                break
        return active

    def _prune(self, question: str, candidates: Sequence[Node], best: float) -> list[Node]:
        if not candidates:
            return []
        if self.context.chat_model is not None:
            return self._llm_prune(question, candidates)
        bar = self.recipe.keep_ratio * best
        return [n for n in candidates if n.score >= bar]

    def _llm_prune(self, question: str, candidates: Sequence[Node]) -> list[Node]:
        from langchain_core.messages import HumanMessage, SystemMessage

        from engramdb.platform.llm import message_text

        model = self.context.chat_model
        assert model is not None
        items = "\n".join(f"[{i}] (level {n.level}) {_clip(passage_text(n.title, n.text), 700)}"
                          for i, n in enumerate(candidates, 1))  # fmt: skip
        reply = model.invoke(
            [SystemMessage(SELECT_PROMPT), HumanMessage(f"Question: {question}\n\nItems:\n{items}")]
        )
        picked = {int(x) for x in re.findall(r"\d+", message_text(reply))}  # type: ignore[arg-type]
        return [n for i, n in enumerate(candidates, 1) if i in picked]

    def _grow(self, kept: Sequence[Node], query: np.ndarray, seen: set[str]) -> list[Node]:
        """Unseen neighbours and children of the kept nodes, scored by cosine with the question."""
        rows = self.context.graph.read(
            "clusters/expand", chunk_ids=[n.id for n in kept if n.level == 0],
            cluster_ids=[n.id for n in kept if n.level > 0],
        )  # fmt: skip
        fresh: dict[str, Node] = {}
        for row in rows:
            if row["id"] not in seen and row["id"] not in fresh:
                fresh[row["id"]] = Node(row["id"], int(row["level"] or 0), 0.0, via=row["relation"])
        if not fresh:
            return []
        seen.update(fresh)
        self._score(list(fresh.values()), query)
        return self._described(list(fresh.values()))

    def _score(self, nodes: Sequence[Node], query: np.ndarray) -> None:
        ctx = self.context
        for collection, group in ((CHUNK_COLLECTION, [n for n in nodes if n.level == 0]),
                                  (CLUSTER_COLLECTION, [n for n in nodes if n.level > 0])):  # fmt: skip
            vectors = (
                ctx.vectors.get_vectors(collection, ctx.namespace, [n.id for n in group]) if group else {}
            )
            for n in group:
                vector = vectors.get(n.id)
                n.score = float(np.dot(vector, query)) if vector is not None else 0.0

    def _described(self, nodes: list[Node]) -> list[Node]:
        """The nodes with their title and text (nodes no longer in the graph are dropped)."""
        rows = self.context.graph.read(
            "clusters/nodes", chunk_ids=[n.id for n in nodes if n.level == 0],
            cluster_ids=[n.id for n in nodes if n.level > 0],
        )  # fmt: skip
        found = {r["id"]: r for r in rows}
        out = []
        for n in nodes:
            row = found.get(n.id)
            if row is not None:
                n.title, n.text, n.doc_id, n.level, n.size = (
                    row["title"] or "",
                    row["text"] or "",
                    row["doc_id"] or "",
                    int(row["level"]),
                    int(row["size"]),
                )
                out.append(n)
        return out

    # ------------------------------------------------------------------ evidence and answer
    def _evidence_nodes(self, active: Mapping[str, Node], query: np.ndarray) -> tuple[list[Node], list[Node]]:
        """The best active chunks (topped up from the chunks under active clusters) and the best summaries.

        An active cluster stands for the chunks under it, so when fewer than
        ``passages`` chunks were activated themselves, the best of those
        chunks by cosine fill the evidence up.
        """
        r = self.recipe
        chunks = {n.id: n for n in active.values() if n.level == 0}
        clusters = sorted((n for n in active.values() if n.level > 0), key=_rank)
        # A one-chunk cluster's summary is its chunk's lead sentence: its chunk is evidence, not the summary.
        summaries = [n for n in clusters if n.size > 1]
        if len(chunks) < r.passages and clusters:
            rows = self.context.graph.read(
                "clusters/cluster_chunks", ids=[n.id for n in clusters], limit=FILL_PER_CLUSTER
            )
            under = {cid: Node(cid, 0, 0.0, via="under active cluster") for row in rows for cid in row["chunk_ids"]
                     if cid not in chunks}  # fmt: skip
            if under:
                self._score(list(under.values()), query)
                chunks.update((n.id, n) for n in self._described(list(under.values())))
        passages = sorted(chunks.values(), key=_rank)[
            : r.passages if r.budget is None else max(r.passages, PASSAGE_POOL)
        ]
        return passages, summaries[: r.summaries]

    def _passage_evidence(self, nodes: Sequence[Node]) -> list[Evidence]:
        return [
            Evidence(kind="passage", id=n.id, text=passage_text(n.title, n.text), score=round(n.score, 6),
                     doc_id=n.doc_id, chunk_ids=(n.id,), metadata={"title": n.title, "via": n.via})
            for n in nodes
        ]  # fmt: skip

    def _summary_evidence(self, nodes: Sequence[Node]) -> list[Evidence]:
        """Cluster summaries, cited by the chunks their text comes from (its ``sources``).

        A summary drawn from one document names it; one that spans documents
        leaves ``doc_id`` empty and its chunk ids carry the provenance.
        """
        if not nodes:
            return []
        sources: dict[str, list[tuple[str, str]]] = {}
        for row in self.context.graph.read("clusters/cluster_sources", ids=[n.id for n in nodes]):
            sources.setdefault(row["id"], []).append((row["chunk_id"], row["doc_id"]))
        out = []
        for n in nodes:
            found = sources.get(n.id)
            if not found:
                continue  # a summary without a source in memory is not evidence
            doc_ids = list(dict.fromkeys(d for _, d in found))
            out.append(Evidence(
                kind="cluster", id=n.id, text=n.text, score=round(n.score, 6),
                doc_id=doc_ids[0] if len(doc_ids) == 1 else "", chunk_ids=tuple(c for c, _ in found),
                metadata={"title": n.title, "level": n.level, "via": n.via, "doc_ids": doc_ids},
            ))  # fmt: skip
        return out

    def _answer(
        self, question: str, query: np.ndarray, evidence: Sequence[Evidence], passages: Sequence[Node],
        details: ClusterDetails,
    ) -> str:  # fmt: skip
        if self.answerer is not None:
            return self.answerer.answer_texts(question, [e.text for e in evidence]).text
        own = evidence if self.recipe.budget is not None else self._passage_evidence(passages)
        found = self.evidence_answerer.answer(question, own, query)
        details.na_threshold = found.threshold
        if found.qa is not None and found.score is not None:
            details.best_qa, details.best_qa_score = found.qa.text, round(found.score, 4)
        return found.text


def _rank(node: Node) -> tuple[float, int, str]:
    return (-node.score, node.level, node.id)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@register_renderer("cluster")
def render_cluster_trace(console: Console, details: Details) -> None:
    """Each Prune-and-Grow round: the candidates (level, score, text) and which were kept."""
    assert isinstance(details, ClusterDetails)
    for rnd in details.rounds:
        console.rule(f"round {rnd.round}: {len(rnd.candidates)} candidates, {len(rnd.kept)} kept")
        kept = set(rnd.kept)
        for node_id, level, score, text in rnd.candidates[:MAX_CANDIDATES_SHOWN]:
            mark = "[green]kept[/]  " if node_id in kept else "[dim]pruned[/]"
            what = "chunk" if level == 0 else f"L{level} cluster"
            console.print(f"  {mark} {score:.3f}  {what:<10} {escape(text or node_id)}", highlight=False)
        if len(rnd.candidates) > MAX_CANDIDATES_SHOWN:
            console.print(f"  [dim]... {len(rnd.candidates) - MAX_CANDIDATES_SHOWN} more candidates[/]")
    console.print(f"[bold]active nodes:[/] {len(details.active)}")
    if details.best_qa:
        bar = f" (N/A below {details.na_threshold:.3f})" if details.na_threshold is not None else ""
        console.print(
            f"[bold]best QA pair:[/] {details.best_qa_score:.3f} {escape(details.best_qa)}{bar}",
            highlight=False,
        )


__all__ = ["ClusterDetails", "ClusterRecipe", "ClusterRound", "ClusterStrategy", "render_cluster_trace"]

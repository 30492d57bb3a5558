"""Retrieval for the ``hypergraph`` strategy: sub-queries, their entities, relations and chunks.

Entity retrieval follows HGMem: a *global* sub-query ranks entities outside
working memory (Neo4j BM25 over names, roles and states; entity-name vectors;
and the entities of the QA pairs closest to the sub-query, fused by reciprocal
rank); a *local* one ranks only the neighbours of one memory point's entities,
in the stored graph (shared verb phrases) and in working memory (shared
points). Then the entities' relations (GSW QA pairs, reranked) and the chunks
that mention them are read, each capped per sub-query, in one round trip per
kind for all of a step's sub-queries.

Offline, every relation also gets a *naming floor* (see
:mod:`engramdb.retrieval.hypergraph.strategy`): the score of a fact that would only name
its subject; :meth:`MemoryRetriever.name_scores` computes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from engramdb.platform.storage import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION
from engramdb.retrieval.hop_retrieval import lucene_query
from engramdb.retrieval.hypergraph.llm import RetrievedView
from engramdb.retrieval.hypergraph.memory import Change, Fact, HypergraphStore, WorkingMemory
from engramdb.retrieval.metrics import normalize_answer
from engramdb.retrieval.rerankers import content_words
from engramdb.retrieval.results import QACandidate
from engramdb.retrieval.strategy import AskContext

if TYPE_CHECKING:
    from engramdb.retrieval.hypergraph.strategy import HypergraphRecipe

RRF_K = 60  # reciprocal-rank-fusion constant (the usual one); fuses BM25 and vector rankings of entities
BM25_SCAN = 500  # local investigation: full-text hits scanned for the neighbourhood's entities
CHUNKS_PER_ENTITY = 10  # chunks read per retrieved entity before ranking them


@dataclass(frozen=True)
class SubQuery:
    mode: str  # "global" | "local"
    text: str
    point: str | None = None  # local: the memory point investigated


@dataclass
class Retrieved:
    subquery: SubQuery
    entities: list[tuple[str, str, str]]  # (id, name, type), best first
    facts: list[Fact]  # best first, at most fact_top_k
    chunks: list[dict[str, Any]]  # chunk rows with score and the retrieved entities they mention

    def view(self) -> RetrievedView:
        return RetrievedView(
            query=self.subquery.text, mode=self.subquery.mode, point=self.subquery.point, entities=self.entities,
            facts=[f.sentence for f in self.facts], passages=[(c["title"] or "", c["text"]) for c in self.chunks],
        )  # fmt: skip


@dataclass(frozen=True)
class EntityHits:
    """The entities one sub-query found (local: its anchors first), before their relations are read."""

    subquery: SubQuery
    entities: list[tuple[str, str, str]]  # (id, name, type), best first
    dense_hits: tuple[QACandidate, ...] = ()  # global: the closest QA pairs, reused as candidate facts
    anchors: tuple[str, ...] = ()  # local: the investigated point's entities


class MemoryRetriever:
    """Entity retrieval (global or local), then the entities' relations and chunks, capped per sub-query.

    A step's sub-queries are served together: their entities' names, QA pairs,
    chunks and stored vectors are each read in one round trip for the whole step.
    """

    def __init__(self, context: AskContext, recipe: HypergraphRecipe) -> None:
        self.ctx = context
        self.recipe = recipe
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, text: str) -> np.ndarray:
        if text not in self._vectors:
            self._vectors[text] = self.ctx.embedder.embed_query(text)
        return self._vectors[text]

    def retrieve(
        self, subs: Sequence[SubQuery], memory: WorkingMemory, store: HypergraphStore, rank_by: Sequence[str],
        input_names: Sequence[str] = (),
    ) -> list[Retrieved]:  # fmt: skip
        """Entities for each sub-query, then their QA pairs (ranked against ``rank_by``) and chunks."""
        return self.collect(self.find_entities(subs, memory, store), rank_by, input_names)

    def find_entities(
        self, subs: Sequence[SubQuery], memory: WorkingMemory, store: HypergraphStore
    ) -> list[EntityHits]:
        """Local: the point's entities plus the best of their neighbourhood; global: the best outside memory."""
        found: list[tuple[SubQuery, list[str], tuple[QACandidate, ...], tuple[str, ...]]] = []
        for sub in subs:
            vector = self.embed(sub.text)
            if sub.mode == "local" and sub.point in memory.points:
                anchors = memory.points[sub.point].entity_ids
                found.append(
                    (sub, [*anchors, *self._local_entities(sub.text, vector, anchors, store)], (), anchors)
                )
            else:
                entity_ids, dense_hits = self._global_entities(sub.text, vector, memory.entity_ids())
                found.append((sub, entity_ids, tuple(dense_hits), ()))
        names = self._names([e for _, ids, _, _ in found for e in ids])
        memory.names.update({e: name for e, (name, _) in names.items()})
        return [
            EntityHits(sub, [(e, *names[e]) for e in dict.fromkeys(ids) if e in names], dense_hits, anchors)
            for sub, ids, dense_hits, anchors in found
        ]

    def collect(
        self, hits: Sequence[EntityHits], rank_by: Sequence[str], input_names: Sequence[str] = (), *,
        names: dict[str, str] | None = None, in_play: set[str] | None = None, outside_floor: float = 1.0,
    ) -> list[Retrieved]:  # fmt: skip
        """The relations (QA pairs) and chunks of the entities found, capped per sub-query.

        Offline (``in_play`` given), relations are scored without their
        answers' types — the reranker must not hold the question's answer type
        against a fact on the way to the answer (the author of a play, when the
        question asks for the author's country) — and each gets its naming
        floor (see the module docstring): its subject's, when the subject is in
        play, else at least ``outside_floor``.
        """
        offline = in_play is not None
        all_ids = list(dict.fromkeys(e for h in hits for e, _, _ in h.entities))
        qa_rows = self._qa_rows(all_ids)
        chunk_rows = self._chunk_rows(all_ids)
        candidates = [self._candidates(h, qa_rows) for h in hits]
        qa_vectors = self._stored(QA_COLLECTION, [c.qa_id for group in candidates for c in group])
        chunk_vectors = self._stored(CHUNK_COLLECTION, [row["chunk_id"] for row in chunk_rows])
        out = []
        for h, group, rank in zip(hits, candidates, rank_by, strict=True):
            vector = self.embed(rank)
            dense = [_with_dense(c, float(np.dot(qa_vectors[c.qa_id], vector))) if c.qa_id in qa_vectors else c
                     for c in group]  # fmt: skip
            originals = {c.qa_id: c for c in dense}
            shown = [replace(c, answer_types=()) for c in dense] if offline else dense
            scored = self.ctx.reranker.score(rank, shown, input_names)[: self.recipe.fact_top_k]
            facts = [Fact(originals[x.qa.qa_id], x.score) for x in scored]
            if offline:
                facts = self._with_floors(
                    rank, facts, input_names, names or {}, in_play or set(), outside_floor
                )
            wanted = {e for e, _, _ in h.entities}
            mine = [row for row in chunk_rows if wanted & set(row["entity_ids"])]
            chunks = rank_chunks(mine, chunk_vectors, self.embed(h.subquery.text))[: self.recipe.chunk_top_k]
            out.append(Retrieved(h.subquery, h.entities, facts, chunks))
        return out

    def _with_floors(
        self, question: str, facts: list[Fact], input_names: Sequence[str], names: dict[str, str],
        in_play: set[str], outside_floor: float,
    ) -> list[Fact]:  # fmt: skip
        """Each fact with its naming floor: its subject's if the subject is in play, else >= ``outside_floor``."""
        subjects = list(dict.fromkeys(e for f in facts for e in f.qa.question_entity_ids))
        known = {e: names[e] for e in subjects if e in names}
        known.update(
            {e: name for e, (name, _) in self._names([e for e in subjects if e not in known]).items()}
        )
        floors = self.name_scores(question, list(known.items()), input_names)
        out = []
        for fact in facts:
            subject = fact.qa.question_entity_ids
            least = 0.0 if in_play & set(subject) else outside_floor
            out.append(replace(fact, floor=max([least, *(floors.get(e, 1.0) for e in subject)])))
        return out

    def _candidates(self, hits: EntityHits, qa_rows: dict[str, list[dict[str, Any]]]) -> list[QACandidate]:
        """The QA pairs of a sub-query's entities, plus its closest QA pairs about one of them."""
        wanted = {e for e, _, _ in hits.entities}
        candidates: dict[str, QACandidate] = {}
        for entity_id, _, _ in hits.entities:
            for row in qa_rows.get(entity_id, ()):
                candidates.setdefault(row["qa_id"], _candidate_from_row(row))
        for hit in hits.dense_hits:
            if wanted & set(hit.question_entity_ids):
                candidates.setdefault(hit.qa_id, hit)
        # a local investigation looks past its anchors: a fact answering only with them adds nothing
        blocked = set(hits.anchors)
        return [c for c in candidates.values() if not (blocked and set(c.answer_ids) <= blocked)]

    def _qa_rows(self, entity_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        if not entity_ids:
            return {}
        per_entity = self.recipe.qa_per_entity
        rows = self.ctx.graph.read(
            "traversals/qa_pairs_of_entities", entity_ids=list(entity_ids),
            limit=per_entity * len(entity_ids), per_entity=per_entity,
        )  # fmt: skip
        by_entity: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_entity.setdefault(row["via_entity"], []).append(row)
        return by_entity

    def chunks_of(self, entity_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Chunks mentioning the entities (at most CHUNKS_PER_ENTITY each), with the entities they mention."""
        if not entity_ids:
            return []
        return self.ctx.graph.read(
            "hypergraph/chunks_of_entities", entity_ids=list(entity_ids), per_entity=CHUNKS_PER_ENTITY
        )

    def _chunk_rows(self, entity_ids: Sequence[str]) -> list[dict[str, Any]]:
        return self.chunks_of(entity_ids) if self.recipe.chunk_top_k else []

    def _stored(self, collection: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list(dict.fromkeys(keys))
        return self.ctx.vectors.get_vectors(collection, self.ctx.namespace, keys) if keys else {}

    def ranked_chunks(self, rows: Sequence[dict[str, Any]], text: str) -> list[dict[str, Any]]:
        """Chunk rows by their passage vector's similarity to ``text``, best first."""
        stored = self._stored(CHUNK_COLLECTION, [row["chunk_id"] for row in rows])
        return rank_chunks(rows, stored, self.embed(text))

    def _global_entities(
        self, text: str, vector: np.ndarray, exclude: set[str]
    ) -> tuple[list[str], list[QACandidate]]:
        ctx, room = self.ctx, min(self.recipe.entity_top_k + len(exclude), 1000)
        rankings: list[list[str]] = []
        lucene = lucene_query(text, ctx.namespace)
        if lucene is not None:
            rows = ctx.graph.read(
                "traversals/entity_bm25_many", queries=[{"i": 0, "lucene": lucene}], limit=room
            )
            rankings.append([r["id"] for r in rows])
        rankings.append([h.key for h in ctx.vectors.search(ENTITY_COLLECTION, ctx.namespace, vector, room)])
        dense_hits: list[QACandidate] = []
        if self.recipe.dense_top_k:
            hits = ctx.vectors.search(QA_COLLECTION, ctx.namespace, vector, self.recipe.dense_top_k)
            dense_hits = [_candidate_from_payload(h.key, h.payload, h.score) for h in hits]
            rankings.append(list(dict.fromkeys(e for c in dense_hits for e in c.question_entity_ids)))
        fused = [e for e in reciprocal_rank_fusion(rankings) if e not in exclude]
        return fused[: self.recipe.entity_top_k], dense_hits

    def _local_entities(
        self, text: str, vector: np.ndarray, anchors: Sequence[str], store: HypergraphStore
    ) -> list[str]:
        ctx, r = self.ctx, self.recipe
        per_anchor = max(1, r.neighbourhood_limit // max(1, len(anchors)))
        ids = [row["id"] for row in store.neighbourhood(anchors, per_anchor, r.neighbourhood_limit)]
        if not ids:
            return []
        rankings: list[list[str]] = []
        lucene = lucene_query(text, ctx.namespace)
        if lucene is not None:
            rows = ctx.graph.read(
                "hypergraph/entity_bm25_among", lucene=lucene, ids=ids, scan=BM25_SCAN, limit=len(ids)
            )
            rankings.append([row["id"] for row in rows])
        stored = ctx.vectors.get_vectors(ENTITY_COLLECTION, ctx.namespace, ids)
        rankings.append(sorted(stored, key=lambda e: (-float(np.dot(stored[e], vector)), e)))
        return reciprocal_rank_fusion(rankings)[: r.entity_top_k]

    def _names(self, entity_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Entity id -> (name, type), in one read."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return {}
        return {
            r["id"]: (r["name"], r["type"] or "")
            for r in self.ctx.graph.read("traversals/entity_names", ids=ids)
        }

    def named_entities(
        self, question: str, entities: Sequence[tuple[str, str, str]]
    ) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """(entities the question names word for word, entities sharing a content word with it)."""
        text = f" {name_key(question)} "
        named = [e for e in entities if name_key(e[1]) and f" {name_key(e[1])} " in text]
        words = content_words(question)
        partial = [e for e in entities if content_words(e[1]) & words]
        return named, partial

    def name_scores(
        self, question: str, entities: Sequence[tuple[str, str]], input_names: Sequence[str]
    ) -> dict[str, float]:
        """Entity id -> the reranker's score for a fact that is nothing but the entity's name.

        See the module docstring. The pseudo fact's answer is empty (it answers
        nothing), so the reranker neither blocks it as a named answer nor
        applies an answer-type penalty to it; its dense part is the entity's
        stored name vector.
        """
        if not entities:
            return {}
        vector = self.embed(question)
        stored = self._stored(ENTITY_COLLECTION, [e for e, _ in entities])
        pseudo = [
            QACandidate(
                qa_id=f"name:{e}",
                question=name,
                answer_ids=(),
                answer_names=("",),
                answer_types=(),
                question_entity_ids=(e,),
                doc_id="",
                chunk_id="",
                dense_score=float(np.dot(stored[e], vector)) if e in stored else None,
            )  # fmt: skip
            for e, name in entities
        ]
        return {
            s.qa.question_entity_ids[0]: s.score
            for s in self.ctx.reranker.score(question, pseudo, input_names)
        }

    def names_of(self, changes: Sequence[Change], memory: WorkingMemory) -> None:
        """Name the entities of changed points: answers are named by their facts, the rest in one read."""
        for change in changes:
            for fact in change.point.facts:
                for entity_id, name in zip(fact.qa.answer_ids, fact.qa.answer_names, strict=False):
                    memory.names.setdefault(entity_id, name)
        missing = [e for c in changes for e in c.point.entity_ids if e not in memory.names]
        memory.names.update({e: name for e, (name, _) in self._names(missing).items()})


def rank_chunks(
    rows: Sequence[dict[str, Any]], stored: dict[str, np.ndarray], vector: np.ndarray
) -> list[dict[str, Any]]:
    """Chunk rows scored by their stored passage vector against ``vector``, best first."""
    scored = [{**row, "score": float(np.dot(stored[row["chunk_id"]], vector)) if row["chunk_id"] in stored else 0.0}
              for row in rows]  # fmt: skip
    return sorted(scored, key=lambda row: (-row["score"], row["chunk_id"]))


def name_key(text: str) -> str:
    """A name or question for word-for-word matching: possessive 's dropped, then answer normalisation."""
    return normalize_answer(re.sub(r"['’]s\b", "", text))


def reciprocal_rank_fusion(rankings: Iterable[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Items of several rankings ordered by the sum of 1 / (k + rank); ties by first appearance."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


def _candidate_from_row(row: dict[str, Any]) -> QACandidate:
    return QACandidate(
        qa_id=row["qa_id"], question=row["question"], answer_ids=tuple(row["answer_ids"]),
        answer_names=tuple(row["answer_names"]), answer_types=tuple(t or "" for t in row["answer_types"]),
        question_entity_ids=tuple(row["question_entity_ids"]), doc_id=row["doc_id"], chunk_id=row["chunk_id"],
        verb_phrase=row["verb_phrase"] or "", via=("entity",),
    )  # fmt: skip


def _candidate_from_payload(key: str, payload: dict[str, Any], score: float) -> QACandidate:
    return QACandidate(
        qa_id=key, question=payload["question"], answer_ids=tuple(payload["answer_entity_ids"]),
        answer_names=tuple(payload["answer_names"]), answer_types=tuple(payload.get("answer_types") or ()),
        question_entity_ids=tuple(payload["question_entity_ids"]), doc_id=payload["doc_id"],
        chunk_id=payload["chunk_id"], dense_score=float(score), via=("dense",),
    )  # fmt: skip


def _with_dense(candidate: QACandidate, score: float) -> QACandidate:
    return replace(candidate, dense_score=score)

"""Strategy ``hypergraph`` (HGMem): multi-step sense-making in a hypergraph working memory kept in Neo4j.

Each step (at most ``max_steps``):

1. judge whether memory suffices for the question (from step 1 on);
2. otherwise name sub-queries — *local investigation* around one memory
   point (entity retrieval restricted to the neighbours of its entities, in the
   stored graph and in working memory) or *global exploration* (entity
   retrieval among entities not in memory yet); step 0 uses the question;
3. retrieve entities (BM25 + entity-name vectors + the entities of the closest
   QA pairs, fused by reciprocal rank), their relations (GSW QA pairs) and the
   chunks that mention them, each capped per sub-query;
4. evolve memory: insert points, update points' descriptions (entities
   unchanged), merge points that form one unit into a higher-order point over
   the union of their entities — written to Neo4j, one transaction per step.

The answer rests on the final memory: with an LLM, the points' descriptions
plus the chunks of their entities; offline, the best QA answer inside the
evidence points, or ``N/A``.

**Offline path** (deterministic). The open concern is the question's words
that no relevant point covers yet; it becomes a local sub-query around each of
the most relevant points not investigated yet (their entities anchor it) and a
global one. Insert = retrieved facts grouped by their exact
entity set; update = new facts over exactly an existing point's entities;
merge = relevant points whose entity sets overlap strongly (overlap
coefficient ``merge_overlap``). Memory suffices when every content word of the
question is covered by relevant points; the run also stops when a step adds
nothing relevant.

**What "relevant" means offline, and the N/A threshold.** No threshold is
fitted to any question set; memory gives one per fact. A fact (QA pair) is
about its subject, the entities its question names. Its *naming floor* is the
reranker's score, against the question, for a fact consisting of nothing but
its subject's name (the stored name vector as the dense part). A fact above
its floor says something about what the question asks beyond naming what it
is about: it is relevant; others do not enter memory and cannot be the
answer. Relevance is scored without the answers' types, as a fact on the way
to the answer answers with another kind of thing than the question asks for.
The entities the question names (their stored names occur in it; else the
best-ranked entity sharing a word with it) ground the run: when memory holds
none, nothing is relevant and the answer is ``N/A``; ``N/A`` also when no
relevant fact is left in the evidence. Among relevant facts, answers the
question names itself are skipped, and the answer farthest (in facts) from the
named entities wins, then the best score with answer types: a multi-hop
question asks for the end of its chain ("the first president of the
association that published X" is the president, not the association).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from pydantic import Field
from rich.console import Console
from rich.markup import escape

from engramdb.platform.errors import InputError
from engramdb.platform.storage import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import Decomposition
from engramdb.retrieval.evidence import citations, evidence_tokens, passage_evidence
from engramdb.retrieval.hop_retrieval import lucene_query
from engramdb.retrieval.hypergraph_llm import LLMSteps, Operations, RetrievedView, StepError
from engramdb.retrieval.hypergraph_memory import (
    Change,
    Fact,
    HypergraphStore,
    Point,
    WorkingMemory,
    new_query_id,
)
from engramdb.retrieval.metrics import normalize_answer
from engramdb.retrieval.render import register_renderer
from engramdb.retrieval.rerankers import content_words
from engramdb.retrieval.results import NA, AskResult, Details, Evidence, QACandidate
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy

RRF_K = 60  # reciprocal-rank-fusion constant (the usual one); fuses BM25 and vector rankings of entities
BM25_SCAN = 500  # local investigation: full-text hits scanned for the neighbourhood's entities
CHUNKS_PER_ENTITY = 10  # chunks read per retrieved entity before ranking them


class HypergraphRecipe(Recipe):
    max_steps: int = Field(3, ge=1, le=10, description="Retrieval steps at most (HGMem works best around 3).")
    entity_top_k: int = Field(10, ge=1, le=200, description="Entities retrieved per sub-query.")
    fact_top_k: int = Field(15, ge=1, le=200, description="Relations (QA pairs) kept per sub-query.")
    chunk_top_k: int = Field(3, ge=0, le=50, description="Chunks kept per sub-query.")
    qa_per_entity: int = Field(
        40, ge=1, le=1000, description="QA pairs read per retrieved entity before ranking."
    )
    dense_top_k: int = Field(
        30, ge=0, le=500, description="Closest QA pairs whose entities join entity retrieval."
    )
    neighbourhood_limit: int = Field(
        200, ge=1, le=5000, description="Local investigation: neighbours considered."
    )
    local_points: int = Field(
        2, ge=0, le=20, description="Offline: memory points investigated locally per step."
    )
    max_subqueries: int = Field(3, ge=1, le=10, description="LLM: sub-queries per step at most.")
    merge_overlap: float = Field(
        0.5, gt=0.0, le=1.0, description="Offline: shared / smaller entity set to merge."
    )
    max_point_entities: int = Field(8, ge=2, le=100, description="Offline: entities a merged point may hold.")
    evidence_points: int = Field(5, ge=1, le=100, description="Offline: memory points returned as evidence.")
    answer_chunks: int = Field(
        6, ge=0, le=50, description="LLM: chunks of memory entities given to the answer."
    )
    keep_memory: bool = Field(
        False, description="Keep the run's memory in Neo4j (details.query_id names it)."
    )


# --------------------------------------------------------------------------- sub-queries and what they find


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
        names: dict[str, str] | None = None, floor_at_least: float | None = None,
    ) -> list[Retrieved]:  # fmt: skip
        """The relations (QA pairs) and chunks of the entities found, capped per sub-query.

        Offline (``floor_at_least`` given), relations are scored without their
        answers' types — the reranker must not hold the question's answer type
        against a fact on the way to the answer (the author of a play, when the
        question asks for the author's country) — and each gets its subject's
        naming floor (see the module docstring), at least ``floor_at_least``.
        """
        offline = floor_at_least is not None
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
                facts = self._with_floors(rank, facts, input_names, names or {}, floor_at_least or 0.0)
            wanted = {e for e, _, _ in h.entities}
            mine = [row for row in chunk_rows if wanted & set(row["entity_ids"])]
            chunks = rank_chunks(mine, chunk_vectors, self.embed(h.subquery.text))[: self.recipe.chunk_top_k]
            out.append(Retrieved(h.subquery, h.entities, facts, chunks))
        return out

    def _with_floors(
        self,
        question: str,
        facts: list[Fact],
        input_names: Sequence[str],
        names: dict[str, str],
        least: float,
    ) -> list[Fact]:
        """Each fact with the naming floor of its subject (its question entities), at least ``least``."""
        subjects = list(dict.fromkeys(e for f in facts for e in f.qa.question_entity_ids))
        known = {e: names[e] for e in subjects if e in names}
        known.update(
            {e: name for e, (name, _) in self._names([e for e in subjects if e not in known]).items()}
        )
        floors = self.name_scores(question, list(known.items()), input_names)
        return [
            replace(f, floor=max([least, *(floors.get(e, 1.0) for e in f.qa.question_entity_ids)]))
            for f in facts
        ]

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


# --------------------------------------------------------------------------- offline steps


def support_of(
    entity_ids: Iterable[str], facts: Sequence[Fact], chunks: Sequence[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """(chunk ids, doc ids) supporting a point: its facts' chunks, then retrieved chunks naming 2+ of its entities."""
    wanted = set(entity_ids)
    pairs = [(f.qa.chunk_id, f.qa.doc_id) for f in facts if f.qa.chunk_id]
    pairs += [(c["chunk_id"], c["doc_id"]) for c in chunks if len(wanted & set(c["entity_ids"])) >= 2]
    return list(dict.fromkeys(c for c, _ in pairs)), list(dict.fromkeys(d for _, d in pairs))


def describe(facts: Sequence[Fact]) -> str:
    """An offline point description: its facts as plain sentences, best first."""
    ordered = sorted(facts, key=lambda f: (-f.score, f.qa.qa_id))
    return " ".join(dict.fromkeys(f.sentence for f in ordered))


def offline_evolve(memory: WorkingMemory, retrieved: Sequence[Retrieved], step: int) -> int:
    """Insert and update from the step's new relevant facts; returns how many such facts there were."""
    known = set(memory.facts())
    best: dict[str, Fact] = {}
    for r in retrieved:
        for fact in r.facts:
            if fact.relevant and fact.qa.qa_id not in known:
                if fact.qa.qa_id not in best or best[fact.qa.qa_id].score < fact.score:
                    best[fact.qa.qa_id] = fact
    groups: dict[frozenset[str], list[Fact]] = {}
    for fact in best.values():
        if len(fact.entity_ids) >= 2:
            groups.setdefault(fact.entity_ids, []).append(fact)
    chunks = [c for r in retrieved for c in r.chunks]
    order = sorted(groups.items(), key=lambda kv: (-max(f.score for f in kv[1]), sorted(kv[0])))
    updates = []
    for entities, facts in order:  # inserts first, then updates (the order)
        existing = memory.by_entities(entities)
        if existing is not None:
            updates.append((existing.label, facts))
            continue
        chunk_ids, doc_ids = support_of(entities, facts, chunks)
        memory.insert(sorted(entities), describe(facts), step=step, chunk_ids=chunk_ids, doc_ids=doc_ids,
                      facts=facts, relevance=max(f.score for f in facts))  # fmt: skip
    for label, facts in updates:
        point = memory.points[label]
        chunk_ids, doc_ids = support_of(point.entity_ids, facts, chunks)
        memory.update(label, describe([*point.facts, *facts]), step=step, chunk_ids=chunk_ids, doc_ids=doc_ids,
                      facts=facts, relevance=max(f.score for f in facts))  # fmt: skip
    return sum(len(f) for f in groups.values())


def offline_merge(memory: WorkingMemory, step: int, overlap: float, max_entities: int) -> None:
    """Merge relevant points whose entity sets overlap strongly, strongest pair first, until none is left."""
    while True:
        relevant = [p for p in memory.ranked() if p.relevant]
        best: tuple[tuple[float, float], Point, Point] | None = None
        for a, b in itertools.combinations(relevant, 2):
            ea, eb = set(a.entity_ids), set(b.entity_ids)
            shared = len(ea & eb)
            coefficient = shared / min(len(ea), len(eb))
            if shared == 0 or coefficient < overlap or len(ea | eb) > max_entities:
                continue
            key = (coefficient, a.relevance + b.relevance)
            if best is None or key > best[0]:
                best = (key, a, b)
        if best is None:
            return
        _, a, b = best
        memory.merge([a.label, b.label], describe([*a.facts, *b.facts]), step=step)


def offline_plan(
    question: str, memory: WorkingMemory, investigated: set[frozenset[str]], local_points: int
) -> tuple[bool, list[SubQuery]]:
    """Offline sufficiency and sub-queries.

    The open concern is the question's content words that no relevant point
    covers yet (in its description or its entities' names); none left means
    memory suffices. Otherwise the concern is looked for around each of the
    most relevant points not investigated yet (local) and beyond memory (global).
    """
    relevant = [p for p in memory.ranked() if p.relevant]
    covered = content_words(" ".join([p.description for p in relevant]
                                     + [memory.names.get(e, "") for p in relevant for e in p.entity_ids]))  # fmt: skip
    missing = content_words(question) - covered
    if relevant and not missing:
        return True, []
    words = [
        w for w in re.findall(r"[\w'’.-]+", question) if content_words(w) and content_words(w) <= missing
    ]
    concern = " ".join(dict.fromkeys(words)) or question
    fresh = [p for p in relevant if frozenset(p.entity_ids) not in investigated]
    subs = [SubQuery("local", concern, p.label) for p in fresh[:local_points]]
    if missing:
        subs.append(SubQuery("global", concern))
    return False, subs


def offline_answer(
    memory_points: Sequence[Point], named_ids: Sequence[str], typed: dict[str, float]
) -> tuple[str, Fact | None]:
    """The answer entity at the far end of the relevant facts from what the question names, or N/A.

    Candidates are the answers of relevant facts (above their naming floor)
    in the evidence points, except entities the question names itself. They
    are ranked by how many facts separate them from a named entity (farther
    first: a multi-hop question asks for the end of its chain, and the
    relevance floor keeps the chain from running past it), then by ``typed``:
    each fact's reranker score against the question *with* its answer type,
    which prefers answers of the kind the question asks for.
    """
    facts: dict[str, Fact] = {}
    for point in memory_points:
        for fact in point.facts:
            if fact.relevant:
                facts.setdefault(fact.qa.qa_id, fact)
    named = set(named_ids)
    distance = hops_from(named, facts.values())
    candidates = [
        (fact, answer_id, name)
        for fact in facts.values()
        for answer_id, name in zip(fact.qa.answer_ids, fact.qa.answer_names, strict=False)
        if answer_id not in named
    ]
    if not candidates:
        return NA, None

    def rank(c: tuple[Fact, str, str]) -> tuple:
        fact, answer_id, _ = c
        return (answer_id not in distance, -distance.get(answer_id, 0), -typed.get(fact.qa.qa_id, 0.0),
                -fact.score, fact.qa.qa_id, answer_id)  # fmt: skip

    best, _, name = min(candidates, key=rank)
    return name, best


def hops_from(sources: set[str], facts: Iterable[Fact]) -> dict[str, int]:
    """Entity -> number of facts (hyperedges) between it and the nearest source entity."""
    distance = dict.fromkeys(sources, 0)
    edges = [f.entity_ids for f in facts]
    frontier = set(sources)
    hops = 0
    while frontier:
        hops += 1
        reached = {e for edge in edges if edge & frontier for e in edge if e not in distance}
        for e in reached:
            distance[e] = hops
        frontier = reached
    return distance


# --------------------------------------------------------------------------- details and rendering


@dataclass
class StepRecord:
    """What one step did: sufficiency, sub-queries, what was retrieved, the operations, any error."""

    step: int
    sufficient: bool | None = None
    subqueries: list[dict[str, Any]] = field(default_factory=list)
    retrieved: dict[str, int] = field(default_factory=dict)
    operations: list[dict[str, Any]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # with trace: the facts retrieved
    error: str | None = None


@dataclass
class HypergraphDetails(Details):
    """The memory steps of a ``hypergraph`` ask and the final memory points."""

    kind: ClassVar[str] = "hypergraph"
    query_id: str | None = None  # set when the run was kept in Neo4j (keep_memory)
    steps: list[StepRecord] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""
    relevance_floor: float | None = None  # offline: the naming floor of the entities the question names
    llm_calls: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0

    @property
    def steps_taken(self) -> int:
        """Steps that retrieved and evolved memory."""
        return sum(1 for s in self.steps if s.subqueries)


def change_record(change: Change, names: dict[str, str]) -> dict[str, Any]:
    p = change.point
    return {
        "op": p.operation, "point": p.label, "version": p.version,
        "entities": [names.get(e, e) for e in p.entity_ids], "description": p.description,
        "merged_from": [s.label for s in change.merged],
    }  # fmt: skip


@register_renderer("hypergraph")
def render_hypergraph(console: Console, details: Details) -> None:
    assert isinstance(details, HypergraphDetails)
    for record in details.steps:
        console.rule(f"memory step {record.step}")
        if record.sufficient:
            console.print("  [green]memory suffices[/]")
        for sub in record.subqueries:
            about = f" around {sub['point']}" if sub.get("point") else ""
            console.print(f"  [cyan]{sub['mode']}{escape(about)}[/] {escape(sub['query'])}", highlight=False)
        if record.retrieved:
            console.print(
                "  [dim]retrieved " + ", ".join(f"{v} {k}" for k, v in record.retrieved.items()) + "[/]"
            )
        for fact in record.facts:
            console.print(f"  [dim]fact[/] {escape(fact)}", highlight=False)
        for op in record.operations:
            src = f" ← {', '.join(op['merged_from'])}" if op["merged_from"] else ""
            console.print(f"  [magenta]{op['op']}[/] {op['point']} v{op['version']}{escape(src)}  "
                          f"[dim]{escape('; '.join(op['entities']))}[/]", highlight=False)  # fmt: skip
            console.print(f"      {escape(op['description'])}", highlight=False)
        if record.error:
            console.print(f"  [red]error:[/] {escape(record.error)}", highlight=False)
    kept = f"; kept as {details.query_id}" if details.query_id else ""
    console.print(f"[dim]stopped: {escape(details.stop_reason)}{escape(kept)}[/]", highlight=False)


# --------------------------------------------------------------------------- the strategy


@dataclass
class _Run:
    """The state of one ask."""

    question: str
    memory: WorkingMemory
    store: HypergraphStore
    details: HypergraphDetails
    timings: dict[str, float]
    grounded: bool = False  # offline: memory holds something the question names
    named_ids: list[str] = field(default_factory=list)  # entities the question names (offline)
    named_names: list[str] = field(default_factory=list)
    investigated: set[frozenset[str]] = field(default_factory=set)

    def timed(self, key: str, started: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - started


@register_strategy
class HypergraphStrategy(AskStrategy):
    """HGMem: a hypergraph working memory that evolves over a few retrieval steps, stored in Neo4j."""

    name = "hypergraph"
    summary = "multi-step hypergraph working memory (HGMem) in Neo4j; answers from its points, else N/A"
    recipe_type = HypergraphRecipe
    recipe: HypergraphRecipe

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        super().__init__(context, recipe)
        model = context.chat_model
        self.llm = LLMSteps(model, self.recipe.max_subqueries) if model is not None else None
        self.answerer = LLMAnswerer(model) if model is not None else None
        self.retriever = MemoryRetriever(context, self.recipe)
        self._collections_ready = False

    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty")
        question = question.strip()
        started = time.perf_counter()
        self._ensure_collections()
        run = _Run(question, WorkingMemory(), HypergraphStore(self.context.graph, new_query_id()),
                   HypergraphDetails(), {})  # fmt: skip
        if self.llm is not None:
            self.llm.calls = self.llm.input_tokens = self.llm.output_tokens = 0
        kept = False
        try:
            run.store.create(question, self.name, self.recipe.max_steps)
            self._evolve_memory(run, trace)
            result = self._result(run, started)
            if decomposition is not None:
                result.notes.append(
                    "the hypergraph strategy does not use a decomposition; the one given was ignored"
                )
            kept = self.recipe.keep_memory
            if kept:
                run.details.query_id = run.store.query_id
            return result
        finally:
            if not kept:  # by default, and whenever the ask fails: nothing of the run stays behind
                run.store.delete()

    # Steps -------------------------------------------------------------------
    def _evolve_memory(self, run: _Run, trace: bool) -> None:
        r = self.recipe
        for step in range(r.max_steps):
            record = StepRecord(step)
            run.details.steps.append(record)
            if step == 0:
                subs = [SubQuery("global", run.question)]
            else:
                t0 = time.perf_counter()
                try:
                    sufficient, subs = self._plan(run, step)
                except StepError as exc:
                    record.error = str(exc)
                    run.details.stop_reason = "plan reply unusable; answered from the memory so far"
                    return
                finally:
                    run.timed("plan", t0)
                record.sufficient = sufficient
                if sufficient:
                    run.details.stop_reason = "memory suffices"
                    return
                if not subs:
                    run.details.stop_reason = "nothing left to investigate"
                    return
            record.subqueries = [{"mode": s.mode, "query": s.text, "point": s.point} for s in subs]
            t0 = time.perf_counter()
            retrieved = self._retrieve(run, subs)
            run.timed("retrieve", t0)
            record.retrieved = {
                "entities": len({e for x in retrieved for e, _, _ in x.entities}),
                "facts": len({f.qa.qa_id for x in retrieved for f in x.facts}),
                "chunks": len({c["chunk_id"] for x in retrieved for c in x.chunks}),
            }
            if trace:
                for sub_record, found in zip(record.subqueries, retrieved, strict=True):
                    sub_record["entities"] = [name for _, name, _ in found.entities]
                record.facts = list(
                    dict.fromkeys(f"{f.score:.3f} {f.sentence}" for x in retrieved for f in x.facts)
                )
            t0 = time.perf_counter()
            try:
                added = self._evolve(run, retrieved, step)
            except StepError as exc:
                record.error = str(exc)
                run.details.stop_reason = "evolve reply unusable; answered from the memory so far"
                return
            finally:
                run.timed("evolve", t0)
            changes = run.memory.take_changes()
            self.retriever.names_of(changes, run.memory)
            record.operations = [change_record(c, run.memory.names) for c in changes]
            t0 = time.perf_counter()
            run.store.write_step(step, changes)
            run.timed("write", t0)
            if not added:
                run.details.stop_reason = "the step added nothing relevant"
                return
        run.details.stop_reason = f"max_steps ({r.max_steps})"

    def _plan(self, run: _Run, step: int) -> tuple[bool, list[SubQuery]]:
        if self.llm is None:
            sufficient, subs = offline_plan(run.question, run.memory, run.investigated,
                                            self.recipe.local_points)  # fmt: skip
            return sufficient, subs
        plan = self.llm.plan(run.question, run.memory, step, self.recipe.max_steps)
        return plan.sufficient, [SubQuery(q.mode, q.text, q.point) for q in plan.subqueries]

    def _retrieve(self, run: _Run, subs: Sequence[SubQuery]) -> list[Retrieved]:
        """The step's entities, relations and chunks per sub-query. Offline, relations are ranked against the
        question (so scores compare with the naming floor, set from the question's first retrieval)."""
        for sub in subs:
            if sub.mode == "local" and sub.point in run.memory.points:
                run.investigated.add(frozenset(run.memory.points[sub.point].entity_ids))
        hits = self.retriever.find_entities(subs, run.memory, run.store)
        if self.llm is not None:
            return self.retriever.collect(hits, [sub.text for sub in subs])
        if run.details.relevance_floor is None:
            named, partial = self.retriever.named_entities(run.question, hits[0].entities)
            run.named_ids = [e for e, _, _ in named]
            run.named_names = [name for _, name, _ in named]
            # nothing named word for word: the best partial match stands in; nothing at all: N/A
            basis = [(e, name) for e, name, _ in (named or partial[:1])]
            scores = self.retriever.name_scores(run.question, basis, run.named_names)
            run.grounded = bool(scores)
            run.details.relevance_floor = round(max(scores.values(), default=1.0), 6)
        return self.retriever.collect(
            hits, [run.question] * len(subs), run.named_names, names=run.memory.names,
            floor_at_least=0.0 if run.grounded else 1.0,
        )  # fmt: skip

    def _evolve(self, run: _Run, retrieved: Sequence[Retrieved], step: int) -> int:
        """Apply one step's operations; returns how many relevant things changed (0 stops the run)."""
        r = self.recipe
        if self.llm is None:
            added = offline_evolve(run.memory, retrieved, step)
            offline_merge(run.memory, step, r.merge_overlap, r.max_point_entities)
            return added
        ops = self.llm.evolve(run.question, run.memory, [x.view() for x in retrieved])
        apply_operations(run.memory, ops, retrieved, step)
        return 0 if ops.empty else len(ops.inserts) + len(ops.updates) + len(ops.merges)

    # Answer ------------------------------------------------------------------
    def _result(self, run: _Run, started: float) -> AskResult:
        r, memory = self.recipe, run.memory
        t0 = time.perf_counter()
        if self.llm is None:
            points = [p for p in memory.ranked() if p.relevant][: r.evidence_points]
            facts = list({f.qa.qa_id: f.qa for p in points for f in p.facts}.values())
            typed = {
                x.qa.qa_id: x.score for x in self.context.reranker.score(run.question, facts, run.named_names)
            }
            answer, best = offline_answer(points, run.named_ids, typed)
            evidence = [
                e
                for p in points
                for e in point_evidence_by_document(p, run.store.query_id, memory.names, best)
            ]
            answered_by = "offline"
        else:
            points = memory.ranked()  # the model curated its memory: all of it is read
            evidence = [point_evidence(p, run.store.query_id, memory.names) for p in points]
            evidence += passage_evidence(self._answer_chunks(run, points))
            assert self.answerer is not None
            answer = (
                self.answerer.answer_texts(run.question, [e.text for e in evidence]).text if points else NA
            )
            answered_by = "llm"
        run.timed("answer", t0)
        run.details.points = [point_summary(p, memory.names) for p in points]
        if self.llm is not None:
            run.details.llm_calls = self.llm.calls
            run.details.llm_input_tokens, run.details.llm_output_tokens = (
                self.llm.input_tokens,
                self.llm.output_tokens,
            )
        t0 = time.perf_counter()
        cited = citations(self.context.graph, evidence)
        run.timed("citations", t0)
        run.timings["total"] = time.perf_counter() - started
        return AskResult(
            question=run.question, answer=answer, evidence=evidence, citations=cited, decomposition=[],
            evidence_tokens=evidence_tokens(evidence), timings=run.timings, strategy=self.name,
            answered_by=answered_by, details=run.details,
        )  # fmt: skip

    def _answer_chunks(self, run: _Run, points: Sequence[Point]) -> list[dict[str, Any]]:
        """The chunks of the memory entities most similar to the question (LLM answer)."""
        entity_ids = list(dict.fromkeys(e for p in points for e in p.entity_ids))
        if not entity_ids or not self.recipe.answer_chunks:
            return []
        rows = self.retriever.chunks_of(entity_ids)
        return self.retriever.ranked_chunks(rows, run.question)[: self.recipe.answer_chunks]

    def _ensure_collections(self) -> None:
        if not self._collections_ready:
            for collection in (QA_COLLECTION, CHUNK_COLLECTION, ENTITY_COLLECTION):
                self.context.vectors.ensure_collection(collection, self.context.embedder.dim)
            self._collections_ready = True


def apply_operations(
    memory: WorkingMemory, ops: Operations, retrieved: Sequence[Retrieved], step: int
) -> None:
    """Apply validated LLM operations: inserts, then updates, then merges, with support from this step."""
    facts = [f for r in retrieved for f in r.facts]
    chunks = [c for r in retrieved for c in r.chunks]

    def supported(entity_ids: Sequence[str]) -> tuple[list[Fact], list[str], list[str]]:
        wanted = set(entity_ids)
        mine = [f for f in facts if len(f.entity_ids & wanted) >= 2 and f.entity_ids <= wanted]
        chunk_ids, doc_ids = support_of(wanted, mine, chunks)
        return mine, chunk_ids, doc_ids

    for op in ops.inserts:
        mine, chunk_ids, doc_ids = supported(op.entity_ids)
        memory.insert(op.entity_ids, op.description, step=step, chunk_ids=chunk_ids, doc_ids=doc_ids, facts=mine,
                      relevance=max((f.score for f in mine), default=0.0), label=op.label)  # fmt: skip
    for op in ops.updates:
        mine, chunk_ids, doc_ids = supported(memory.points[op.label].entity_ids)
        memory.update(op.label, op.description, step=step, chunk_ids=chunk_ids, doc_ids=doc_ids, facts=mine,
                      relevance=max((f.score for f in mine), default=0.0))  # fmt: skip
    for op in ops.merges:
        memory.merge(op.labels, op.description, step=step)


def point_evidence(point: Point, query_id: str, names: dict[str, str]) -> Evidence:
    """A memory point as one piece of evidence: its description, provenance chunks, primary document."""
    facts = sorted(point.facts, key=lambda f: (-f.score, f.qa.qa_id))
    doc_id = facts[0].qa.doc_id if facts else (point.doc_ids[0] if point.doc_ids else "")
    return Evidence(
        kind="memory_point", id=point.node_id(query_id), text=point.description, score=round(point.relevance, 6),
        doc_id=doc_id, chunk_ids=point.chunk_ids, metadata=_point_metadata(point, names),
    )  # fmt: skip


def point_evidence_by_document(
    point: Point, query_id: str, names: dict[str, str], best: Fact | None = None
) -> list[Evidence]:
    """An offline point as evidence, one piece per document its facts come from.

    An offline description is exactly its facts' sentences, so splitting it by
    source document loses nothing and lets every piece cite the one passage it
    rests on (a merged point spans several). The document of the answer's fact
    comes first, then the others by their best fact.
    """
    by_doc: dict[str, list[Fact]] = {}
    for fact in sorted(point.facts, key=lambda f: (-f.score, f.qa.qa_id)):
        by_doc.setdefault(fact.qa.doc_id, []).append(fact)
    if not by_doc:
        return [point_evidence(point, query_id, names)]
    order = sorted(by_doc, key=lambda d: (not (best is not None and best in by_doc[d]), -by_doc[d][0].score))
    parts = len(order)
    out = []
    for i, doc_id in enumerate(order, start=1):
        facts = by_doc[doc_id]
        chunk_ids = tuple(dict.fromkeys(f.qa.chunk_id for f in facts if f.qa.chunk_id))
        out.append(Evidence(
            kind="memory_point", id=point.node_id(query_id) + (f"#{i}" if parts > 1 else ""), text=describe(facts),
            score=round(facts[0].score, 6), doc_id=doc_id, chunk_ids=chunk_ids,
            metadata={**_point_metadata(point, names), "part": i, "parts": parts},
        ))  # fmt: skip
    return out


def _point_metadata(point: Point, names: dict[str, str]) -> dict[str, Any]:
    return {
        "point": point.label, "version": point.version, "step": point.step, "operation": point.operation,
        "entities": [names.get(e, e) for e in point.entity_ids], "doc_ids": list(point.doc_ids),
        "description": point.description,
    }  # fmt: skip


def point_summary(point: Point, names: dict[str, str]) -> dict[str, Any]:
    return {
        "point": point.label, "version": point.version, "step": point.step, "operation": point.operation,
        "entities": [names.get(e, e) for e in point.entity_ids], "description": point.description,
        "relevance": round(point.relevance, 6), "merged_from": list(point.merged_from),
        "chunk_ids": list(point.chunk_ids),
    }  # fmt: skip

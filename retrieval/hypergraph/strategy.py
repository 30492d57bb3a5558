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
plus the chunks of their entities; offline, the answer of a relevant fact in
the evidence points (below), or ``N/A``. Pieces (modules of this folder): ``retrieval``
(sub-queries, entities, relations, chunks), ``offline`` (the
deterministic steps), ``llm`` (our prompts, strict parsing) and
``memory`` (working memory and its Neo4j record).

**Offline path** (deterministic). Only relevant points *reached* from what the
question names (joined to a named entity through shared entities) count as the
question's own: the open concern is the question's words that none of them
covers yet; it becomes a local sub-query around each of the most relevant of
them not investigated yet (their entities anchor it) and a global one. Insert =
relevant retrieved facts grouped by their exact entity set; update = new facts
over exactly an existing point's entities; merge = relevant points whose entity
sets overlap strongly (overlap coefficient ``merge_overlap``). Memory suffices
when the reached points cover every content word of the question; the run also
stops when a step adds nothing relevant. The evidence stays the most relevant
points, reached or not: offline extraction often splits a chain's link in two
("Duke" as a father, "Adolph I, Duke of Cleves" where his death is), so the
answer may sit in a point the named entities do not reach (reading the reached
points first lost answers on the people sets).

**What "relevant" means offline, and the N/A threshold.** No threshold is
fitted to any question set; memory gives them. A fact (QA pair) is about its
subject, the entities its question names. A *naming floor* is the reranker's
score, against the question, for a fact consisting of nothing but an entity's
name (its stored name vector as the dense part). The entities the question
names (their stored names occur in it; else the best-ranked entity sharing a
word with it) ground the run, and with working memory's entities they are *in
play*. A fact about an entity in play is relevant when it scores above its
subject's naming floor: it says more about what the question asks than the
bare name of what it is about (so "What country is Henrik Ibsen from?" counts
once memory holds Ibsen as the author). A fact about anything else must beat
the question's own naming floor. Relevance is scored without the answers'
types, as a fact on the way to the answer answers with another kind of thing
than the question asks for. Irrelevant facts do not enter memory and cannot be
the answer; when memory holds nothing the question names, nothing is relevant
and the answer is ``N/A``, as it is when no relevant fact is left in the
evidence. Among relevant facts, answers the question names itself are
skipped, and the answer farthest (in facts) from the named entities wins (no
farther than the offline decomposition's steps, when it finds two or more), then
the best score with answer types: a multi-hop question asks for the end of its
chain ("the first president of the association that published X" is the
president, not the association).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field
from rich.console import Console
from rich.markup import escape

from engramdb.platform.storage import CHUNK_COLLECTION, ENTITY_COLLECTION, QA_COLLECTION
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import Decomposition, DecompositionError, OfflineDecomposer
from engramdb.retrieval.evidence import citations, evidence_tokens, passage_evidence
from engramdb.retrieval.hypergraph.llm import LLMSteps, Operations, StepError
from engramdb.retrieval.hypergraph.memory import (
    Change,
    Fact,
    HypergraphStore,
    Point,
    WorkingMemory,
    forget_document,
    load_memory_run,
    new_query_id,
    render_memory_run,
)
from engramdb.retrieval.hypergraph.offline import (
    describe,
    offline_answer,
    offline_evolve,
    offline_merge,
    offline_plan,
    support_of,
)
from engramdb.retrieval.hypergraph.retrieval import MemoryRetriever, Retrieved, SubQuery
from engramdb.retrieval.packing import fill_budget, passage_tier
from engramdb.retrieval.render import register_renderer
from engramdb.retrieval.results import NA, AskResult, Details, Evidence
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy, require_question

#: With a budget, this many best memory points lead the evidence (a two-hop question's memory holds
#: one per hop; measured on the three own question sets: one point alone lost the second hop); the
#: rest of the memory takes turns with passages.
LEAD_POINTS = 2

#: Kept runs (``engramdb memory show``, document deletes) are handled in memory.py; re-exported here.
__all__ = ["HypergraphDetails", "HypergraphRecipe", "HypergraphStrategy", "forget_document", "load_memory_run",
           "render_memory_run"]  # fmt: skip


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
    question_floor: float = 1.0  # offline: the naming floor of what the question names
    named_ids: list[str] = field(default_factory=list)  # entities the question names (offline)
    named_names: list[str] = field(default_factory=list)
    investigated: set[frozenset[str]] = field(default_factory=set)
    tier: Future[list[Evidence]] | None = None  # with a budget: the dense passage tier, searched meanwhile

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
        self.offline_decomposer = OfflineDecomposer()  # only the offline answer's bound (_hops)
        self._collections_ready = False

    def ask(
        self,
        question: str,
        *,
        decomposition: Decomposition | Sequence[Sequence[str]] | None = None,
        trace: bool = False,
    ) -> AskResult:
        question = require_question(question)
        started = time.perf_counter()
        self._ensure_collections()
        run = _Run(question, WorkingMemory(), HypergraphStore(self.context.graph, new_query_id()),
                   HypergraphDetails(), {})  # fmt: skip
        if self.recipe.budget is not None:
            run.tier = passage_tier(self.context, question)
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
                                            self.recipe.local_points, run.named_ids)  # fmt: skip
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
            run.question_floor = max(scores.values(), default=1.0)
            run.details.relevance_floor = round(run.question_floor, 6)
        in_play = (set(run.named_ids) | run.memory.entity_ids()) if run.grounded else set()
        return self.retriever.collect(
            hits, [run.question] * len(subs), run.named_names, names=run.memory.names, in_play=in_play,
            outside_floor=run.question_floor,
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
            answer, best = offline_answer(points, run.named_ids, typed, self._hops(run.question))
            evidence = [
                e
                for p in points
                for e in point_evidence_by_document(p, run.store.query_id, memory.names, best)
            ]
            chunks = passage_evidence(self._answer_chunks(run, points)) if points and r.budget else []
            answered_by = "offline"
        else:
            points, best = memory.ranked(), None  # the model curated its memory: all of it is read
            evidence = [point_evidence(p, run.store.query_id, memory.names) for p in points]
            chunks = passage_evidence(self._answer_chunks(run, points))
        if (
            r.budget is not None
        ):  # memory points, then the chunks of their entities, then passages by similarity
            surest = {p.node_id(run.store.query_id) for p in points[:LEAD_POINTS]}
            lead = sum(1 for e in evidence if e.id.split("#")[0] in surest)
            if best is not None:
                # the fact the offline answer is read from leads: an answer rests on what its evidence
                # holds, and at 128 tokens the point holding it was often cut or left out (13
                # question-cells over the nine sets had the right answer outside the evidence)
                evidence = [_fact_evidence(best), *evidence]
                lead += 1
            evidence = fill_budget(
                self.context, r.budget, evidence, [run.question], passages=chunks, tier=run.tier, lead=lead
            )
        elif self.llm is not None:
            evidence = evidence + chunks
        if self.llm is not None:
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

    def _hops(self, question: str) -> int:
        """How many steps the offline decomposition takes for ``question`` (0 when it cannot tell): only
        a bound on how far the offline answer may lie, never a plan (a caller's decomposition is not
        used at all, so every ask of the same question reads the same bound)."""
        try:
            return self.offline_decomposer.decompose(question).hops
        except DecompositionError:
            return 0

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


def _fact_evidence(fact: Fact) -> Evidence:
    """One fact as evidence of its own (its sentence), cited by the chunk its QA pair comes from."""
    qa = fact.qa
    return Evidence(kind="fact", id=f"fact:{qa.qa_id}", text=fact.sentence, score=round(fact.score, 6),
                    doc_id=qa.doc_id, chunk_ids=(qa.chunk_id,) if qa.chunk_id else (), metadata={})  # fmt: skip


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

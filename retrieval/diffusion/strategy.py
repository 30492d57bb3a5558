"""Strategy ``diffusion`` (CogitoRAG): facts activate entities, a random walk spreads it to passages.

Per question (or per parallel sub-question):

1. **Split** — only when the question has independent parts: the sequences of
   the caller's decomposition, of the LLM decomposer, or offline of the rule
   decomposer (comparisons, "A or B"), used only when there are several; each
   sequence becomes one sub-question (its steps joined, placeholders dropped).
2. **Facts** — the top-K facts (GSW verb phrases with their entities, written
   by the ``gists`` memory stage) by vector similarity.
3. **Activation** — each entity named by those facts starts with mean fact
   similarity × ``1 + α(1 − e^{−βc})`` ÷ ``max(1, chunks mentioning it)``
   (:mod:`engramdb.retrieval.diffusion.walk`).
4. **Walk** — random walk with restart on the passage–entity graph (entities
   and chunks; MENTIONS edges, a link from each passage to the entity its
   title names, one edge per fact between the entities it links, and synonym
   edges between entities sharing a name or an alias: :func:`walk_graph`),
   ``P`` column-normalised, iterated with ``scipy.sparse`` until the L1 change
   is below the tolerance. CogitoRAG writes the update as ``(1−γ)·Wᵀπ + γπ₀``
   with a "column-normalised" ``W``; read literally (``Wᵀ`` of a
   column-stochastic ``W``, i.e. a row-stochastic operator) a node takes the
   *average* of its neighbours' mass and mass is not conserved. We use the
   walk the paper describes in words and HippoRAG 2 runs (personalised
   PageRank): each node hands its mass out evenly to its neighbours, ``P·π``
   with ``P`` column-stochastic, so ``W`` there is the row-stochastic
   transition matrix and ``Wᵀ = P``. (Measured on MuSiQue dev, the literal
   reading ranks worse at every ε, γ and K tried.)
5. **CogniRank** — ``ε·minmax(walk score) + (1−ε)·minmax(cosine)`` over every
   passage of the namespace (the candidate set is all of them: the walk
   reaches passages dense search ranks low, which is the point); top 5, or
   2+2+1 with two sub-questions.
6. **Evidence** — each passage (kind ``passage``) is followed by its gist as an
   evidence item of its own (kind ``gist``, ``metadata["passage_id"]`` pointing
   back). Separate items, because the reader is given both and the token count
   must say so; recall counts documents, so a gist never adds a passage. With
   a token budget the gists follow all the passages instead (:func:`passages_first`).
7. **Answer** — with an LLM, from the evidence or ``N/A``. Offline, the QA pair
   of the top passages that the reranker scores best against the question, or
   ``N/A`` below a threshold read off the memory itself (see
   :func:`calibrate_na_threshold`).

Recipe defaults. CogitoRAG states α = 2, β = 1 and ε = 0.95. It leaves K, the
restart probability and the tolerance open; its walk and fact linking follow
HippoRAG 2, whose defaults are the top 5 facts and a PageRank damping of 0.5
(restart probability 0.5). The tolerance 1e-6 (L1, on a unit restart mass)
puts the walk within 1e-6 of its fixed point, far below any score gap that
changes a top-5 ranking.

The walk graph is a snapshot, not a per-question read. A question needs the
whole passage–entity graph of the namespace, and reading it from Neo4j takes
far longer than the walk, so each (driver, vector store, namespace) keeps one
:class:`WalkSnapshot`: the sparse transition matrix, the node ids and the
passages' vectors (so the dense half of CogniRank is one matrix–vector product
over every passage, exact, instead of a second search). It is built by one
Cypher export (``diffusion/export_walk_graph``) plus one vector read; the
dense half is computed without BLAS (:func:`passage_similarity`). Before
each question, :meth:`Graph.memory_version` (one node per namespace, bumped in
the same transaction as every write or delete of a Document, by any process)
says whether it is stale: one index seek, so the check costs the same for a
hundred documents or a hundred thousand. (It used to count the Document nodes
and read their latest ``updated_at``: that read grew with the namespace, from
7 ms on MuSiQue to 27 ms with 2Wiki added, and was the stage that grew most.)
Per-question subgraph extraction was the alternative; it costs a Neo4j round
trip per hop and reads the same hub entities again for every question. A
rebuild after a change is the full export (seconds for a few thousand
passages), paid by the first question after it. Memory cost: the matrix plus
``4 × dim`` bytes per passage (1.5 KB at 384-d).
"""

from __future__ import annotations

import re
import threading
import time
import weakref
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from pydantic import Field
from rich.console import Console
from rich.markup import escape

from engramdb.ingestion.reconcile import normalize_name
from engramdb.ingestion.stages.gists import FACT_COLLECTION
from engramdb.platform.graph import Graph
from engramdb.platform.storage import CHUNK_COLLECTION, QA_COLLECTION, passage_text
from engramdb.platform.timing import timed
from engramdb.platform.vectors import VectorStore
from engramdb.retrieval import decomposition as decomposition_module
from engramdb.retrieval.answering import LLMAnswerer
from engramdb.retrieval.decomposition import (
    PLACEHOLDER,
    Decomposition,
    DecompositionError,
    LLMDecomposer,
    OfflineDecomposer,
    make_decomposition,
)
from engramdb.retrieval.diffusion.walk import (
    Activation,
    entity_activation,
    fuse,
    minmax,
    random_walk_with_restart,
    restart_vector,
    select_split,
    top_indices,
    transition_matrix,
)
from engramdb.retrieval.evidence import citations, evidence_tokens
from engramdb.retrieval.evidence_answer import EvidenceAnswerer, qa_candidates
from engramdb.retrieval.io_pool import IO_POOL
from engramdb.retrieval.packing import PASSAGE_POOL, fill_budget
from engramdb.retrieval.render import register_renderer
from engramdb.retrieval.rerankers import Reranker
from engramdb.retrieval.results import NA, AskResult, Details, Evidence, QACandidate
from engramdb.retrieval.strategy import AskContext, AskStrategy, Recipe, register_strategy, require_question

#: Entities and facts shown in the details (and under ``--trace``) per sub-question.
DETAIL_ENTITIES = 8


class DiffusionRecipe(Recipe):
    fact_top_k: int = Field(
        5, ge=1, le=200, description="K: facts retrieved by vector similarity per sub-question."
    )
    alpha: float = Field(2.0, ge=0.0, le=100.0, description="α: strength of the entity-frequency reward.")
    beta: float = Field(1.0, gt=0.0, le=100.0, description="β: how fast the reward saturates with fact hits.")
    restart_probability: float = Field(0.5, gt=0.0, le=1.0, description="γ: the walk's restart probability.")
    epsilon: float = Field(
        0.95, ge=0.0, le=1.0, description="ε: weight of the walk score against cosine similarity."
    )
    tolerance: float = Field(
        1e-6, gt=0.0, le=0.1, description="Stop the walk when the L1 change is below this."
    )
    max_iterations: int = Field(100, ge=1, le=10_000, description="Upper bound on walk iterations.")
    top_k: int = Field(5, ge=1, le=100, description="Passages returned as evidence.")
    gists: bool = Field(
        True, description="Pair each passage with its gist (off: passages only, fewer evidence tokens)."
    )
    facts: int = Field(
        4,
        ge=0,
        le=50,
        description="With a budget: the best-matching facts that fill the room where a passage would be cut.",
    )
    split: bool = Field(
        True, description="Split questions with independent parts into parallel sub-questions."
    )
    na_false_accept: float = Field(
        0.05, gt=0.0, lt=1.0,
        description="Offline N/A: accept a QA pair only above what unrelated passages reach this often.",
    )  # fmt: skip
    na_probes: int = Field(
        400,
        ge=1,
        le=5000,
        description="Offline N/A: probe questions sampled from memory (a 95% quantile needs hundreds).",
    )


# --------------------------------------------------------------------------- snapshot


@dataclass
class WalkSnapshot:
    """The passage–entity graph of one namespace, ready for walks: entities first, then chunks."""

    memory_version: str  # Graph.memory_version() of the memory it was built from
    entity_ids: list[str]
    entity_names: list[str]
    chunk_ids: list[str]
    chunk_counts: np.ndarray  # per entity: chunks mentioning it
    transition: sp.csr_matrix
    chunk_vectors: np.ndarray  # (chunks, dim) float32, unit rows; zeros for a passage without a vector
    edges: int
    build_seconds: float
    edge_kinds: dict[str, int] = field(default_factory=dict)
    entity_index: dict[str, int] = field(default_factory=dict)
    chunk_index: dict[str, int] = field(default_factory=dict)
    na_thresholds: dict[tuple[Any, ...], float] = field(default_factory=dict)  # per (reranker, recipe knobs)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.entity_index = {e: i for i, e in enumerate(self.entity_ids)}
        self.chunk_index = {c: i for i, c in enumerate(self.chunk_ids)}

    @property
    def entities(self) -> int:
        return len(self.entity_ids)

    @property
    def size(self) -> int:
        return len(self.entity_ids) + len(self.chunk_ids)


_DISAMBIGUATOR = re.compile(r"\s*\([^()]*\)\s*$")


def title_keys(title: str) -> set[str]:
    """Normalised names a document title gives its topic: the title, and without a trailing
    disambiguator ("Brand (play)" → "brand")."""
    keys = {normalize_name(title), normalize_name(_DISAMBIGUATOR.sub("", title))}
    return {k for k in keys if k}


@dataclass
class WalkGraph:
    """The walk graph's edges as ``(node, node, weight)`` and how many of each kind there are."""

    edges: list[tuple[int, int, float]]
    chunk_counts: np.ndarray  # per entity: chunks linked to it (mentions and title links)
    kinds: dict[str, int]


def walk_graph(
    entity_ids: Sequence[str],
    entity_keys: Sequence[str],
    chunk_ids: Sequence[str],
    chunk_titles: Sequence[str],
    mentions: Sequence[Sequence[str]],
    facts: Sequence[Sequence[str]],
    aliases: Sequence[Sequence[str]] = (),
) -> WalkGraph:
    """The passage–entity graph: entities are nodes ``0..E-1``, chunks ``E..E+C-1``.

    * **mentions**: chunk–entity, one per MENTIONS relationship;
    * **titles**: chunk–entity for the entity its document title names (same
      normalised name, with or without a trailing disambiguator), when the
      chunk does not already mention it. A passage is about its title even when
      extraction did not pick the title out of the text (the "Somalia" passage
      rarely says "Somalia"); without this link the walk cannot reach the page
      of an entity that other passages lead to;
    * **facts**: entity–entity, each pair of entities taking part in one verb phrase;
    * **same name**: entity–entity between nodes with the same normalised name
      that reconciliation kept apart (it refuses merges across entity types,
      right for identity but too strict for association: "Kassel" the city and
      "Kassel" typed otherwise in another passage), and between an entity and
      the node named by a multi-word alias one of its mentions gave it
      ("American" known as "United States"; one-word aliases are too ambiguous
      across documents, as in reconciliation). ``aliases`` are
      ``[entity id, alias key, ...]`` per mention. The exact-name subset of
      HippoRAG 2's synonym edges.
    """
    entity_index = {e: i for i, e in enumerate(entity_ids)}
    base = len(entity_ids)
    chunk_index = {c: base + i for i, c in enumerate(chunk_ids)}
    by_key: dict[str, list[int]] = {}
    for i, key in enumerate(entity_keys):
        if key:
            by_key.setdefault(key, []).append(i)
    edges: list[tuple[int, int, float]] = []
    chunk_counts = np.zeros(len(entity_ids), dtype=np.int64)
    linked: set[tuple[int, int]] = set()
    for chunk_id, entity_id in mentions:
        c, e = chunk_index.get(chunk_id), entity_index.get(entity_id)
        if c is not None and e is not None and (e, c) not in linked:
            linked.add((e, c))
            edges.append((e, c, 1.0))
            chunk_counts[e] += 1
    kinds = {"mentions": len(edges)}
    for chunk_id, title in zip(chunk_ids, chunk_titles, strict=True):
        c = chunk_index[chunk_id]
        for e in {e for key in title_keys(title or "") for e in by_key.get(key, ())}:
            if (e, c) not in linked:
                linked.add((e, c))
                edges.append((e, c, 1.0))
                chunk_counts[e] += 1
    kinds["titles"] = len(edges) - kinds["mentions"]
    for members in facts:
        nodes = sorted({entity_index[m] for m in members if m in entity_index})
        edges.extend((a, b, 1.0) for i, a in enumerate(nodes) for b in nodes[i + 1 :])
    kinds["facts"] = len(edges) - kinds["mentions"] - kinds["titles"]
    synonyms: set[tuple[int, int]] = set()
    for nodes in by_key.values():
        synonyms.update((a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :])
    for entity_id, *keys in aliases:
        a = entity_index.get(entity_id)
        if a is None:
            continue
        for key in keys:
            if " " in key:
                synonyms.update((min(a, b), max(a, b)) for b in by_key.get(key, ()) if b != a)
    edges.extend((a, b, 1.0) for a, b in sorted(synonyms))
    kinds["synonyms"] = len(synonyms)
    return WalkGraph(edges, chunk_counts, kinds)


def build_snapshot(graph: Graph, vectors: VectorStore, dim: int, memory_version: str) -> WalkSnapshot:
    """One Cypher export and one vector read → the sparse walk graph and the passage vectors."""
    started = time.perf_counter()
    row = graph.read("diffusion/export_walk_graph")[0]
    entity_ids: list[str] = row["entity_ids"]
    chunk_ids: list[str] = row["chunk_ids"]
    built = walk_graph(
        entity_ids,
        row["entity_keys"],
        chunk_ids,
        row["chunk_titles"],
        row["mentions"],
        row["facts"],
        [a for a in row["aliases"] if a],
    )
    size = len(entity_ids) + len(chunk_ids)
    stored = vectors.get_vectors(CHUNK_COLLECTION, graph.namespace, chunk_ids) if chunk_ids else {}
    chunk_vectors = np.zeros((len(chunk_ids), dim), dtype=np.float32)
    for i, chunk_id in enumerate(chunk_ids):
        if chunk_id in stored:
            chunk_vectors[i] = stored[chunk_id]
    return WalkSnapshot(
        memory_version=memory_version, entity_ids=entity_ids, entity_names=row["entity_names"], chunk_ids=chunk_ids,
        chunk_counts=built.chunk_counts, transition=transition_matrix(size, built.edges),
        chunk_vectors=chunk_vectors, edges=len(built.edges), edge_kinds=built.kinds,
        build_seconds=time.perf_counter() - started,
    )  # fmt: skip


class SnapshotCache:
    """The current snapshot per namespace, rebuilt when the namespace's memory version changes."""

    def __init__(self) -> None:
        self._snapshots: dict[tuple[str, str], WalkSnapshot] = {}
        self._lock = threading.Lock()

    def current(self, graph: Graph, vectors: VectorStore, dim: int) -> tuple[WalkSnapshot, bool]:
        """``(snapshot, rebuilt)``: the namespace's snapshot, rebuilt first if memory changed."""
        key = (graph.database, graph.namespace)
        version = graph.memory_version()
        with self._lock:
            snapshot = self._snapshots.get(key)
            if snapshot is not None and snapshot.memory_version == version:
                return snapshot, False
            snapshot = build_snapshot(graph, vectors, dim, version)
            self._snapshots[key] = snapshot
            return snapshot, True


#: Snapshot caches per (Neo4j driver, vector store): shared by every diffusion strategy built
#: over the same stores (e.g. several recipes in one evaluation), dropped with the driver.
_CACHES: weakref.WeakKeyDictionary[Any, dict[int, SnapshotCache]] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def snapshot_cache(graph: Graph, vectors: VectorStore) -> SnapshotCache:
    with _CACHES_LOCK:
        per_driver = _CACHES.setdefault(graph.driver, {})
        return per_driver.setdefault(id(vectors), SnapshotCache())


# --------------------------------------------------------------------------- details


@dataclass
class DiffusionDetails(Details):
    """What the diffusion run saw: per sub-question its top facts, most activated entities and
    walk; per returned passage both CogniRank components (raw and min-max normalised)."""

    kind: ClassVar[str] = "diffusion"
    sub_questions: list[str] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    passages: list[dict[str, Any]] = field(default_factory=list)
    walks: list[dict[str, Any]] = field(default_factory=list)
    snapshot: dict[str, Any] = field(default_factory=dict)
    offline_answer: dict[str, Any] = field(default_factory=dict)


@register_renderer("diffusion")
def render_diffusion(console: Console, details: Details) -> None:
    assert isinstance(details, DiffusionDetails)
    snap = details.snapshot
    console.rule("diffusion")
    kinds = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in snap.get("edge_kinds", {}).items())
    console.print(
        f"[dim]walk graph: {snap.get('entities', 0)} entities, {snap.get('chunks', 0)} passages, "
        f"{snap.get('edges', 0)} edges{f' ({kinds})' if kinds else ''}; "
        f"{'rebuilt' if snap.get('rebuilt') else 'cached'}, built in {snap.get('build_ms', 0.0):.0f} ms[/]",
        highlight=False,
    )
    for walk in details.walks:
        sq = walk["sub_question"]
        console.print(f"[cyan]sub-question[/] {escape(sq)}", highlight=False)
        console.print(
            f"  [dim]walk: {walk['iterations']} iterations, L1 change {walk['change']:.2e}, "
            f"{'converged' if walk['converged'] else 'NOT converged'}, {walk['ms']:.1f} ms[/]",
            highlight=False,
        )
        for f in (f for f in details.facts if f["sub_question"] == sq):
            console.print(f"  [green]fact[/]   {f['score']:.3f}  {escape(f['text'])}", highlight=False)
        for e in (e for e in details.entities if e["sub_question"] == sq):
            console.print(
                f"  [magenta]entity[/] walk {e['walk']:.4f}  start {e['activation']:.4f}  {escape(e['name'])} "
                f"[dim](facts {e['hits']}, chunks {e['chunks']})[/]",
                highlight=False,
            )
    for p in details.passages:
        console.print(
            f"  [bold]passage[/] {p['score']:.3f} = ε·{p['diffusion_norm']:.3f} + (1−ε)·{p['dense_norm']:.3f}  "
            f"[dim](walk {p['diffusion']:.2e}, cosine {p['dense']:.3f})[/]  {escape(p['title'])}",
            highlight=False,
        )
    if details.offline_answer:
        a = details.offline_answer
        console.print(
            f"  [dim]offline answer: best QA {a.get('score', 0.0):.3f} vs N/A threshold "
            f"{a.get('threshold', 0.0):.3f}: {escape(str(a.get('question', '')))} → {escape(str(a.get('answer', '')))}[/]",
            highlight=False,
        )


# --------------------------------------------------------------------------- ranking


def passage_similarity(passage_vectors: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine of ``vector`` with every passage (unit rows), computed without BLAS.

    ``einsum`` runs numpy's own single-threaded loop. A BLAS matrix–vector
    product spreads this small product over threads, and on a busy machine
    those threads wait for cores: measured here 1 ms alone, 10–30 ms under
    load, for the same 1,890 × 384 product.
    """
    return np.einsum("ij,j->i", passage_vectors, vector.astype(passage_vectors.dtype, copy=False))


@dataclass
class Ranking:
    """One sub-question's CogniRank over every passage of the snapshot."""

    sub_question: str
    vector: np.ndarray
    facts: list[dict[str, Any]]
    activations: list[Activation]
    walk: np.ndarray
    iterations: int
    change: float
    converged: bool
    walk_seconds: float
    diffusion: np.ndarray  # walk score per passage
    dense: np.ndarray  # cosine per passage
    fused: np.ndarray

    def best(self, chunk_ids: Sequence[str], k: int) -> list[tuple[str, float]]:
        return [(chunk_ids[i], float(self.fused[i])) for i in top_indices(self.fused, k)]


def offline_parallel_sequences(decomposer: OfflineDecomposer, question: str) -> tuple[tuple[str, ...], ...]:
    """The rule decomposer's parallel sequences for ``question`` (one sequence when it has none).

    Only its comparison rule ("A or B", "both", "the same") ever yields
    parallel sequences; the rest of :meth:`OfflineDecomposer.decompose` builds
    one chain with a spaCy parse (tens of ms) that could never cause a split,
    so only that rule runs here. Should the rule move, the full decomposer is
    used instead (same result, slower).
    """
    comparison = getattr(decomposition_module, "_comparison", None)
    tidy = getattr(decomposition_module, "_tidy", None)
    if comparison is None or tidy is None:
        return decomposer.decompose(question).sequences
    compared = comparison(tidy(question))
    if compared:
        sequences, _kind = compared  # the rule also says what is compared, which the walk does not need
        try:
            return make_decomposition(sequences, source="offline").sequences
        except DecompositionError:
            pass
    return ((question,),)


def sub_question_text(steps: Sequence[str]) -> str:
    """A sequence of sub-questions as one retrieval query (placeholders dropped)."""
    text = " ".join(PLACEHOLDER.sub(" ", s) for s in steps)
    return re.sub(r"\s+", " ", text).strip()


@register_strategy
class DiffusionStrategy(AskStrategy):
    """CogitoRAG: top facts → entity activation → random walk with restart → CogniRank fusion."""

    name = "diffusion"
    summary = "top facts activate entities, a random walk ranks passages, fused with dense similarity"
    recipe_type = DiffusionRecipe
    recipe: DiffusionRecipe

    def __init__(self, context: AskContext, recipe: Recipe | None = None) -> None:
        super().__init__(context, recipe)
        model = context.chat_model
        use_llm = model is not None and context.decomposition in ("auto", "llm")
        self.decomposer: LLMDecomposer | OfflineDecomposer = (
            LLMDecomposer(model) if use_llm else OfflineDecomposer()
        )  # type: ignore[arg-type]
        self.offline_decomposer = OfflineDecomposer()
        self.answerer = LLMAnswerer(model) if model is not None else None
        self.evidence_answerer = EvidenceAnswerer(context, budget=self.recipe.budget)
        self.snapshots = snapshot_cache(context.graph, context.vectors)
        for collection in (FACT_COLLECTION, CHUNK_COLLECTION, QA_COLLECTION):
            context.vectors.ensure_collection(collection, context.embedder.dim)

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
        notes: list[str] = []
        ctx = self.context
        # the freshness check waits on Neo4j while this thread embeds the question(s)
        fresh = IO_POOL.submit(timed, self.snapshots.current, ctx.graph, ctx.vectors, ctx.embedder.dim)
        t0 = time.perf_counter()
        sequences, decomposed_by = self._split(question, decomposition)
        timings["split"] = time.perf_counter() - t0
        queries = [sub_question_text(s) for s in sequences] if len(sequences) > 1 else [question]
        t0 = time.perf_counter()
        vectors = [np.asarray(ctx.embedder.embed_query(q), dtype=np.float32) for q in queries]
        timings["embed"] = time.perf_counter() - t0
        question_vector = vectors[0] if queries == [question] else None
        if self.recipe.budget is not None and question_vector is None:
            # embedded once here: the passage tier and the answer both need it
            question_vector = np.asarray(ctx.embedder.embed_query(question), dtype=np.float32)
        (snapshot, rebuilt), timings["snapshot"] = fresh.result()
        t0 = time.perf_counter()
        rankings = [self._rank(q, v, snapshot) for q, v in zip(queries, vectors, strict=True)]
        timings["rank"] = time.perf_counter() - t0
        if not any(r.facts for r in rankings):
            notes.append(
                "no facts matched (has the 'gists' stage indexed this memory?): ranked by similarity only"
            )
        selected = self._select(rankings, snapshot)
        tier: list[tuple[str, float]] = []
        if self.recipe.budget is not None and question_vector is not None:
            dense = (
                rankings[0].dense
                if queries == [question]
                else passage_similarity(snapshot.chunk_vectors, question_vector)
            )
            tier = dense_tier(snapshot, dense)
        reserved = best_facts(rankings, self.recipe.facts) if self.recipe.budget is not None else []
        t0 = time.perf_counter()
        # the passages' text (the tier's too) comes from Neo4j, with the reserved facts' documents for
        # their citations; without a budget this thread finds the offline answer in Qdrant meanwhile
        read = IO_POOL.submit(
            timed, self._passage_rows,
            list(dict.fromkeys([*(c for c, _ in (*selected, *tier)), *(f.chunk_id for f in reserved)])),
        )  # fmt: skip
        offline = (
            None
            if self.answerer is not None
            else ("", {})  # with a budget the offline answer comes from the packed evidence, below
            if self.recipe.budget is not None
            else self._offline_answer(question, rankings, selected, snapshot)
        )
        read_rows, timings["evidence"] = read.result()
        timings["answer"] = time.perf_counter() - t0
        by_id = {r["chunk_id"]: r for r in read_rows}
        rows = [by_id[c] for c, _ in selected if c in by_id]
        evidence = paired_evidence(rows, dict(selected), self.recipe.gists)
        if self.recipe.budget is not None:
            # passages by fused score, then gists where they add to a passage; offline, the answer
            # rests on what the reader is given, as for every strategy with a budget
            tier_rows = [{**by_id[c], "score": score} for c, score in tier if c in by_id]
            evidence = fill_budget(
                ctx, self.recipe.budget, passages_first(evidence), [question, *queries], tier=tier_rows,
                reserve=reserved,
            )  # fmt: skip
            citing = IO_POOL.submit(citations, ctx.graph, evidence, read_rows)
            if offline is not None:
                # the QA pairs of the packed passages alone, searched once they are known: reading
                # those of every candidate passage while the text came (up to 16 passages' pairs,
                # most of them outside the budget) was measured 1-1.5 ms slower per ask
                t0 = time.perf_counter()
                found = self.evidence_answerer.answer(
                    question, evidence, question_vector, version=snapshot.memory_version
                )
                timings["answer"] = time.perf_counter() - t0
                offline = (found.text, {"score": found.score or 0.0, "threshold": found.threshold,
                                        "question": found.qa.question if found.qa else "",
                                        "answer": found.text})  # fmt: skip
            cited = citing.result()
        else:
            cited = citations(ctx.graph, evidence, rows)  # rows carry their documents: no read
        if rows and not any(r["gist_text"] for r in rows):
            notes.append("these passages have no gists yet: run the 'gists' memory stage")
        details = self._details(
            rankings, selected, snapshot, rebuilt, {r["chunk_id"]: r["title"] for r in rows}
        )
        if offline is None:
            t0 = time.perf_counter()
            answer = self.answerer.answer_texts(question, [e.text for e in evidence]).text  # type: ignore[union-attr]
            answered_by = "llm"
            timings["answer"] = time.perf_counter() - t0
        else:
            answer, details.offline_answer = offline
            answered_by = "offline"
        timings["total"] = time.perf_counter() - started
        return AskResult(
            question=question, answer=answer, evidence=evidence, citations=cited,
            decomposition=[list(s) for s in sequences] if len(sequences) > 1 else [],
            evidence_tokens=evidence_tokens(evidence), timings=timings, strategy=self.name,
            answered_by=answered_by, decomposed_by=decomposed_by if len(sequences) > 1 else "",
            details=details, notes=notes,
        )  # fmt: skip

    # ------------------------------------------------------------------ steps
    def _split(
        self, question: str, given: Decomposition | Sequence[Sequence[str]] | None
    ) -> tuple[tuple[tuple[str, ...], ...], str]:
        """Parallel sequences of sub-questions (one sequence = no split)."""
        if isinstance(given, Decomposition):
            return given.sequences, "given"
        if given is not None:
            return make_decomposition(given).sequences, "given"
        if not self.recipe.split:
            return ((question,),), ""
        if isinstance(self.decomposer, OfflineDecomposer):
            return offline_parallel_sequences(self.decomposer, question), "offline"
        try:
            decomp = self.decomposer.decompose(question)
            return decomp.sequences, decomp.source
        except DecompositionError as exc:
            sequences = offline_parallel_sequences(self.offline_decomposer, question)
            return sequences, f"offline (LLM decomposition unusable: {exc})"

    def _rank(self, query: str, vector: np.ndarray, snapshot: WalkSnapshot) -> Ranking:
        r = self.recipe
        ctx = self.context
        hits = (
            ctx.vectors.search(FACT_COLLECTION, ctx.namespace, vector, r.fact_top_k)
            if snapshot.entities
            else []
        )
        facts = [
            {"fact_id": h.key, "text": h.payload.get("text", ""), "score": float(h.score),
             "entities": [snapshot.entity_index[e] for e in h.payload.get("entity_ids", []) if e in snapshot.entity_index],
             "chunk_id": h.payload.get("chunk_id", ""), "doc_id": h.payload.get("doc_id", "")}
            for h in hits
        ]  # fmt: skip
        activations = entity_activation(
            [(f["score"], f["entities"]) for f in facts], snapshot.chunk_counts, r.alpha, r.beta
        )
        restart = restart_vector(activations, snapshot.size)
        t0 = time.perf_counter()
        if restart.any():
            walk = random_walk_with_restart(
                snapshot.transition, restart, r.restart_probability, r.tolerance, r.max_iterations
            )
            scores, iterations, change, converged = walk.scores, walk.iterations, walk.change, walk.converged
        else:
            scores, iterations, change, converged = np.zeros(snapshot.size), 0, 0.0, True
        walk_seconds = time.perf_counter() - t0
        diffusion = scores[snapshot.entities :]
        dense = passage_similarity(snapshot.chunk_vectors, vector)
        return Ranking(
            query, vector, facts, activations, scores, iterations, change, converged, walk_seconds,
            diffusion, dense, fuse(diffusion, dense, r.epsilon),
        )  # fmt: skip

    def _select(self, rankings: Sequence[Ranking], snapshot: WalkSnapshot) -> list[tuple[str, float]]:
        k = self.recipe.top_k if self.recipe.budget is None else max(self.recipe.top_k, PASSAGE_POOL)
        if len(rankings) == 1:
            return rankings[0].best(snapshot.chunk_ids, k)
        return select_split([rk.best(snapshot.chunk_ids, 2 * k) for rk in rankings], k)

    def _passage_rows(self, chunk_ids: list[str]) -> list[dict[str, Any]]:
        return self.context.graph.read("diffusion/passages_with_gists", ids=chunk_ids) if chunk_ids else []

    def _offline_answer(
        self,
        question: str,
        rankings: Sequence[Ranking],
        selected: Sequence[tuple[str, float]],
        snapshot: WalkSnapshot,
    ) -> tuple[str, dict[str, Any]]:
        """The best QA pair of the returned passages, ``N/A`` below the memory's threshold;
        with what the trace shows about it."""
        vector = rankings[0].vector if len(rankings) == 1 else self.context.embedder.embed_query(question)
        threshold = self._na_threshold(snapshot)
        chunk_ids = [c for c, _ in selected]
        best = best_qa_pair(self.context, question, np.asarray(vector, dtype=np.float32), chunk_ids)
        shown: dict[str, Any] = {"threshold": threshold}
        if best is None:
            return NA, shown
        qa, score = best
        answer = ", ".join(qa.answer_names)
        shown.update(
            {"qa_id": qa.qa_id, "question": qa.question, "answer": answer, "score": score, "chunk_id": qa.chunk_id}
        )  # fmt: skip
        return (answer if score >= threshold else NA), shown

    def _na_threshold(self, snapshot: WalkSnapshot) -> float:
        """The memory's N/A threshold for this reranker and recipe, calibrated once per snapshot."""
        r = self.recipe
        key = (self.context.reranker.name, r.na_probes, r.top_k, r.na_false_accept)
        with snapshot.lock:
            if key not in snapshot.na_thresholds:
                snapshot.na_thresholds[key] = calibrate_na_threshold(
                    self.context, snapshot, r.na_probes, r.top_k, r.na_false_accept
                )
            return snapshot.na_thresholds[key]

    def _details(
        self,
        rankings: Sequence[Ranking],
        selected: Sequence[tuple[str, float]],
        snapshot: WalkSnapshot,
        rebuilt: bool,
        titles: dict[str, str],
    ) -> DiffusionDetails:
        details = DiffusionDetails(sub_questions=[rk.sub_question for rk in rankings])
        details.snapshot = {
            "entities": snapshot.entities, "chunks": len(snapshot.chunk_ids), "edges": snapshot.edges,
            "edge_kinds": dict(snapshot.edge_kinds), "build_ms": snapshot.build_seconds * 1000, "rebuilt": rebuilt,
        }  # fmt: skip
        for rk in rankings:
            details.walks.append({
                "sub_question": rk.sub_question, "iterations": rk.iterations, "change": rk.change,
                "converged": rk.converged, "ms": rk.walk_seconds * 1000,
            })  # fmt: skip
            details.facts.extend(
                {"sub_question": rk.sub_question, "fact_id": f["fact_id"], "text": f["text"], "score": f["score"]}
                for f in rk.facts
            )  # fmt: skip
            details.entities.extend(_top_entities(rk, snapshot))
        normalised = [(minmax(rk.diffusion), minmax(rk.dense)) for rk in rankings]
        for chunk_id, score in selected:
            i = snapshot.chunk_index[chunk_id]
            best = max(range(len(rankings)), key=lambda j: rankings[j].fused[i])
            rk, (diffusion_norm, dense_norm) = rankings[best], normalised[best]
            details.passages.append({
                "chunk_id": chunk_id, "title": titles.get(chunk_id) or "", "sub_question": rk.sub_question,
                "score": score, "diffusion": float(rk.diffusion[i]), "dense": float(rk.dense[i]),
                "diffusion_norm": float(diffusion_norm[i]), "dense_norm": float(dense_norm[i]),
            })  # fmt: skip
        return details


def _top_entities(rk: Ranking, snapshot: WalkSnapshot) -> list[dict[str, Any]]:
    """The entities with the most mass after the walk, with their starting activation."""
    start = {a.entity: a for a in rk.activations}
    entity_scores = rk.walk[: snapshot.entities]
    out = []
    for i in top_indices(entity_scores, DETAIL_ENTITIES):
        if entity_scores[i] <= 0:
            break
        a = start.get(i)
        out.append({
            "sub_question": rk.sub_question, "entity_id": snapshot.entity_ids[i], "name": snapshot.entity_names[i],
            "walk": float(entity_scores[i]), "activation": a.value if a else 0.0,
            "fact_evidence": a.fact_evidence if a else 0.0, "hits": a.hits if a else 0,
            "chunks": int(snapshot.chunk_counts[i]),
        })  # fmt: skip
    return out


def dense_tier(snapshot: WalkSnapshot, dense: np.ndarray) -> list[tuple[str, float]]:
    """The budget's passage tier, ``(chunk id, cosine)`` best first, from ``dense``, the question's
    cosine with every passage of the snapshot. That is what the dense search of
    :func:`~engramdb.retrieval.packing.passage_tier` finds, without the vector search and its second
    graph read (the passages' rows come in the strategy's one read), and exact where a vector index
    may approximate. Measured (``bench_budget_vs_release.py --strategies diffusion,bm25``, three
    runs each way, alternating): ask p50 at budget 256 over the release before budgets 0.82 / 1.04 /
    0.94x, against 1.08 / 1.08 / 1.19x with the search; answer in evidence identical on all four
    question sets at every budget."""
    return [(snapshot.chunk_ids[i], float(dense[i])) for i in top_indices(dense, PASSAGE_POOL)]


def paired_evidence(
    rows: Sequence[dict[str, Any]], scores: dict[str, float], gists: bool = True
) -> list[Evidence]:
    """Each passage, then (``gists``) its gist when it has one, in the passages' order."""
    out: list[Evidence] = []
    for row in rows:
        chunk_id, score = row["chunk_id"], scores[row["chunk_id"]]
        title = row.get("title") or ""
        out.append(Evidence(
            kind="passage", id=chunk_id, text=passage_text(title, row["text"]), score=score, doc_id=row["doc_id"],
            chunk_ids=(chunk_id,), metadata={"title": title, "gist_id": row.get("gist_id") or ""},
        ))  # fmt: skip
        if gists and row.get("gist_text"):
            out.append(Evidence(
                kind="gist", id=row["gist_id"], text=row["gist_text"], score=score, doc_id=row["doc_id"],
                chunk_ids=(chunk_id,), metadata={"passage_id": chunk_id, "title": title, "method": row["gist_method"]},
            ))  # fmt: skip
    return out


def best_facts(rankings: Sequence[Ranking], limit: int) -> list[Evidence]:
    """The ``limit`` facts that matched the question (or any of its sub-questions) best, as evidence of
    their own: the walk starts from them, and a fact states in one line what a passage says in
    several. The packer keeps them in reserve for the room where the passages' whole units end
    (:func:`~engramdb.retrieval.packing.with_reserve`): at 128 tokens a passage cut to its best
    sentence held the answer less often than the best facts. Measured on copies of one memory
    (the 4.0 tables' home), answer in evidence at 128 / 256 / 512 tokens, in questions, for 2 / 3 /
    4 / 5 facts: set A 0 -1 0 / 0 -1 0 / 0 -1 0 / -1 -2 0; set B +3 +2 0 / +3 0 0 / +5 +2 0 / +7 +1 0;
    set C +2 0 0 / +3 0 0 / +4 0 0 / +5 +1 0; set W +2 -2 0 / +4 -2 0 / +6 0 0 / +9 +1 0. Facts
    leading the evidence instead (before any passage) gained at 128 and lost at 256 on three of the
    four sets. MuSiQue dev (not used to choose): +3 +2 0 with 4 facts."""
    best: dict[str, dict[str, Any]] = {}
    for rk in rankings:
        for f in rk.facts:
            if (
                f["text"]
                and f["chunk_id"]
                and (f["fact_id"] not in best or f["score"] > best[f["fact_id"]]["score"])
            ):
                best[f["fact_id"]] = f
    top = sorted(best.values(), key=lambda f: -f["score"])[:limit]
    return [
        Evidence(kind="fact", id=f["fact_id"], text=f["text"], score=f["score"], doc_id=f["doc_id"],
                 chunk_ids=(f["chunk_id"],))
        for f in top
    ]  # fmt: skip


def passages_first(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The ranking a budget is filled from: every passage by fused score, then the gists.

    A gist restates its passage in fewer words and rarely holds what the passage does not (of 520
    budgeted asks over four question sets, 5 had the answer in a gist alone). Paired with its
    passage, each gist took a turn beside the dense passages and pushed a passage out; after the
    passages it only fills room they leave. Measured on a copy of one memory, answer in evidence
    at 256 / 512 tokens: heldout-2wiki 66.7 / 74.4 → 76.9 / 82.1%, heldout-people 51.2 / 81.4 →
    55.8 / 88.4%, heldout-silver 50.0 / 64.7 → 50.0 / 61.8% (one question's passage order), 128
    unchanged on all three."""
    return [e for e in evidence if e.kind != "gist"] + [e for e in evidence if e.kind == "gist"]


# --------------------------------------------------------------------------- offline answer


def best_qa_pair(
    context: AskContext, question: str, vector: np.ndarray, chunk_ids: Sequence[str]
) -> tuple[QACandidate, float] | None:
    """The QA pair of the top passages that the reranker scores best against the question."""
    scored = context.reranker.score(question, qa_candidates(context, vector, chunk_ids, via="passage"))
    return (scored[0].qa, float(scored[0].score)) if scored else None


def calibrate_na_threshold(
    context: AskContext, snapshot: WalkSnapshot, probes: int, passages: int, false_accept: float
) -> float:
    """The offline N/A threshold, read off the memory itself.

    The offline answer is the best of the QA pairs in ``passages`` returned
    passages. How high does that best score get when the passages have nothing
    to do with the question? Each probe takes a question the memory itself
    holds (a QA pair of a randomly drawn passage), draws ``passages`` other
    passages at random, and scores their QA pairs against it with the same
    reranker and the same cosine inputs as :func:`best_qa_pair`; the best score
    is one sample of "unrelated evidence". The threshold is the
    ``1 − false_accept`` quantile of those samples: an answer is given only when
    its QA pair beats what unrelated passages reach in all but ``false_accept``
    of cases. Deterministic per namespace (the draw is seeded by its name) and
    computed once per snapshot; it uses no evaluation question. With fewer than
    two passages there is nothing unrelated to sample and every best QA pair is
    accepted (threshold 0). Passages without a vector (a document whose ingest
    has not finished) are never drawn: no question can return them either.
    """
    # the passages a question can return: those with a vector (their snapshot row is not all zeros)
    usable = np.flatnonzero(np.any(snapshot.chunk_vectors != 0, axis=1))
    if len(usable) < 2:
        return 0.0
    rng = np.random.default_rng(zlib.crc32(context.namespace.encode("utf-8")))
    others = min(passages, len(usable) - 1)
    samples = []
    for _ in range(probes):
        draw = usable[rng.choice(len(usable), size=others + 1, replace=False)]
        probe_chunk = snapshot.chunk_ids[draw[0]]
        held = sorted(
            qa_candidates(context, snapshot.chunk_vectors[draw[0]], [probe_chunk], via="passage"),
            key=lambda c: c.qa_id,
        )
        if not held:
            continue
        probe = held[int(rng.integers(len(held)))]
        vector = context.vectors.get_vectors(QA_COLLECTION, context.namespace, [probe.qa_id]).get(probe.qa_id)
        if vector is None:
            continue
        unrelated = [snapshot.chunk_ids[i] for i in draw[1:]]
        samples.append(
            _score(context.reranker, probe.question, qa_candidates(context, vector, unrelated, via="passage"))
        )
    if not samples:
        return 0.0
    return float(np.quantile(np.asarray(samples), 1.0 - false_accept))


def _score(reranker: Reranker, question: str, candidates: Sequence[QACandidate]) -> float:
    scored = reranker.score(question, candidates)
    return float(scored[0].score) if scored else 0.0

"""Stage ``clusters``: CAM's hierarchical memory, grown batch by batch (never rebuilt to add a batch).

What lives where
----------------
* **Chunk network (level 0).** ``(:Chunk)-[:SIMILAR {weight, level: 0}]->(:Chunk)``,
  stored once per pair. A new chunk links to its top-k chunks by
  ``α·cos + (1-α)·exp(-(i-j)²/2σ²)`` above θ; candidates come from the
  Qdrant chunk vectors (a nearest-neighbour search, plus the chunks of the
  same document within 3σ positions, where proximity can lift a link over θ),
  never from comparing all pairs, among the chunks already in the network or
  in the same batch (a chunk not indexed yet links when its own turn comes). Chunks never change, so their links only
  accumulate; a deleted chunk takes its links with it.
* **Replicas.** ``(:Replica {level, node_id, label, members})-[:REPLICA_OF]->(node)``:
  one per connected component of the node's ego network, ``members`` being
  that component. ``label`` is the id of the cluster one level up the replica
  belongs to. Replicas are the whole state label propagation needs, so the
  next batch, in another process or after a restart, continues from them.
  Group lookups go through the ``replica_label`` index (namespace, level, label).
* **Clusters.** ``(:Cluster {id, level, title, summary, sources, basis, size,
  revision})`` with ``HAS_MEMBER`` to chunks (level 1) or to clusters one
  level down, and ``SIMILAR`` links among clusters of one level: the level's
  network is made of the clusters' connections one level down (CAM's
  inter-cluster connections: a replica of one linked to a replica of the
  other), weighted by the summed weight of those links, so an upper level
  only connects what its members connected and the hierarchy narrows towards
  one root per connected region of the chunk network. ``sources`` are the
  chunks the summary's text comes from (its provenance as evidence),
  ``basis`` fingerprints the members it was written from. Each cluster has a
  vector in the ``clusters`` collection (payload ``kind = "L<level>"``): the
  embedding of its summary, so a cluster competes with chunks on equal terms
  when a question is matched against every level (a centroid of member
  vectors would not: the mean of related unit vectors is closer to almost any
  query on their topic). A cluster's id is the label that formed it, so it
  keeps its id while it grows. Level 1 keeps single-chunk clusters (every
  chunk belongs to a cluster); above, a group needs two members, otherwise its
  one member is a root. A single-chunk cluster *is* its chunk: its summary is
  the chunk's lead sentence and its vector the chunk's (payload ``kind =
  "S1"``), with no model call and no embedding: a summary of one chunk would
  say nothing the chunk does not, and with a model it would cost one call per
  isolated chunk (on 2Wiki, one level-1 cluster in eight).

How a batch grows the hierarchy (:meth:`ClusterStage.grow`)
------------------------------------------------------------
For level L = 0, 1, ...: link the *dirty* nodes (new chunks; clusters that
were created or whose members changed), re-replicate only the affected nodes
and propagate labels from them
(:func:`engramdb.ingestion.stages.cluster_algorithms.update_level`). The label
groups that gained or lost a member, or hold a member whose summary changed,
are looked at one level up: their member lists are rewritten, and their
summary only when the members it rests on changed (its ``basis``); only
re-summarised clusters are re-embedded. A level hands up the clusters whose
members changed (to re-link) and those whose summary changed (whose parents'
summaries may rest on them), so a batch stops rippling upwards where nothing
changes any more, or at ``max_levels``. Deleting a document is the same walk
with the document's chunks as removed nodes.

Each level is written in one transaction. Changed clusters are written with
``pending = true`` until the level above has absorbed them, and a cluster
whose group shrank below the minimum is first marked ``dissolved`` (it loses
its members at once) and removed by the next level once it has read its
state; a run interrupted between levels is therefore finished by the next run,
which starts by collecting pending clusters.

Summaries: with a chat model, our own prompt over the members closest to the
cluster's centroid; offline (or if the model fails), the lead sentences of the
members closest to the centroid, which is deterministic and costs no model.
A cluster of one chunk is never summarised by the model nor embedded (see
above). Summaries are embedded in one call per level, so a batch pays for the
clusters it changed, not for the hierarchy.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engramdb.ingestion.stages.base import (
    MemoryStage,
    ProgressCallback,
    StageChunk,
    StageContext,
    StageReport,
    register_stage,
)
from engramdb.ingestion.stages.cluster_algorithms import (
    LevelChange,
    LevelView,
    NodeState,
    Replica,
    edge_score,
    group_members,
    growth_token,
    inter_cluster_links,
    top_neighbours,
    update_level,
)
from engramdb.platform.errors import InputError
from engramdb.platform.storage import CHUNK_COLLECTION
from engramdb.platform.vectors import VectorPoint

log = logging.getLogger("engramdb")

#: One point per cluster, keyed by the cluster id; the vector is its summary's; payload ``kind = "L<level>"``.
CLUSTER_COLLECTION = "clusters"
#: Nearest chunks read per new chunk, as a multiple of k + 1: chunks not yet in the network are skipped,
#: so a search of exactly k + 1 could come up short while a memory's backlog is being indexed.
SEARCH_FACTOR = 3
#: Highest level a hierarchy can have (the cap of ``ClusterSettings.max_levels``).
LEVEL_CAP = 20
#: The ``kind`` of every cluster vector that is not a single chunk's (what a search over all levels wants).
SUMMARY_KINDS = tuple(f"L{level}" for level in range(1, LEVEL_CAP + 1))
#: Rows per Cypher call when reading node states or member texts (keeps each query's parameters small).
READ_SLICE = 2000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")

SUMMARY_PROMPT = """You maintain the index of a long-term memory. The items below (passages, or summaries \
of groups of passages) were grouped together because they are about related things.
Write one short paragraph (two to four sentences) saying what the group covers: the main people, places, \
works, organisations and events, and how they are connected. Use full names, state facts plainly, \
do not speculate, and reply with the paragraph only."""


class ClusterSettings(BaseModel):
    """The stage's knobs (``StageContext.options["clusters"]``).

    k, α, σ and θ shape the chunk network (the levels above link through it).
    k, α and σ are the CAM paper's (k = 10; α and σ the middle of its grids).
    θ is not: the paper's 0.5 / 0.7 suit its embedder, while MiniLM scores
    clearly related Wikipedia paragraphs lower. With α = 0.7 and θ = 0.3 a
    link across documents needs cosine >= 0.43; measured on 1,200 2Wiki
    passages (not on any evaluation question), the median nearest-neighbour
    cosine is 0.49, and at 0.43 a chunk has a median of 2 such neighbours and
    30% have none (at the paper's 0.5/α they would be 63%), so the network is
    sparse but connected where topics are shared. Chunks of one document next
    to each other link almost always, through the proximity term.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int = Field(10, ge=1, le=100, description="Links a new chunk makes (its top-k neighbours).")
    alpha: float = Field(0.7, ge=0.0, le=1.0, description="Weight of cosine similarity against proximity.")
    sigma: float = Field(
        1.5, gt=0.0, le=100.0, description="Decay of the proximity term, in chunk positions."
    )
    theta: float = Field(0.3, ge=0.0, le=1.0, description="Minimum link score.")
    max_rounds: int = Field(30, ge=1, le=1000, description="Cap on label-propagation rounds per level.")
    max_levels: int = Field(5, ge=1, le=LEVEL_CAP, description="Highest cluster level.")
    summary_sentences: int = Field(3, ge=1, le=20, description="Offline summary: lead sentences it keeps.")
    llm_members: int = Field(12, ge=1, le=100, description="LLM summary: members shown to the model.")
    llm_concurrency: int = Field(4, ge=1, le=64, description="LLM summary: parallel calls.")


@dataclass
class LevelOutcome:
    """What growing one level hands to the next one (all ids are clusters one level up)."""

    regrouped: set[str] = field(default_factory=set)  # created, or their members changed: links to recompute
    rewritten: set[str] = field(
        default_factory=set
    )  # their summary changed: their parents' summaries may too
    dissolved: set[str] = field(default_factory=set)  # their group fell apart: they leave the level
    view: LevelView | None = None  # the level below as it now stands (saves reloading it)


@dataclass(frozen=True)
class MemberText:
    """A member as its cluster's summary sees it; ``sources`` are the chunks its own text came from."""

    id: str
    title: str
    text: str
    sources: tuple[str, ...] = ()


#: The keys of :meth:`ClusterStage.health` that count broken invariants (the others are sizes).
HEALTH_PROBLEMS = (
    "unreachable_chunks",
    "bad_member_edges",
    "undersized",
    "wrong_size",
    "leftovers",
    "orphan_replicas",
)


def health_problems(health: Mapping[str, int]) -> dict[str, int]:
    """The invariants a hierarchy breaks, with their counts (empty when it is healthy)."""
    return {key: health[key] for key in HEALTH_PROBLEMS if health[key]}


@register_stage
class ClusterStage(MemoryStage):
    """CAM hierarchy: chunk network, ego-network replicas, incremental label propagation, summaries."""

    name = "clusters"
    # 2: upper levels link only through the replica edges that cross two clusters (1 linked every
    # label of a neighbour); a hierarchy built by another version is rebuilt whole (index_namespace)
    version = "2"
    collections = (CLUSTER_COLLECTION,)
    summary = "hierarchical clusters of chunks with summaries, grown incrementally (CAM)"
    batch_size = 10_000  # one growth step for a whole backlog: cheaper than many small ones

    def __init__(self, context: StageContext) -> None:
        super().__init__(context)
        #: What the last delete_document did (for callers and tests).
        self.last_delete: StageReport | None = None
        context.vectors.ensure_collection(CHUNK_COLLECTION, context.embedder.dim)
        raw = context.options.get(self.name, {})
        try:
            self.settings = raw if isinstance(raw, ClusterSettings) else ClusterSettings(**(raw or {}))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise InputError(f"invalid settings for stage 'clusters': {problems}") from exc

    # ------------------------------------------------------------------ stage API
    def index_chunks(self, chunks: Sequence[StageChunk]) -> StageReport:
        return self.grow(chunks, ())

    def delete_document(self, doc_id: str, chunk_ids: Sequence[str]) -> None:
        """Take the document's chunks out of the hierarchy. When no other document's chunk is in
        it, nothing of the hierarchy survives the delete, so it is cleared outright: the same end
        as the level-by-level walk (every cluster dissolves), at a fraction of the cost."""
        if chunk_ids and not self.context.graph.read(
            "clusters/other_document_indexed", doc_id=doc_id, stage=self.name
        ):
            started = time.perf_counter()
            self.clear()
            self.last_delete = StageReport(
                self.name, written={"cleared": 1}, seconds=time.perf_counter() - started
            )
            return
        self.last_delete = self.grow((), chunk_ids)

    def remove_chunks(self, chunk_ids: Sequence[str]) -> StageReport:
        """Take chunks out of the hierarchy but keep them in memory (the next run adds them again).

        The same incremental walk as a delete; the chunks lose the stage marker
        first, so they count as not indexed: a run cut short in between leaves
        chunks that the next run indexes again (their links and replicas are
        recomputed), never chunks marked as indexed that no cluster holds.
        Benchmarks use it to bring a memory back to where it was before a
        batch, and to time the removal path.
        """
        for start in range(0, len(chunk_ids), READ_SLICE):
            ids = list(chunk_ids[start : start + READ_SLICE])
            self.context.graph.write("clusters/unmark_chunks", ids=ids, stage=self.name)
        return self.grow((), chunk_ids)

    def clear(self) -> None:
        """Forget the namespace's whole hierarchy: links, replicas, clusters, their vectors and the markers."""
        graph = self.context.graph
        for query in ("clusters/clear_replicas", "clusters/clear_clusters", "clusters/clear_chunk_links"):
            while graph.write(query, limit=20_000)[0]["deleted"]:
                pass
        graph.write("clusters/clear_markers", stage=self.name)
        self.context.vectors.delete(CLUSTER_COLLECTION, self.context.namespace)

    def index_namespace(self, progress: ProgressCallback | None = None) -> StageReport:
        """Index every chunk the stage has not indexed, then finish any level an interrupted run left pending.

        A hierarchy that another version of the stage built is cleared first and built again: growth
        keeps the invariants of its own version only, so mixing two would leave a hierarchy neither
        version would build."""
        if self.stale():
            self.clear()
        report = super().index_namespace(progress)
        if self._pending():
            report.add(self.grow((), ()))
        return report

    def rebuild(self) -> StageReport:
        """Build the hierarchy again from scratch, every chunk in one growth step (what growth is compared to)."""
        self.clear()
        return self.index_namespace()

    def health(self) -> dict[str, int]:
        """Counts of the hierarchy (see ``cypher/clusters/hierarchy_health.cypher``): its size, and the
        invariants it breaks under the keys of :data:`HEALTH_PROBLEMS` (all zero when healthy)."""
        return self.context.graph.read("clusters/hierarchy_health", marker=self.marker)[0]

    def level_counts(self) -> list[dict[str, int]]:
        """Clusters, member edges and roots per level."""
        return self.context.graph.read("clusters/level_counts")

    # ------------------------------------------------------------------ growth
    def grow(self, new_chunks: Sequence[StageChunk], removed_chunks: Iterable[str]) -> StageReport:
        """Add ``new_chunks`` and take ``removed_chunks`` out, updating only what they affect, level by level."""
        started = time.perf_counter()
        report = StageReport(self.name, chunks=len(new_chunks))
        pending = self._pending()
        step = LevelOutcome(dissolved=set(removed_chunks))
        links = self._chunk_links(new_chunks, report)
        level = 0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="engramdb-cluster-embed") as pool:
            while level <= self.settings.max_levels:
                step.regrouped |= pending.get((level, False), set())
                step.rewritten |= pending.get((level, False), set())
                step.dissolved |= pending.get((level, True), set())
                later = any(lvl > level for lvl, _ in pending)
                if level > 0 and not (step.regrouped or step.rewritten or step.dissolved or later):
                    break
                if level > 0:
                    links = self._cluster_links(level, step.regrouped - step.dissolved, step.view)
                rewritten = step.rewritten - step.dissolved
                step = self._grow_level(level, links, rewritten, step.dissolved, report, pool)
                level += 1
        report.written["levels_touched"] = level
        report.seconds = time.perf_counter() - started
        return report

    def _grow_level(
        self,
        level: int,
        links: Mapping[str, Mapping[str, float]],
        rewritten: set[str],
        removed: set[str],
        report: StageReport,
        pool: Executor,
    ) -> LevelOutcome:
        """One level: update its network and replicas, then the clusters above whose groups changed.

        The new summaries are embedded on ``pool`` while the level's transaction runs; the
        transaction commits only once their vectors are stored (see :meth:`_write_level`)."""
        view = LevelView(lambda ids: self._load_states(level, ids))
        token = growth_token(level, set(links) | rewritten, removed)
        change = update_level(
            view,
            links,
            removed,
            token=token,
            level=level,
            max_rounds=self.settings.max_rounds,
            replace_edges=level > 0,
        )
        _count(report, "lpa_rounds", change.propagation.rounds)
        _count(report, "lpa_capped_levels", 0 if change.propagation.converged else 1)
        # The clusters above re-link when one of their members was re-replicated or relabelled (the edges
        # crossing clusters are replica edges), or gained or lost a link; created or regrouped ones too.
        relinked = {
            label
            for node in change.affected
            for label in view.state(node).labels() | view.stored_labels.get(node, frozenset())
        }
        keep, dissolve, existing = self._plan_parents(level, view, change, rewritten, relinked)
        rows, fresh, store_vectors = self._summarise(level, keep, existing, token, report, pool)
        regrouped = {label for label in keep if label not in existing or label in change.changed_labels}
        regrouped |= relinked & set(keep)
        rows = [{**row, "pending": True} for row in rows if row["id"] in regrouped or row["id"] in fresh]
        edge_rows = _edge_rows(links, removed)
        self._write_level(
            level, view, change, links, rewritten, removed, edge_rows, rows, dissolve, store_vectors
        )
        parent = level + 1
        for key, value in ((f"links_level_{level}", len(edge_rows)), ("links", len(edge_rows)),
                           ("replicas", sum(len(view.state(n).replicas) for n in change.affected)),
                           (f"summaries_level_{parent}", len(fresh)), ("summaries", len(fresh)),
                           ("clusters_written", len(rows)),
                           ("clusters_created", sum(1 for r in rows if r["id"] not in existing)),
                           ("clusters_dissolved", len(dissolve)),
                           (f"created_level_{parent}", sum(1 for r in rows if r["id"] not in existing)),
                           (f"dissolved_level_{parent}", len(dissolve)),
                           ("clusters_removed", len(removed) if level > 0 else 0)):  # fmt: skip
            _count(report, key, value)
        return LevelOutcome(regrouped=regrouped, rewritten=fresh, dissolved=set(dissolve), view=view)

    def _plan_parents(
        self, level: int, view: LevelView, change: LevelChange, rewritten: set[str], relinked: set[str]
    ) -> tuple[dict[str, set[str]], list[str], dict[str, dict[str, Any]]]:
        """The groups one level up to look at, the clusters to dissolve, and those of them that exist.

        A group is looked at when its membership changed, when its members'
        links changed (``relinked``), or when one of its members got a new
        summary (its own summary may rest on it). Level 1 keeps groups
        of one chunk, so every chunk has a cluster; above, a group needs two
        members.
        """
        labels = (
            change.changed_labels
            | relinked
            | {lab for node in rewritten for lab in view.state(node).labels()}
        )
        if not labels:
            return {}, [], {}
        parent = level + 1
        groups = group_members(self._stored_groups(level, labels), change, labels)
        min_size = 1 if parent == 1 else 2
        keep = {label: members for label, members in groups.items()
                if len(members) >= min_size and parent <= self.settings.max_levels}  # fmt: skip
        existing = self._existing_clusters(set(groups))
        dissolve = sorted(label for label in groups if label not in keep and label in existing)
        return keep, dissolve, existing

    def _write_level(
        self, level: int, view: LevelView, change: LevelChange, links: Mapping[str, Mapping[str, float]],
        rewritten: set[str], removed: set[str], edge_rows: list[dict[str, Any]], rows: list[dict[str, Any]],
        dissolve: list[str], store_vectors: Callable[[], None],
    ) -> None:  # fmt: skip
        """Everything one level changed, in one transaction; then the vectors of clusters that went.

        ``store_vectors`` (the new summaries' vectors) runs inside the transaction, after its queries
        and before the commit: the summaries are embedded while the queries run, and the vectors are
        still stored before the graph commits, so a run cut short in between leaves the stored basis
        behind the vectors and the next run writes and embeds those summaries again."""
        steps: list[tuple[str, Mapping[str, Any]]] = []
        if removed:
            query = "clusters/remove_chunk_state" if level == 0 else "clusters/remove_clusters"
            steps.append((query, {"ids": sorted(removed)}))
        if level > 0 and links:
            steps.append(("clusters/drop_cluster_edges", {"ids": sorted(links)}))
        if edge_rows:
            steps.append(("clusters/write_edges", {"level": level, "rows": edge_rows}))
        # Only the affected nodes whose replicas came out different are rewritten (about a third
        # come out as they were stored).
        rewrite = [node for node in sorted(change.affected) if view.replicas_changed(node)]
        if rewrite:
            steps.append(("clusters/delete_replicas", {"level": level, "ids": rewrite}))
            steps.append(("clusters/create_replicas", {"level": level, "rows": _replica_rows(view, rewrite)}))
        if rows:
            steps.append(("clusters/upsert_clusters", {"level": level + 1, "rows": rows}))
        if dissolve:
            steps.append(("clusters/mark_dissolved", {"ids": dissolve}))
        if level > 0 and (links or rewritten):
            steps.append(("clusters/clear_pending", {"ids": sorted(set(links) | rewritten)}))
        if steps:
            self.context.graph.write_many(steps, before_commit=store_vectors)
        else:
            store_vectors()
        gone = dissolve + (sorted(removed) if level > 0 else [])
        if gone:
            self.context.vectors.delete(CLUSTER_COLLECTION, self.context.namespace, keys=gone)

    # ------------------------------------------------------------------ links
    def _chunk_links(self, chunks: Sequence[StageChunk], report: StageReport) -> dict[str, dict[str, float]]:
        """Each new chunk's top-k links, from Qdrant nearest neighbours plus same-document neighbours."""
        if not chunks:
            return {}
        s, ctx = self.settings, self.context
        ns = ctx.namespace
        vectors = ctx.vectors.get_vectors(CHUNK_COLLECTION, ns, [c.id for c in chunks])
        window = max(1, math.ceil(3 * s.sigma))
        siblings = self._document_chunks({c.doc_id for c in chunks})
        scored: dict[str, dict[str, float]] = {}
        for chunk in chunks:
            vector = vectors.get(chunk.id)
            scored[chunk.id] = {}
            if vector is None:
                _count(report, "chunks_without_vector", 1)
                continue
            for hit in ctx.vectors.search(CHUNK_COLLECTION, ns, vector, SEARCH_FACTOR * (s.k + 1)):
                same = hit.payload.get("doc_id") == chunk.doc_id
                distance = abs(int(hit.payload.get("position") or 0) - chunk.position)
                scored[chunk.id][hit.key] = edge_score(hit.score, same, distance, s.alpha, s.sigma)
        near = {
            (chunk.id, sid): abs(pos - chunk.position)
            for chunk in chunks if chunk.id in vectors
            for sid, pos in siblings.get(chunk.doc_id, []) if sid != chunk.id and abs(pos - chunk.position) <= window
        }  # fmt: skip
        sibling_vectors = ctx.vectors.get_vectors(CHUNK_COLLECTION, ns, sorted({sid for _, sid in near}))
        for (cid, sid), distance in near.items():
            if sid in sibling_vectors:
                cosine = float(np.dot(vectors[cid], sibling_vectors[sid]))
                scored[cid][sid] = edge_score(cosine, True, distance, s.alpha, s.sigma)
        # Only a candidate scoring at least θ can become a link (top_neighbours drops the others), so
        # only those, and the batch's own chunks, are looked up: most of the nearest hits score below θ.
        reachable = {o for per in scored.values() for o, v in per.items() if v >= s.theta}
        valid = self._indexable(sorted(reachable | set(scored)), set(scored))
        return {
            cid: top_neighbours(cid, {o: v for o, v in per.items() if o in valid}, s.k, s.theta)
            for cid, per in scored.items() if cid in valid
        }  # fmt: skip

    def _cluster_links(
        self, level: int, clusters: set[str], below: LevelView | None
    ) -> dict[str, dict[str, float]]:
        """The links of these clusters among the clusters of their level: the replica edges crossing them
        one level down (CAM's inter-cluster connections, see
        :func:`engramdb.ingestion.stages.cluster_algorithms.inter_cluster_links`), so a level only connects what
        its members connected and the hierarchy narrows towards one root per connected region.
        """
        if not clusters:
            return {}
        view = below or LevelView(lambda ids: self._load_states(level - 1, ids))
        groups = self._stored_groups(level - 1, clusters)
        weights = inter_cluster_links(view, {cid: groups.get(cid, []) for cid in clusters})
        targets = sorted({o for per in weights.values() for o in per})
        alive = {r["id"] for r in self._read_slices("clusters/existing_clusters", targets)
                 if not r["dissolved"] and r["level"] == level}  # fmt: skip
        return {cid: {o: round(w, 6) for o, w in per.items() if o in alive} for cid, per in weights.items()}

    # ------------------------------------------------------------------ summaries
    def _summarise(
        self,
        level: int,
        groups: Mapping[str, set[str]],
        existing: Mapping[str, Mapping[str, Any]],
        revision: str,
        report: StageReport,
        pool: Executor,
    ) -> tuple[list[dict[str, Any]], set[str], Callable[[], None]]:
        """Rows for the clusters one level up whose members changed, which of them got a new summary,
        and what stores the new summaries' vectors (embedded on ``pool`` meanwhile).

        A summary rests on the cluster's most central members (the *basis*: their
        ids and texts). When a changed cluster still has the basis its stored
        summary was written from, the summary, its vector and everything above
        stay as they are, and only the member list is rewritten; otherwise the
        summary is written again (extractive, or by the chat model), embedded,
        and the cluster is dirty for the level above. This is what keeps a
        small batch from rippling to the top of the hierarchy.
        """
        if not groups:
            return [], set(), _nothing
        ctx = self.context
        member_ids = sorted({m for members in groups.values() for m in members})
        collection = CHUNK_COLLECTION if level == 0 else CLUSTER_COLLECTION
        vectors = ctx.vectors.get_vectors(collection, ctx.namespace, member_ids)
        texts = {r["id"]: MemberText(r["id"], r["title"] or "", r["text"] or "", tuple(r["sources"] or ()))
                 for r in self._read_slices("clusters/member_texts", member_ids, level=level)}  # fmt: skip
        labels = sorted(groups)
        ordered = {label: [texts[m] for m in central_members(sorted(groups[label]), vectors) if m in texts]
                   for label in labels}  # fmt: skip
        extractive = {
            label: extractive_summary(ordered[label], self.settings.summary_sentences) for label in labels
        }
        basis_size = self.settings.llm_members if ctx.chat_model is not None else None
        shown = {
            label: ordered[label][:basis_size] if basis_size else extractive[label][1] for label in labels
        }
        # A cluster of one chunk is that chunk: its summary is the chunk's lead sentence and its vector the
        # chunk's, with no model call and no embedding.
        single = {
            label for label in labels if len(groups[label]) == 1 and next(iter(groups[label])) in vectors
        }
        basis = {label: summary_basis(shown[label], single=label in single) for label in labels}
        fresh = [label for label in labels if (existing.get(label) or {}).get("basis") != basis[label]]
        written = [label for label in fresh if label not in single]
        summaries = {label: extractive[label][0] for label in fresh}
        if ctx.chat_model is not None and written:
            summaries.update(self._llm_summaries({label: ordered[label] for label in written}, report))
        for label in fresh:
            summaries[label] = summaries[label] or cluster_title(ordered[label]) or label
        store_vectors: Callable[[], None] = _nothing
        if fresh:
            texts = [summaries[label] for label in written]
            embedding = pool.submit(ctx.embedder.embed_documents, texts) if texts else None

            def upsert_vectors() -> None:
                embedded = embedding.result() if embedding is not None else []
                cluster_vectors = dict(zip(written, embedded, strict=True))
                cluster_vectors.update(
                    (label, vectors[next(iter(groups[label]))]) for label in fresh if label in single
                )
                ctx.vectors.upsert(CLUSTER_COLLECTION, ctx.namespace, [
                    VectorPoint(key=label, vector=cluster_vectors[label],
                                payload={"cluster_id": label, "kind": cluster_kind(level + 1, label in single),
                                         "level": level + 1})
                    for label in fresh
                ])  # fmt: skip

            store_vectors = upsert_vectors
            _count(report, "summaries_embedded", len(written))
        rows = []
        for label in labels:
            new = label in summaries
            old = existing.get(label) or {}
            rows.append({
                "id": label, "title": cluster_title(ordered[label]), "basis": basis[label],
                "summary": summaries[label] if new else old.get("summary") or "",
                "sources": _sources(shown[label]) if new else list(old.get("sources") or _sources(shown[label])),
                "revision": revision if new else old.get("revision") or revision,
                "members": [m.id for m in ordered[label]] + sorted(groups[label] - {m.id for m in ordered[label]}),
                "pending": new,
            })  # fmt: skip
        return rows, set(fresh), store_vectors

    def _llm_summaries(
        self, ordered: Mapping[str, Sequence[MemberText]], report: StageReport
    ) -> dict[str, str]:
        """Summaries by the chat model; a cluster whose call fails keeps its extractive summary."""
        from langchain_core.messages import HumanMessage, SystemMessage

        from engramdb.platform.llm import message_text

        model = self.context.chat_model
        assert model is not None
        labels = list(ordered)
        prompts = []
        for label in labels:
            items = ordered[label][: self.settings.llm_members]
            body = "\n\n".join(f"[{i}] {t.title}\n{_clip(t.text, 1200)}" for i, t in enumerate(items, 1))
            prompts.append([SystemMessage(SUMMARY_PROMPT), HumanMessage(f"Items:\n\n{body}")])
        replies = model.batch(
            prompts, config={"max_concurrency": self.settings.llm_concurrency}, return_exceptions=True
        )
        out: dict[str, str] = {}
        for label, reply in zip(labels, replies, strict=True):
            text = "" if isinstance(reply, Exception) else " ".join(message_text(reply).split())
            if text:
                out[label] = text
                _count(report, "llm_summaries", 1)
            else:
                _count(report, "llm_summary_fallbacks", 1)
                log.warning("cluster %s: LLM summary failed (%s); kept the extractive one", label, reply)
        return out

    # ------------------------------------------------------------------ reads
    def _load_states(self, level: int, ids: Iterable[str]) -> dict[str, NodeState]:
        out = {}
        for row in self._read_slices("clusters/node_states", list(ids), level=level):
            node_id = row["id"]
            replicas = [
                Replica(replica_id, node_id, label, frozenset(members or ()))
                for replica_id, label, members in row["replicas"]
            ]
            replicas.sort(key=lambda r: r.id)
            neighbours = {other: float(weight) for other, weight in row["neighbours"]}
            out[node_id] = NodeState(node_id, neighbours, replicas)
        return out

    def _stored_groups(self, level: int, labels: Iterable[str]) -> dict[str, list[str]]:
        return {r["label"]: r["members"]
                for r in self._read_slices("clusters/group_members", sorted(labels), key="labels", level=level)}  # fmt: skip

    def _existing_clusters(self, ids: set[str]) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self._read_slices("clusters/existing_clusters", sorted(ids))}

    def _indexable(self, ids: list[str], batch: set[str]) -> set[str]:
        """Chunks that can be linked: in the chunk network already, or in this batch.

        A chunk that is ingested but not indexed yet is left out even when it is
        near: it links when its own batch comes, and until then it is not part
        of the hierarchy (no replica, no cluster) for any other chunk to point at.
        """
        rows = self._read_slices("clusters/indexable_chunks", ids, marker=self.marker)
        return {r["id"] for r in rows if r["indexed"] or r["id"] in batch}

    def _document_chunks(self, doc_ids: set[str]) -> dict[str, list[tuple[str, int]]]:
        out: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for row in self._read_slices("clusters/document_chunks", sorted(doc_ids), key="doc_ids"):
            out[row["doc_id"]].append((row["id"], int(row["position"] or 0)))
        return {doc: rows for doc, rows in out.items() if len(rows) > 1}

    def _pending(self) -> dict[tuple[int, bool], set[str]]:
        """Clusters an interrupted run left for the level above, by (level, dissolved)."""
        out: dict[tuple[int, bool], set[str]] = defaultdict(set)
        for row in self.context.graph.read("clusters/pending_clusters"):
            out[(int(row["level"]), bool(row["dissolved"]))].add(row["id"])
        return dict(out)

    def _read_slices(
        self, query: str, ids: Sequence[str], key: str = "ids", **params: Any
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for start in range(0, len(ids), READ_SLICE):
            rows.extend(
                self.context.graph.read(query, **{key: list(ids[start : start + READ_SLICE])}, **params)
            )
        return rows


# ---------------------------------------------------------------------------- helpers


def cluster_kind(level: int, single: bool = False) -> str:
    """The ``kind`` payload of a cluster's vector: ``L<level>``, or ``S1`` for a cluster of one chunk.

    A one-chunk cluster's vector is its chunk's, so a search over every level
    that also searches the chunks leaves those out (``where={"kind": ...}``).
    """
    return f"S{level}" if single else f"L{level}"


def central_members(members: Sequence[str], vectors: Mapping[str, np.ndarray]) -> list[str]:
    """Members ordered by cosine to the group's centroid (members without a vector last), ties by id."""
    with_vec = [m for m in members if m in vectors]
    if not with_vec:
        return sorted(members)
    matrix = np.stack([vectors[m] for m in with_vec])
    mean = matrix.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    scores = matrix @ (mean / norm) if norm > 0 else np.zeros(len(with_vec))
    ranked = sorted(zip(with_vec, scores.tolist(), strict=True), key=lambda t: (-round(t[1], 6), t[0]))
    return [m for m, _ in ranked] + sorted(m for m in members if m not in vectors)


#: What ends a member text an offline summary (or a prompt) clipped; the packer reads it to know the
#: clipped part of a summary repeats a passage it has already given (retrieval/packing.py).
CLIP_MARK = "..."


def lead_sentence(text: str, max_words: int = 45) -> str:
    """The first sentence of a text, clipped to ``max_words``."""
    text = " ".join(text.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    words = sentence.split()
    return " ".join(words[:max_words]) + (f" {CLIP_MARK}" if len(words) > max_words else "")


def extractive_summary(members: Sequence[MemberText], sentences: int) -> tuple[str, list[MemberText]]:
    """The lead sentences of the most central members (already ordered), without repeats, and whose they are."""
    out: list[str] = []
    used: list[MemberText] = []
    for member in members:
        if len(out) >= sentences:
            break
        sentence = lead_sentence(member.text)
        used.append(member)
        if sentence and sentence not in out:
            out.append(sentence)
    return " ".join(out), used


def summary_basis(members: Sequence[MemberText], *, single: bool = False) -> str:
    """A fingerprint of the members a summary is written from (their ids and texts, in any order).

    ``single`` marks a cluster of one member, whose summary and vector are the
    member's own: it gets a summary of its own once it has company, even when
    the members shown stay the same.
    """
    digest = hashlib.sha1(b"single\x1e" if single else b"")
    for member in sorted(members, key=lambda m: m.id):
        digest.update(f"{member.id}\x1f{member.text}\x1e".encode())
    return digest.hexdigest()[:20]


def cluster_title(members: Sequence[MemberText], items: int = 3) -> str:
    """A caption: the titles of the most central members (a member cluster contributes its first item)."""
    out: list[str] = []
    for member in members:
        title = member.title.split(" · ")[0].strip()
        if title and title not in out:
            out.append(title)
        if len(out) >= items:
            break
    return " · ".join(out)


def _sources(members: Sequence[MemberText]) -> list[str]:
    """The chunks a summary's text comes from: the first source of each member it was written from."""
    return list(dict.fromkeys(m.sources[0] for m in members if m.sources))


def _edge_rows(links: Mapping[str, Mapping[str, float]], removed: set[str]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], float] = {}
    for a, per in links.items():
        for b, weight in per.items():
            if a != b and a not in removed and b not in removed:
                rows[(min(a, b), max(a, b))] = round(float(weight), 6)
    return [{"a": a, "b": b, "weight": w} for (a, b), w in sorted(rows.items())]


def _replica_rows(view: LevelView, node_ids: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {"id": r.id, "node_id": r.node_id, "label": r.label, "members": sorted(r.members)}
        for node_id in node_ids for r in view.state(node_id).replicas
    ]  # fmt: skip


def _nothing() -> None:
    """No vectors to store."""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(CLIP_MARK)] + CLIP_MARK


def _count(report: StageReport, key: str, value: int) -> None:
    report.written[key] = report.written.get(key, 0) + int(value)


__all__ = [
    "CLUSTER_COLLECTION",
    "SUMMARY_KINDS",
    "cluster_kind",
    "ClusterSettings",
    "ClusterStage",
    "LevelChange",
    "central_members",
    "cluster_title",
    "extractive_summary",
    "lead_sentence",
]

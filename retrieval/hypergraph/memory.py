"""The hypergraph working memory of one ``hypergraph`` ask, and where it lives in Neo4j.

A memory point is a hyperedge: a description and the two or more entities it
involves (HGMem's memory point). :class:`WorkingMemory` is the run's current
state in Python — the active version of every point, with the facts behind it
— and every change is also written to Neo4j by :class:`HypergraphStore`, one
transaction per step, so the run is legible to an analyst while and after it
happens::

    (:Query {id, question, strategy, created_at, namespace})-[:HAS_POINT]->(:MemoryPoint)
    (:MemoryPoint {id, point, version, step, seq, operation, description, active, doc_ids})
        -[:INVOLVES]->(:Entity)      the entities of the hyperedge (always >= 2)
        -[:SUPPORTED_BY]->(:Chunk)   the passages its description rests on
        -[:MERGED_FROM]->(:MemoryPoint)   the points a higher-order point was merged from
        -[:REVISES]->(:MemoryPoint)  the previous version of an updated point

Why versions: an *update* rewrites a point's description while its entities
stay, and a *merge* replaces its sources by one higher-order point. Keeping
each version as its own node (the old one marked inactive) lets the replay
query show every step exactly as it happened, instead of only the final text.

Also here: :func:`forget_document` (the document-delete cascade for kept runs)
and :func:`load_memory_run` / :func:`render_memory_run` for
``engramdb memory show QUERY_ID``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Console
from rich.markup import escape

from engramdb.platform.errors import EngramError, InputError
from engramdb.platform.graph import Graph
from engramdb.retrieval.results import QACandidate

#: Operations a step can apply to memory, in the order they are applied and written.
OPERATIONS = ("insert", "update", "merge")


@dataclass(frozen=True)
class Fact:
    """A relation retrieved from the stored graph: one GSW QA pair with its score.

    Its entities are the QA pair's question entities plus its answers, so a
    fact is itself a small hyperedge and facts sharing entities group into points.
    """

    qa: QACandidate
    score: float
    floor: float = 0.0  # offline: the score of a fact that only names its subject

    @property
    def relevant(self) -> bool:
        """Offline: the fact says more about the question than the bare name of what it is about."""
        return self.score > self.floor

    @property
    def entity_ids(self) -> frozenset[str]:
        return frozenset(self.qa.question_entity_ids) | frozenset(self.qa.answer_ids)

    @property
    def sentence(self) -> str:
        """The fact as one plain sentence: the question, then its answer."""
        question = self.qa.question.strip()
        return f"{question} {', '.join(self.qa.answer_names)}."


@dataclass(frozen=True)
class Point:
    """The current version of one memory point."""

    label: str  # "P3": stable across versions; what prompts, traces and the replay name
    version: int
    description: str
    entity_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    step: int
    operation: str
    facts: tuple[Fact, ...] = ()
    merged_from: tuple[str, ...] = ()  # labels of the source points (merge)
    relevance: float = 0.0

    def node_id(self, query_id: str) -> str:
        return f"{query_id}:{self.label}:v{self.version}"

    @property
    def relevant(self) -> bool:
        """Offline: at least one of its facts is relevant to the question."""
        return any(f.relevant for f in self.facts)


@dataclass(frozen=True)
class Change:
    """One operation applied to memory: the new point version and what it replaced."""

    point: Point
    revises: Point | None = None
    merged: tuple[Point, ...] = ()


@dataclass
class WorkingMemory:
    """The active memory points of one run and the changes of the current step."""

    points: dict[str, Point] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name, for prompts and traces
    used_labels: set[str] = field(default_factory=set)
    pending: list[Change] = field(default_factory=list)
    _counter: int = 0

    # Queries -------------------------------------------------------------
    def entity_ids(self) -> set[str]:
        return {e for p in self.points.values() for e in p.entity_ids}

    def facts(self) -> dict[str, Fact]:
        """Every fact behind an active point, by QA id (best score kept)."""
        out: dict[str, Fact] = {}
        for point in self.points.values():
            for fact in point.facts:
                if fact.qa.qa_id not in out or out[fact.qa.qa_id].score < fact.score:
                    out[fact.qa.qa_id] = fact
        return out

    def by_entities(self, entity_ids: Iterable[str]) -> Point | None:
        """The active point over exactly these entities, if any."""
        wanted = frozenset(entity_ids)
        return next((p for p in self.points.values() if frozenset(p.entity_ids) == wanted), None)

    def ranked(self) -> list[Point]:
        """Active points, most relevant first (ties: oldest label first)."""
        return sorted(self.points.values(), key=lambda p: (-p.relevance, _label_number(p.label)))

    def next_label(self) -> str:
        while True:
            self._counter += 1
            label = f"P{self._counter}"
            if label not in self.used_labels:
                return label

    # Operations ------------------------------------------------------------
    def insert(
        self, entity_ids: Sequence[str], description: str, *, step: int, chunk_ids: Sequence[str] = (),
        doc_ids: Sequence[str] = (), facts: Sequence[Fact] = (), relevance: float = 0.0, label: str | None = None,
    ) -> Point:  # fmt: skip
        entities = tuple(dict.fromkeys(entity_ids))
        if len(entities) < 2:
            raise ValueError(f"a memory point involves at least two entities, got {len(entities)}")
        label = label or self.next_label()
        if label in self.used_labels:
            raise ValueError(f"memory point {label} already exists")
        point = Point(
            label=label, version=1, description=description.strip(), entity_ids=entities,
            chunk_ids=tuple(dict.fromkeys(chunk_ids)), doc_ids=tuple(dict.fromkeys(doc_ids)), step=step,
            operation="insert", facts=tuple(facts), relevance=relevance,
        )  # fmt: skip
        self._record(Change(point))
        return point

    def update(
        self, label: str, description: str, *, step: int, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = (),
        facts: Sequence[Fact] = (), relevance: float | None = None,
    ) -> Point:  # fmt: skip
        """A new version of an active point: new description and support, same entities."""
        old = self._active(label)
        point = replace(
            old, version=old.version + 1, description=description.strip(), step=step, operation="update",
            chunk_ids=tuple(dict.fromkeys([*old.chunk_ids, *chunk_ids])),
            doc_ids=tuple(dict.fromkeys([*old.doc_ids, *doc_ids])), facts=_union_facts(old.facts, facts),
            merged_from=(), relevance=old.relevance if relevance is None else max(old.relevance, relevance),
        )  # fmt: skip
        self._record(Change(point, revises=old))
        return point

    def merge(self, labels: Sequence[str], description: str, *, step: int, label: str | None = None) -> Point:
        """A higher-order point whose entities are the union of its sources'; the sources leave memory."""
        sources = tuple(self._active(x) for x in dict.fromkeys(labels))
        if len(sources) < 2:
            raise ValueError("a merge needs at least two distinct memory points")
        label = label or self.next_label()
        if label in self.used_labels:
            raise ValueError(f"memory point {label} already exists")
        point = Point(
            label=label, version=1, description=description.strip(),
            entity_ids=tuple(dict.fromkeys(e for s in sources for e in s.entity_ids)),
            chunk_ids=tuple(dict.fromkeys(c for s in sources for c in s.chunk_ids)),
            doc_ids=tuple(dict.fromkeys(d for s in sources for d in s.doc_ids)), step=step, operation="merge",
            facts=_union_facts(*(s.facts for s in sources)), merged_from=tuple(s.label for s in sources),
            relevance=max(s.relevance for s in sources),
        )  # fmt: skip
        self._record(Change(point, merged=sources))
        return point

    def take_changes(self) -> list[Change]:
        """The changes since the last call (one step's worth), in the order applied."""
        changes, self.pending = self.pending, []
        return changes

    def _active(self, label: str) -> Point:
        if label not in self.points:
            raise ValueError(f"no active memory point {label}")
        return self.points[label]

    def _record(self, change: Change) -> None:
        for gone in (change.revises, *change.merged):
            if gone is not None:
                del self.points[gone.label]
        self.points[change.point.label] = change.point
        self.used_labels.add(change.point.label)
        self.pending.append(change)


def _union_facts(*groups: Iterable[Fact]) -> tuple[Fact, ...]:
    out: dict[str, Fact] = {}
    for group in groups:
        for fact in group:
            if fact.qa.qa_id not in out or out[fact.qa.qa_id].score < fact.score:
                out[fact.qa.qa_id] = fact
    return tuple(out.values())


def _label_number(label: str) -> int:
    digits = label.lstrip("P")
    return int(digits) if digits.isdigit() else 0


def new_query_id() -> str:
    """A fresh run id (never derived from user text)."""
    return f"hg-{uuid.uuid4().hex[:16]}"


class HypergraphStore:
    """One run's memory in Neo4j: create, write each step in one transaction, read neighbours, delete."""

    def __init__(self, graph: Graph, query_id: str) -> None:
        self.graph = graph
        self.query_id = query_id

    def create(self, question: str, strategy: str, max_steps: int) -> None:
        self.graph.write(
            "hypergraph/create_run", query_id=self.query_id, question=question, strategy=strategy,
            max_steps=max_steps,
        )  # fmt: skip

    def write_step(self, step: int, changes: Sequence[Change]) -> None:
        """Write one step's changes atomically; fails loudly if memory lost an entity meanwhile."""
        if not changes:
            return
        rows = [self._row(i, change) for i, change in enumerate(changes)]
        written = self.graph.write("hypergraph/write_points", query_id=self.query_id, rows=rows)
        missing = {r["id"] for r in rows} - {w["id"] for w in written}
        if missing:
            raise EngramError(
                f"memory changed during the ask: {len(missing)} memory point(s) of step {step} lost their "
                "entities (a document was deleted meanwhile); ask again"
            )

    def _row(self, seq: int, change: Change) -> dict[str, Any]:
        p = change.point
        return {
            "id": p.node_id(self.query_id), "point": p.label, "version": p.version, "step": p.step, "seq": seq,
            "operation": p.operation, "description": p.description, "entity_ids": list(p.entity_ids),
            "chunk_ids": list(p.chunk_ids), "doc_ids": list(p.doc_ids),
            "revises": change.revises.node_id(self.query_id) if change.revises else None,
            "merged_from": [s.node_id(self.query_id) for s in change.merged],
        }  # fmt: skip

    def neighbourhood(self, anchor_ids: Sequence[str], per_anchor: int, limit: int) -> list[dict[str, Any]]:
        """Neighbours of the anchors in the stored graph and in this run's active memory points."""
        if not anchor_ids:
            return []
        return self.graph.read(
            "hypergraph/neighbourhood", anchor_ids=list(anchor_ids), query_id=self.query_id,
            per_anchor=per_anchor, limit=limit,
        )  # fmt: skip

    def delete(self) -> dict[str, int]:
        return self.graph.write("hypergraph/delete_run", query_id=self.query_id)[0]


# --------------------------------------------------------------------------- kept runs


def forget_document(graph: Graph, doc_id: str) -> dict[str, int]:
    """Cascade a document delete into kept hypergraph memory (call it before or after the delete).

    The document's chunks stop supporting points; points stop involving the
    entities only it mentioned; points left with fewer than two entities, or
    whose support came only from this document, are removed. Returns the
    numbers of points touched and removed.
    """
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InputError("forget_document needs a document id")
    row = graph.write("hypergraph/forget_document", doc_id=doc_id)[0]
    return {"touched": int(row["touched"]), "removed": int(row["removed"])}


def load_memory_run(graph: Graph, query_id: str) -> list[dict[str, Any]]:
    """A kept run's memory points in the order they were written (see ``cypher/hypergraph/replay_run``).

    Raises InputError when the namespace holds no run with this id (e.g. it was
    not kept: runs are removed when the ask ends unless ``keep_memory`` is set).
    """
    rows = graph.read("hypergraph/replay_run", query_id=query_id)
    if rows:
        return rows
    header = graph.read("hypergraph/run_header", query_id=query_id)
    if not header:
        raise InputError(
            f"no hypergraph run {query_id!r} in namespace {graph.namespace!r} (runs are kept only with "
            "keep_memory=True / --keep-memory)"
        )
    return [{**header[0], "id": None}]  # a run whose points were all removed by document deletes


def render_memory_run(console: Console, rows: Sequence[dict[str, Any]]) -> None:
    """Print a kept run step by step: each operation, its point, entities and description."""
    if not rows:
        console.print("[yellow]no memory run[/]")
        return
    head = rows[0]
    console.print(
        f"[bold]Query[/] {escape(str(head['query_id']))}: {escape(str(head['question']))}", highlight=False
    )
    console.print(
        f"  [dim]strategy {escape(str(head['strategy']))}, created {escape(str(head['created_at']))}[/]"
    )
    points = [r for r in rows if r.get("id")]
    if not points:
        console.print("  [dim]no memory points left (their documents were deleted)[/]")
        return
    step = None
    for row in points:
        if row["step"] != step:
            step = row["step"]
            console.rule(f"step {step}")
        console.print(_point_line(row), highlight=False)
        console.print(f"      {escape(str(row['description']))}", highlight=False)
    active = sum(1 for r in points if r["active"])
    console.print(f"[dim]{len(points)} point versions, {active} in the final memory[/]")


def _point_line(row: dict[str, Any]) -> str:
    colour = {"insert": "green", "update": "cyan", "merge": "magenta"}.get(row["operation"], "white")
    where = ""
    if row.get("revises"):
        where = f" (revises {row['revises']})"
    if row.get("merged_from"):
        where = f" (merged from {', '.join(row['merged_from'])})"
    state = "" if row["active"] else " [dim](superseded)[/]"
    entities = "; ".join(row["entity_names"])
    return (
        f"  [{colour}]{row['operation']:<6}[/] {escape(row['point'])} v{row['version']}{escape(where)}{state}"
        f"  [dim]{escape(entities)} · {row['chunks']} chunks[/]"
    )

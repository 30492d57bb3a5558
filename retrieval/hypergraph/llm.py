"""The LLM side of the ``hypergraph`` strategy: our prompts, strict parsing, one retry.

Two calls per step. The *plan* call judges whether working memory suffices
for the question and, if not, names sub-queries, each a local investigation
around one memory point or a global exploration beyond memory. The *evolve*
call turns what was retrieved into memory operations (insert / update / merge)
as a JSON object.

Replies are parsed strictly: prose or a code fence around the JSON object is
tolerated (models add them), but the object itself must have exactly the
documented shape, and every point id and entity it names must exist. A reply
that fails is sent back once with the reason; if the second reply fails too,
:class:`StepError` says why and the strategy ends the run with the memory it has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from engramdb.platform.llm import message_text, token_usage
from engramdb.retrieval.hypergraph.memory import Point, WorkingMemory

T = TypeVar("T")
PASSAGE_CHARS = 700  # passage text shown to the evolve call, per passage

PLAN_PROMPT = """You keep a working memory while answering one question from a knowledge graph built from documents.
The memory is a set of points. Each point has an id (P1, P2, ...), the entities it ties together (two or more)
and a description.

First decide whether the memory already holds everything needed to answer the question.
If it does not, say what is still missing as search requests, each of one of two kinds:
- "local": look closer around the entities of one memory point, for example to follow a relation onward from
  them; give that point's id in "point";
- "global": look for entities the memory does not hold yet, for a part of the question that no point covers.
Each "query" is a short search phrase that names the entities it is about. Use at most MAX_SUBQUERIES requests.

Reply with one JSON object and nothing else, either
{"sufficient": true}
or
{"sufficient": false, "subqueries": [{"mode": "local", "point": "P2", "query": "..."},
                                     {"mode": "global", "query": "..."}]}"""

EVOLVE_PROMPT = """You maintain a working memory for answering one question. The memory is a set of points. Each point
has an id (P1, P2, ...), the entities it ties together (two or more) and a description.
You get the question, the current memory, and what a search has just retrieved: entities, facts written as
question-answer pairs, and passages. Change the memory with these operations, applied in this order:
- "insert": add a point for retrieved information that matters for the question. Give it a new id ("P" and a
  number no point has used), the entities it involves (two or more, each by its exact name or its E-number from
  the lists given), and a description stating the facts plainly with full names.
- "update": rewrite the description of an existing point ("point": its id) when the new information corrects or
  completes it. Its entities stay the same.
- "merge": join two or more points (existing ones or ones inserted in this reply) that together form one line of
  reasoning toward the answer. The merged point involves all their entities, replaces them, and its description
  connects their facts.
Leave out whatever does not help to answer the question; if nothing new helps, return an empty list.

Reply with one JSON object and nothing else:
{"operations": [{"op": "insert", "id": "P4", "entities": ["...", "..."], "description": "..."},
                {"op": "update", "point": "P1", "description": "..."},
                {"op": "merge", "points": ["P1", "P4"], "description": "..."}]}"""


class MalformedReply(ValueError):
    """A reply that cannot be used: no JSON object, wrong shape, or unknown ids."""


class StepError(RuntimeError):
    """A step whose LLM reply was unusable twice; the message says why."""


# --------------------------------------------------------------------------- what the calls return


@dataclass(frozen=True)
class PlannedQuery:
    mode: str  # "local" | "global"
    text: str
    point: str | None = None


@dataclass(frozen=True)
class Plan:
    sufficient: bool
    subqueries: tuple[PlannedQuery, ...] = ()


@dataclass(frozen=True)
class InsertOp:
    label: str
    entity_ids: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class UpdateOp:
    label: str
    description: str


@dataclass(frozen=True)
class MergeOp:
    labels: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class Operations:
    inserts: tuple[InsertOp, ...] = ()
    updates: tuple[UpdateOp, ...] = ()
    merges: tuple[MergeOp, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.inserts or self.updates or self.merges)


@dataclass(frozen=True)
class RetrievedView:
    """What one sub-query retrieved, as the evolve call is shown it."""

    query: str
    mode: str
    point: str | None
    entities: Sequence[tuple[str, str, str]]  # (id, name, type)
    facts: Sequence[str]  # "question answer." sentences
    passages: Sequence[tuple[str, str]]  # (title, text)


# --------------------------------------------------------------------------- reply shapes (strict)

_Text = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SubQueryReply(_Strict):
    mode: Literal["local", "global"]
    query: _Text
    point: str | None = None


class _PlanReply(_Strict):
    sufficient: StrictBool
    subqueries: list[_SubQueryReply] = Field(default_factory=list)


class _InsertReply(_Strict):
    op: Literal["insert"]
    id: _Text
    entities: list[_Text]
    description: _Text


class _UpdateReply(_Strict):
    op: Literal["update"]
    point: _Text
    description: _Text


class _MergeReply(_Strict):
    op: Literal["merge"]
    points: list[_Text]
    description: _Text


class _EvolveReply(_Strict):
    operations: list[Annotated[_InsertReply | _UpdateReply | _MergeReply, Field(discriminator="op")]]


_LABEL = re.compile(r"^P[1-9][0-9]*$")


def json_object(text: str) -> dict:
    """The first JSON object in a reply, ignoring prose and code fences around it."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise MalformedReply("the reply holds no JSON object")


def _shape(model: type[BaseModel], data: dict) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise MalformedReply(f"the JSON object has the wrong shape ({problems})") from exc


def parse_plan(text: str, memory: WorkingMemory, max_subqueries: int) -> Plan:
    """A plan reply, checked against the active memory points."""
    reply = _shape(_PlanReply, json_object(text))
    assert isinstance(reply, _PlanReply)
    if reply.sufficient:
        if reply.subqueries:
            raise MalformedReply("a sufficient memory needs no subqueries; send one or the other")
        return Plan(True)
    if not reply.subqueries:
        raise MalformedReply("memory is not sufficient but no subqueries were given")
    if len(reply.subqueries) > max_subqueries:
        raise MalformedReply(
            f"{len(reply.subqueries)} subqueries given; at most {max_subqueries} are allowed"
        )
    out = []
    for i, sub in enumerate(reply.subqueries):
        if sub.mode == "local":
            if sub.point not in memory.points:
                raise MalformedReply(
                    f"subqueries[{i}]: a local request needs the id of a memory point, got {sub.point!r}"
                )
        elif sub.point is not None:
            raise MalformedReply(f"subqueries[{i}]: a global request has no point")
        out.append(PlannedQuery(sub.mode, sub.query.strip(), sub.point))
    return Plan(False, tuple(out))


class EntityCatalog:
    """Entities the evolve call may name: by handle (E3) or by exact name (case and spacing ignored)."""

    def __init__(self, entities: Sequence[tuple[str, str, str]]) -> None:
        self.handles: dict[str, str] = {}
        self.lines: list[str] = []
        self._by_name: dict[str, list[str]] = {}
        for entity_id, name, kind in entities:
            if entity_id in self.handles.values():
                continue
            handle = f"E{len(self.handles) + 1}"
            self.handles[handle] = entity_id
            self._by_name.setdefault(_norm(name), []).append(entity_id)
            self.lines.append(f"{handle} {name}" + (f" ({kind})" if kind else ""))

    def resolve(self, reference: str, where: str) -> str:
        ref = reference.strip()
        if ref.upper() in self.handles:
            return self.handles[ref.upper()]
        ids = list(dict.fromkeys(self._by_name.get(_norm(ref), [])))
        if len(ids) == 1:
            return ids[0]
        if ids:
            raise MalformedReply(f"{where}: {reference!r} names {len(ids)} entities; use its E-number")
        raise MalformedReply(f"{where}: unknown entity {reference!r}; name entities exactly as listed")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def parse_operations(text: str, memory: WorkingMemory, catalog: EntityCatalog) -> Operations:
    """An evolve reply, checked against memory (point ids) and the catalog (entities)."""
    reply = _shape(_EvolveReply, json_object(text))
    assert isinstance(reply, _EvolveReply)
    inserts: list[InsertOp] = []
    updates: list[UpdateOp] = []
    merges: list[MergeOp] = []
    new_labels: set[str] = set()
    updated: set[str] = set()
    for i, op in enumerate(reply.operations):
        where = f"operations[{i}] ({op.op})"
        if isinstance(op, _InsertReply):
            label = op.id.strip()
            if not _LABEL.match(label) or label in memory.used_labels or label in new_labels:
                raise MalformedReply(
                    f"{where}: id {label!r} must be a new point id (P and a number not used yet)"
                )
            entity_ids = tuple(dict.fromkeys(catalog.resolve(e, where) for e in op.entities))
            if len(entity_ids) < 2:
                raise MalformedReply(f"{where}: a point involves at least two distinct entities")
            new_labels.add(label)
            inserts.append(InsertOp(label, entity_ids, op.description.strip()))
        elif isinstance(op, _UpdateReply):
            if op.point not in memory.points:
                raise MalformedReply(f"{where}: no memory point {op.point!r} to update")
            if op.point in updated:
                raise MalformedReply(f"{where}: point {op.point} is updated twice")
            updated.add(op.point)
            updates.append(UpdateOp(op.point, op.description.strip()))
    merged: set[str] = set()
    for i, op in enumerate(reply.operations):
        if isinstance(op, _MergeReply):
            where = f"operations[{i}] (merge)"
            labels = tuple(dict.fromkeys(p.strip() for p in op.points))
            if len(labels) < 2:
                raise MalformedReply(f"{where}: a merge joins at least two distinct points")
            for label in labels:
                if label not in memory.points and label not in new_labels:
                    raise MalformedReply(f"{where}: no memory point {label!r} to merge")
                if label in merged:
                    raise MalformedReply(f"{where}: point {label} is merged twice")
            merged.update(labels)
            merges.append(MergeOp(labels, op.description.strip()))
    return Operations(tuple(inserts), tuple(updates), tuple(merges))


# --------------------------------------------------------------------------- the calls


class LLMSteps:
    """The plan and evolve calls of one strategy, with token counts across a run."""

    def __init__(self, model: BaseChatModel, max_subqueries: int) -> None:
        self.model = model
        self.max_subqueries = max_subqueries
        self.input_tokens = 0
        self.output_tokens = 0
        self.calls = 0

    def plan(self, question: str, memory: WorkingMemory, step: int, max_steps: int) -> Plan:
        system = PLAN_PROMPT.replace("MAX_SUBQUERIES", str(self.max_subqueries))
        user = f"Question: {question}\nStep {step + 1} of {max_steps}.\n\nMemory:\n{memory_text(memory)}"
        return self._call([SystemMessage(system), HumanMessage(user)],
                          lambda text: parse_plan(text, memory, self.max_subqueries), "plan")  # fmt: skip

    def evolve(self, question: str, memory: WorkingMemory, retrieved: Sequence[RetrievedView]) -> Operations:
        memory_entities = [(e, memory.names.get(e, e), "") for e in sorted(memory.entity_ids())]
        catalog = EntityCatalog([*(x for r in retrieved for x in r.entities), *memory_entities])
        user = "\n\n".join([
            f"Question: {question}", f"Memory:\n{memory_text(memory)}", "Entities:\n" + "\n".join(catalog.lines),
            *(_retrieved_text(r) for r in retrieved),
        ])  # fmt: skip
        return self._call([SystemMessage(EVOLVE_PROMPT), HumanMessage(user)],
                          lambda text: parse_operations(text, memory, catalog), "evolve")  # fmt: skip

    def _call(self, messages: list[BaseMessage], parse: Callable[[str], T], what: str) -> T:
        """Invoke and parse; a malformed reply goes back once with the reason, then StepError."""
        conversation = list(messages)
        result: T | None = None
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(2), retry=retry_if_exception_type(MalformedReply), reraise=True
            ):
                with attempt:
                    reply = self.model.invoke(conversation)
                    self.calls += 1
                    tokens = token_usage(reply, sum(len(message_text(m)) for m in conversation))  # type: ignore[arg-type]
                    self.input_tokens += tokens[0]
                    self.output_tokens += tokens[1]
                    text = message_text(reply)  # type: ignore[arg-type]
                    try:
                        result = parse(text)
                    except MalformedReply as exc:
                        conversation = [*messages, AIMessage(text), HumanMessage(
                            f"That reply could not be used: {exc}. Reply again with only the corrected JSON object."
                        )]  # fmt: skip
                        raise
        except MalformedReply as exc:
            raise StepError(f"{what} reply unusable after a retry: {exc}") from exc
        assert result is not None
        return result


def memory_text(memory: WorkingMemory) -> str:
    """The active points as the prompts show them."""
    points = sorted(memory.points.values(), key=lambda p: int(p.label[1:]))
    if not points:
        return "(empty)"
    return "\n".join(_point_text(p, memory) for p in points)


def _point_text(point: Point, memory: WorkingMemory) -> str:
    names = "; ".join(memory.names.get(e, e) for e in point.entity_ids)
    return f"{point.label} [{names}]: {point.description}"


def _retrieved_text(r: RetrievedView) -> str:
    about = f" around point {r.point}" if r.point else ""
    lines = [f"Search ({r.mode}{about}): {r.query}", "Facts:"]
    lines += [f"- {f}" for f in r.facts] or ["- (none)"]
    lines.append("Passages:")
    for title, text in r.passages:
        body = text if len(text) <= PASSAGE_CHARS else text[: PASSAGE_CHARS - 3] + "..."
        lines.append(f"- [{title}] {body}")
    if not r.passages:
        lines.append("- (none)")
    return "\n".join(lines)

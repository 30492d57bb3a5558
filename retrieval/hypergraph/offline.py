"""The offline (no LLM) steps of the ``hypergraph`` strategy: deterministic plan, evolve, merge, answer.

See :mod:`engramdb.retrieval.hypergraph.strategy` for what "relevant" means here (each
fact against its naming floor) and why the answer is the far end of the
chain of relevant facts.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from engramdb.retrieval.hypergraph.memory import Fact, Point, WorkingMemory
from engramdb.retrieval.hypergraph.retrieval import Retrieved, SubQuery
from engramdb.retrieval.rerankers import content_words
from engramdb.retrieval.results import NA


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
    question: str, memory: WorkingMemory, investigated: set[frozenset[str]], local_points: int,
    named_ids: Sequence[str] = (),
) -> tuple[bool, list[SubQuery]]:  # fmt: skip
    """Offline sufficiency and sub-queries.

    The open concern is the question's content words that no relevant point
    covers yet (in its description or its entities' names); none left means
    memory suffices. Otherwise the concern is looked for around each of the
    most relevant points not investigated yet (local) and beyond memory (global).

    Only points reached from what the question names count (:func:`reached_points`):
    for "When was the director of X born?", a point "Who directed X? Y" and a
    point "When was Z born?" about an unrelated Z cover every word together, yet
    memory holds no answer until Y's birth joins the first; the point about Z
    neither stops the run nor is investigated (the global look still goes beyond
    memory for what the reached points lack).
    """
    relevant = reached_points([p for p in memory.ranked() if p.relevant], named_ids)
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


def reached_points(points: Sequence[Point], named_ids: Sequence[str]) -> list[Point]:
    """The ``points`` joined to an entity in ``named_ids`` through shared entities, in their order;
    all of them when none is (nothing named, or memory holds nothing about it yet)."""
    reached = set(named_ids)
    joined: list[Point] = []
    left = list(points)
    grew = True
    while grew:
        grew = False
        for point in list(left):
            if reached & set(point.entity_ids):
                reached |= set(point.entity_ids)
                joined.append(point)
                left.remove(point)
                grew = True
    if not joined:
        return list(points)
    order = {p.label: i for i, p in enumerate(points)}
    return sorted(joined, key=lambda p: order[p.label])


def offline_answer(
    memory_points: Sequence[Point], named_ids: Sequence[str], typed: dict[str, float], hops: int = 0
) -> tuple[str, Fact | None]:
    """The answer entity at the far end of the relevant facts from what the question names, or N/A.

    Candidates are the answers of relevant facts (above their naming floor)
    in the evidence points, except entities the question names itself. They
    are ranked by how many facts separate them from a named entity (farther
    first: a multi-hop question asks for the end of its chain, and the
    relevance floor keeps the chain from running past it), then by ``typed``:
    each fact's reranker score against the question *with* its answer type,
    which prefers answers of the kind the question asks for.

    ``hops`` is how many steps the question's own decomposition takes. From two
    on, answers farther than that come last: a run that goes on looking fills
    memory with facts past the chain's end ("What rank did the father hold?" for
    the father's nationality), and the farthest of them is rarely what was asked.
    One step is no such bound, as a relation the rules do not split ("paternal
    grandfather") is one step to them and two in memory.
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
        past_chain = hops > 1 and distance.get(answer_id, 0) > hops
        return (answer_id not in distance, past_chain, -distance.get(answer_id, 0), -typed.get(fact.qa.qa_id, 0.0),
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

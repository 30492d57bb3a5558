"""The Generative Semantic Workspace (GSW) of one chunk, as validated models.

A GSW is what an extractor (offline rules or an LLM) produces for a chunk and
what the graph writers store. Ids inside a GSW are local to it (``e1``, ``v1``,
``q1``); writers turn them into global ids. Validation enforces the rules the
retrieval side relies on: every reference resolves, every QA pair has a
non-empty question naming its entities, and every entity is covered by at
least one QA pair (as a question entity or as an answer).
"""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Role(_Strict):
    """A role an entity plays in the chunk, with the states it is in there."""

    role: str = Field(min_length=1)
    states: list[str] = Field(default_factory=list)


class Entity(_Strict):
    """A person, place, organisation, date, number, work, ... named in the chunk."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    type: str = Field("THING", description="Coarse type: PERSON, ORG, PLACE, DATE, NUMBER, WORK, EVENT, THING, ...")
    roles: list[Role] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)

    @field_validator("type")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper() or "THING"


class VerbPhrase(_Strict):
    """An event or relation (``was born in``, ``directed``) that QA pairs hang off."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)


class QAPair(_Strict):
    """One directed question about a verb phrase and the entities that answer it.

    ``question_entity_ids`` are the entities the question names explicitly;
    ``answer_entity_ids`` are the answers. The reverse question of the same
    fact is a separate QAPair.
    """

    id: str = Field(min_length=1)
    verb_phrase_id: str = Field(min_length=1)
    question: str = Field(min_length=3)
    question_entity_ids: list[str] = Field(default_factory=list)
    answer_entity_ids: list[str] = Field(min_length=1)


class GSW(_Strict):
    """Entities, verb phrases and QA pairs of one chunk."""

    entities: list[Entity] = Field(default_factory=list)
    verb_phrases: list[VerbPhrase] = Field(default_factory=list)
    qa_pairs: list[QAPair] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_references(self) -> Self:
        entity_ids = _unique_ids("entity", [e.id for e in self.entities])
        vp_ids = _unique_ids("verb phrase", [v.id for v in self.verb_phrases])
        _unique_ids("QA pair", [q.id for q in self.qa_pairs])
        covered: set[str] = set()
        for qa in self.qa_pairs:
            if qa.verb_phrase_id not in vp_ids:
                raise ValueError(f"QA pair {qa.id!r} refers to unknown verb phrase {qa.verb_phrase_id!r}")
            for eid in [*qa.question_entity_ids, *qa.answer_entity_ids]:
                if eid not in entity_ids:
                    raise ValueError(f"QA pair {qa.id!r} refers to unknown entity {eid!r}")
            covered.update(qa.question_entity_ids)
            covered.update(qa.answer_entity_ids)
        uncovered = sorted(entity_ids - covered)
        if uncovered:
            raise ValueError(f"entities not covered by any QA pair: {', '.join(uncovered)}")
        return self

    def entity(self, entity_id: str) -> Entity:
        """The entity with this local id."""
        for e in self.entities:
            if e.id == entity_id:
                return e
        raise KeyError(entity_id)


def _unique_ids(kind: str, ids: list[str]) -> set[str]:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"duplicate {kind} id {i!r}")
        seen.add(i)
    return seen

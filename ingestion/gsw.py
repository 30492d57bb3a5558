"""The Generative Semantic Workspace (GSW) of one chunk, as validated models.

A GSW is what an extractor (offline rules or an LLM) produces for a chunk and
what the graph writers store. Ids inside a GSW are local to it (``e1``, ``v1``,
``q1``); writers turn them into global ids.

Two levels of checking:

* The model itself enforces *structure* — every reference resolves, ids are
  unique, every QA pair has a question and an answer, every entity is covered
  by a QA pair. A GSW that breaks these cannot be built.
* :func:`apply_rules` enforces the *content rules* the extraction prompt
  states and retrieval relies on: an answer is never the entity the question
  names (not even under another of its names), questions name their entities
  instead of saying "it" or "they", types come from :data:`ENTITY_TYPES`.
  Real models break these in a few pairs of an otherwise good reply, so the
  offending items are dropped and *recorded* in :attr:`GSW.dropped` (with the
  reason) instead of failing the whole chunk; the caller decides whether what
  is left is usable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engramdb.ingestion.reconcile import normalize_name

#: The types the extraction prompt allows (the offline rules add a few NER types of their own).
ENTITY_TYPES = ("PERSON", "ORG", "PLACE", "DATE", "NUMBER", "WORK", "EVENT", "THING")
#: Names models use for the allowed types (NER labels, spelled-out forms).
TYPE_SYNONYMS = {
    "ORGANIZATION": "ORG", "ORGANISATION": "ORG", "COMPANY": "ORG", "GROUP": "ORG", "BAND": "ORG",
    "LOCATION": "PLACE", "LOC": "PLACE", "GPE": "PLACE", "FAC": "PLACE", "FACILITY": "PLACE",
    "COUNTRY": "PLACE", "CITY": "PLACE", "REGION": "PLACE",
    "TIME": "DATE", "YEAR": "DATE", "PERIOD": "DATE",
    "QUANTITY": "NUMBER", "CARDINAL": "NUMBER", "ORDINAL": "NUMBER", "MONEY": "NUMBER", "PERCENT": "NUMBER",
    "WORK_OF_ART": "WORK", "FILM": "WORK", "SONG": "WORK", "ALBUM": "WORK", "BOOK": "WORK",
    "PEOPLE": "PERSON", "HUMAN": "PERSON", "CHARACTER": "PERSON",
}  # fmt: skip


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
    type: str = Field(
        "THING", description="Coarse type: PERSON, ORG, PLACE, DATE, NUMBER, WORK, EVENT, THING, ..."
    )
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


class Dropped(_Strict):
    """Something :func:`apply_rules` (or a reader) removed or changed, and why.

    ``kind`` is ``entity``, ``verb_phrase``, ``qa_pair``, ``answer`` (one answer
    id of a pair), ``type`` (a type replaced by an allowed one) or ``item`` (an
    unreadable item of a reply); ``id`` is the local id when there is one.
    """

    kind: Literal["entity", "verb_phrase", "qa_pair", "answer", "type", "item"]
    id: str = ""
    reason: str


class GSW(_Strict):
    """Entities, verb phrases and QA pairs of one chunk, with what was dropped on the way."""

    entities: list[Entity] = Field(default_factory=list)
    verb_phrases: list[VerbPhrase] = Field(default_factory=list)
    qa_pairs: list[QAPair] = Field(default_factory=list)
    dropped: list[Dropped] = Field(default_factory=list, description="Items removed by the content rules.")
    ignored_keys: dict[str, int] = Field(
        default_factory=dict, description="Keys of an LLM reply outside the schema, with how often each came."
    )

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


# --------------------------------------------------------------------------- identity


class Named(Protocol):
    """Anything with a name, aliases and a type (GSW entities, the offline rules' records)."""

    name: str
    type: str
    aliases: list[str]


N = TypeVar("N", bound=Named)
_Item = TypeVar("_Item", Entity, VerbPhrase, QAPair)


def name_keys(entity: Named) -> set[str]:
    """The normalised keys of an entity's name and aliases (the keys reconciliation joins on)."""
    return {k for k in map(normalize_name, [entity.name, *entity.aliases]) if k}


def compatible_types(a: str, b: str) -> bool:
    """Types that may describe one thing: equal, or one of them the catch-all THING."""
    return a == b or "THING" in (a, b)


def same_thing(a: Named, b: Named) -> bool:
    """Whether two entities are one thing under a shared name or alias (and compatible types).

    This is what reconciliation will do with them (one node), so a QA pair
    between them would answer a question with its own subject. Types keep a
    band and its namesake song apart.
    """
    return compatible_types(a.type, b.type) and bool(name_keys(a) & name_keys(b))


def self_answering(question_entities: Sequence[N], answer: Named) -> N | None:
    """The question entity that ``answer`` merely renames, or None."""
    return next((q for q in question_entities if q is answer or same_thing(q, answer)), None)


# Personal pronouns, and demonstratives unless they head a description ("those who voted").
_PRONOUN = re.compile(
    r"\b(he|she|it|they|him|them)\b|\b(this|these|those)\b(?!\s+(?:who|whom|which|that|whose)\b)",
    re.IGNORECASE,
)


def pronoun_in(question: str, names: Iterable[str]) -> str | None:
    """A pronoun standing in for an entity the question should have named, or None.

    The entities' own names are removed first, so a title such as "Let It Be"
    does not count.
    """
    text = question
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\"[^\"]*\"|“[^”]*”", " ", text)
    match = _PRONOUN.search(text)
    return match.group(0) if match else None


# --------------------------------------------------------------------------- the content rules


def apply_rules(
    entities: Sequence[Entity],
    verb_phrases: Sequence[VerbPhrase],
    qa_pairs: Sequence[QAPair],
    *,
    types: Sequence[str] | None = ENTITY_TYPES,
    dropped: Sequence[Dropped] = (),
    ignored_keys: dict[str, int] | None = None,
) -> GSW:
    """A valid GSW from possibly rule-breaking parts: offending items dropped and recorded.

    In order: types outside ``types`` are mapped (synonyms) or become THING;
    later items reusing an id are dropped; an entity whose name is another's
    alias is merged into it (union of roles, states, aliases); QA pairs with
    unknown references, pronoun questions or no answer left after removing
    self-answers are dropped; then entities and verb phrases no pair uses.
    ``dropped`` carries records from earlier steps (a reader's) forward.
    """
    log = list(dropped)
    ents = _first_of_each_id(entities, "entity", log)
    if types is not None:
        ents = [_allowed_type(e, types, log) for e in ents]
    ents, renamed = _merge_renamed(ents, log)
    vps = _first_of_each_id(verb_phrases, "verb_phrase", log)
    pairs = _first_of_each_id(qa_pairs, "qa_pair", log)
    by_id = {e.id: e for e in ents}
    vp_ids = {v.id for v in vps}
    kept = [qa for raw in pairs if (qa := _checked_pair(raw, by_id, vp_ids, renamed, log)) is not None]
    used = {eid for qa in kept for eid in [*qa.question_entity_ids, *qa.answer_entity_ids]}
    for e in ents:
        if e.id not in used:
            log.append(Dropped(kind="entity", id=e.id, reason=f"{e.name!r} is in no usable question"))
    used_vps = {qa.verb_phrase_id for qa in kept}
    for v in vps:
        if v.id not in used_vps:
            log.append(Dropped(kind="verb_phrase", id=v.id, reason=f"{v.text!r} has no usable question"))
    return GSW(
        entities=[e for e in ents if e.id in used], verb_phrases=[v for v in vps if v.id in used_vps],
        qa_pairs=kept, dropped=log, ignored_keys=dict(ignored_keys or {}),
    )  # fmt: skip


def _first_of_each_id(items: Sequence[_Item], kind: str, log: list[Dropped]) -> list[_Item]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.id in seen:
            log.append(
                Dropped(
                    kind=kind, id=item.id, reason=f"a second {kind.replace('_', ' ')} reuses id {item.id!r}"
                )
            )  # type: ignore[arg-type]
            continue
        seen.add(item.id)
        out.append(item)
    return out


def _allowed_type(entity: Entity, types: Sequence[str], log: list[Dropped]) -> Entity:
    if entity.type in types:
        return entity
    mapped = TYPE_SYNONYMS.get(entity.type.replace(" ", "_"))
    new_type = mapped if mapped in types else "THING"
    log.append(
        Dropped(kind="type", id=entity.id,
                reason=f"type {entity.type!r} of {entity.name!r} is not one of {', '.join(types)}; stored as {new_type}")
    )  # fmt: skip
    return entity.model_copy(update={"type": new_type})


def _merge_renamed(entities: list[Entity], log: list[Dropped]) -> tuple[list[Entity], dict[str, str]]:
    """Fold an entity whose name is another's alias into that one (the reply said they are one thing).

    Equal names alone do not merge: a passage may name a country and its
    capital alike, and they stay two entities here.
    """
    renamed: dict[str, str] = {}
    kept: list[Entity] = []
    for entity in entities:
        key = normalize_name(entity.name)
        target = next(
            (i for i, k in enumerate(kept)
             if compatible_types(k.type, entity.type)
             and (key in {normalize_name(a) for a in k.aliases}
                  or normalize_name(k.name) in {normalize_name(a) for a in entity.aliases})),
            None,
        )  # fmt: skip
        if target is None:
            kept.append(entity)
            continue
        host = kept[target]
        kept[target] = absorb(host, entity)
        renamed[entity.id] = host.id
        log.append(
            Dropped(kind="entity", id=entity.id,
                    reason=f"{entity.name!r} is another name of {host.id} {host.name!r}: merged into it")
        )  # fmt: skip
    return kept, renamed


def absorb(host: Entity, other: Entity) -> Entity:
    """``host`` with ``other``'s name, aliases, roles and states added (nothing of either is lost)."""
    roles: dict[str, list[str]] = {}
    for role in [*host.roles, *other.roles]:
        states = roles.setdefault(role.role, [])
        states.extend(s for s in role.states if s not in states)
    host_key = normalize_name(host.name)
    aliases: list[str] = []
    for alias in [*host.aliases, other.name, *other.aliases]:
        if normalize_name(alias) != host_key and alias not in aliases:
            aliases.append(alias)
    return host.model_copy(
        update={
            "type": other.type if host.type == "THING" else host.type,
            "roles": [Role(role=r, states=s) for r, s in roles.items()],
            "aliases": aliases,
        }
    )


def _checked_pair(
    qa: QAPair, entities: dict[str, Entity], vp_ids: set[str], renamed: dict[str, str], log: list[Dropped]
) -> QAPair | None:
    """The pair as it may be stored, or None (recorded) when no usable form of it is left."""

    def drop(reason: str) -> None:
        log.append(Dropped(kind="qa_pair", id=qa.id, reason=f"{qa.question!r}: {reason}"))

    if qa.verb_phrase_id not in vp_ids:
        drop(f"unknown verb phrase {qa.verb_phrase_id!r}")
        return None
    asked = list(dict.fromkeys(renamed.get(e, e) for e in qa.question_entity_ids))
    answers = list(dict.fromkeys(renamed.get(e, e) for e in qa.answer_entity_ids))
    unknown = [e for e in [*asked, *answers] if e not in entities]
    if unknown:
        drop(f"unknown entity id(s) {', '.join(unknown)}")
        return None
    named = [entities[e] for e in asked]
    pronoun = pronoun_in(qa.question, [n for e in named for n in (e.name, *e.aliases)])
    if pronoun:
        drop(f"uses {pronoun!r} instead of naming the entity")
        return None
    kept_answers: list[str] = []
    self_answers: list[str] = []
    for eid in answers:
        twin = self_answering(named, entities[eid])
        if twin is None:
            kept_answers.append(eid)
        else:
            self_answers.append(
                f"answer {eid} {entities[eid].name!r} is the question's own entity {twin.id} {twin.name!r}"
            )
    if not kept_answers:
        drop("self-answering: " + "; ".join(self_answers) if self_answers else "no answer")
        return None
    for reason in self_answers:
        log.append(Dropped(kind="answer", id=qa.id, reason=f"{qa.question!r}: self-answering: {reason}"))
    return qa.model_copy(update={"question_entity_ids": asked, "answer_entity_ids": kept_answers})


# --------------------------------------------------------------------------- merging split chunks


def merge_gsws(parts: Sequence[GSW], types: Sequence[str] | None = ENTITY_TYPES) -> GSW:
    """One GSW from the GSWs of a chunk's pieces (extracted separately when a reply was too long).

    Ids are renumbered; an entity met in several pieces under the same name
    and type (or one's name being the other's alias) becomes one entity with
    the union of its roles, states and aliases. Each piece's records are kept.
    """
    entities: list[Entity] = []
    verb_phrases: list[VerbPhrase] = []
    qa_pairs: list[QAPair] = []
    dropped: list[Dropped] = []
    ignored: dict[str, int] = {}
    for n, part in enumerate(parts, start=1):
        local: dict[str, str] = {}
        for e in part.entities:
            match = next((i for i, k in enumerate(entities) if _same_across_pieces(k, e)), None)
            if match is None:
                entities.append(e.model_copy(update={"id": f"e{len(entities) + 1}"}))
                local[e.id] = entities[-1].id
            else:
                entities[match] = absorb(entities[match], e)
                local[e.id] = entities[match].id
        vp_ids = {v.id: f"v{len(verb_phrases) + i + 1}" for i, v in enumerate(part.verb_phrases)}
        verb_phrases.extend(v.model_copy(update={"id": vp_ids[v.id]}) for v in part.verb_phrases)
        for qa in part.qa_pairs:
            qa_pairs.append(
                qa.model_copy(update={
                    "id": f"q{len(qa_pairs) + 1}", "verb_phrase_id": vp_ids[qa.verb_phrase_id],
                    "question_entity_ids": [local[e] for e in qa.question_entity_ids],
                    "answer_entity_ids": [local[e] for e in qa.answer_entity_ids],
                })
            )  # fmt: skip
        dropped.extend(d.model_copy(update={"reason": f"piece {n}: {d.reason}"}) for d in part.dropped)
        for key, count in part.ignored_keys.items():
            ignored[key] = ignored.get(key, 0) + count
    return apply_rules(entities, verb_phrases, qa_pairs, types=types, dropped=dropped, ignored_keys=ignored)


def _same_across_pieces(a: Entity, b: Entity) -> bool:
    if not compatible_types(a.type, b.type):
        return False
    key_a, key_b = normalize_name(a.name), normalize_name(b.name)
    return key_a == key_b or key_a in name_keys(b) or key_b in name_keys(a)
